import type { LoadTarget } from '../core/chunk.js';
import { readHeaderNames } from './header.js';
import { qualifiedName } from '../core/identifiers.js';
import { LoadError } from '../core/load-error.js';
import { copyColumns, type TableColumn } from '../core/table-columns.js';

/** The columns named for an input: by its header (`--header match`, the file's first line read now), by `--columns`, or none. */
export async function namedColumns(target: LoadTarget): Promise<{ named: readonly string[] | undefined; source: string }> {
  const options = target.input ?? {};
  if (options.header === 'match') return { named: await readHeaderNames(target), source: `the header of ${target.file}` };
  return { named: options.columns, source: '--columns' };
}

/**
 * The columns one input's records fill, in which order (COPY's column list), checked
 * against the table's columns read from the catalog before the load. `named` are the
 * columns the user gave (`--columns`) or the header named (`--header match`), else all the
 * table's columns that take input; `source` says which, for the message when one does not exist.
 */
export function chooseColumns(target: LoadTarget, table: readonly TableColumn[], named: readonly string[] | undefined, source: string): readonly TableColumn[] {
  const byName = new Map(table.map((c) => [c.name, c]));
  const tableName = qualifiedName(target.table, target.schema);
  let chosen: readonly TableColumn[];
  if (named !== undefined) {
    const seen = new Set<string>();
    chosen = named.map((name) => {
      const c = byName.get(name);
      const list = table.filter((t) => !t.generated).map((t) => t.name).join(', ');
      if (c === undefined) {
        throw new LoadError(source === '--columns' ? 'bad-option' : 'bad-input', `${source} names column ${JSON.stringify(name)}, which table ${tableName} does not have`, {
          hint: `the table's columns are: ${list}`,
        });
      }
      if (c.generated) throw new LoadError('bad-option', `${source} names column ${JSON.stringify(name)}, which is generated and takes no input`);
      if (seen.has(name)) throw new LoadError('bad-option', `${source} names column ${JSON.stringify(name)} twice`);
      seen.add(name);
      return c;
    });
  } else {
    chosen = copyColumns(table);
  }
  return chosen;
}
