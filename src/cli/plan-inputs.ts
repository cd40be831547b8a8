import type { LoadTarget } from '../batching/chunk.js';
import { LoadError } from '../db/load-error.js';
import { inputOptionsFor, type InputFlags } from './input-flags.js';
import { formatFromFileName, tableFromFileName, FORMATS, type Format } from '../framing/formats.js';

/** Files on the command line → load targets, with format and table inferred from the names. */
export function planInputs(files: readonly string[], options: { format?: Format; table?: string; schema?: string; input?: InputFlags }): LoadTarget[] {
  if (files.filter((f) => f === '-').length > 1) throw new LoadError('bad-option', 'stdin (`-`) can be named only once');
  return files.map((file) => {
    const stdin = file === '-';
    const format = options.format ?? (stdin ? undefined : formatFromFileName(file));
    if (format === undefined) {
      throw new LoadError('bad-option', `cannot tell the format of ${stdin ? 'stdin' : file} from its name`, {
        hint: `pass -f ${FORMATS.join('|')}`,
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
