import type { LoadTarget } from '../core/chunk.js';
import { splitQualifiedName } from '../core/identifiers.js';
import { LoadError } from '../core/load-error.js';
import { inputOptionsFor, type InputFlags } from './input-flags.js';
import { formatFromFileName, tableFromFileName, FORMATS, type Format } from '../input/formats.js';

/**
 * `-t schema.table` (psql's rules: `public.lineitem`, `'"My Schema"."Line Item"'`) with
 * `--schema`: a schema in both must agree.
 */
export function tableFlag(flag: string, table: string | undefined, schema: string | undefined): { table?: string; schema?: string } {
  if (table === undefined) return schema === undefined ? {} : { schema };
  let named: { schema?: string; table: string };
  try {
    named = splitQualifiedName(table);
  } catch (error) {
    throw new LoadError('bad-option', `${flag} ${JSON.stringify(table)}: ${(error as Error).message}`, {
      hint: 'write table or schema.table; double-quote a name with upper case, blanks or dots: -t \'"My Schema"."Line Item"\'',
    });
  }
  if (named.schema !== undefined && schema !== undefined && named.schema !== schema) {
    throw new LoadError('bad-option', `${flag} ${JSON.stringify(table)} names schema "${named.schema}" but --schema is "${schema}"`, { hint: 'give the schema once' });
  }
  const s = named.schema ?? schema;
  return s === undefined ? { table: named.table } : { table: named.table, schema: s };
}

/** Files on the command line → load targets, with format and table inferred from the names. */
export function planInputs(files: readonly string[], flags: { format?: Format; table?: string; schema?: string; input?: InputFlags }): LoadTarget[] {
  if (files.filter((f) => f === '-').length > 1) throw new LoadError('bad-option', 'stdin (`-`) can be named only once');
  const options = { ...flags, ...tableFlag('-t', flags.table, flags.schema) };
  return files.map((file) => {
    const stdin = file === '-';
    const format = options.format ?? (stdin ? undefined : formatFromFileName(file));
    if (format === undefined) {
      throw new LoadError('bad-option', `cannot tell the format of ${stdin ? 'stdin' : file} from its name`, {
        hint: `pass -f ${FORMATS.filter((f) => !stdin || f !== 'parquet').join('|')}`,
      });
    }
    if (format === 'parquet' && stdin) {
      throw new LoadError('bad-option', 'a Parquet input cannot be read from stdin: its footer, at the end, says where every row group is', { hint: 'save it to a file and name the file' });
    }
    const table = options.table ?? (stdin ? undefined : tableFromFileName(file));
    if (table === undefined) {
      throw new LoadError('bad-option', `cannot tell the table for ${stdin ? 'stdin' : file} from its name`, { hint: 'pass -t <table>' });
    }
    if (options.input === undefined) return { file, format, table, schema: options.schema };
    return { file, format, table, schema: options.schema, input: inputOptionsFor(format, options.input) };
  });
}
