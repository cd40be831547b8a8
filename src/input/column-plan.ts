import type { LoadTarget } from '../core/chunk.js';
import { isJsonFormat } from './formats.js';
import type { JsonColumn } from './json/json-record.js';
import { qualifiedName } from '../core/identifiers.js';
import { LoadError } from '../core/load-error.js';
import { copyColumns, type TableColumn } from '../core/table-columns.js';

/**
 * The column plan of one input, read from the catalog once before the load: which
 * columns its records fill, in which order (COPY's column list), and for JSON how each
 * takes a value. `named` are the columns the user gave (`--columns`) or the header named
 * (`--header match`); `source` says which, for the message when one does not exist.
 */
export function planColumns(target: LoadTarget, table: readonly TableColumn[], named: readonly string[] | undefined, source: string): LoadTarget {
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
  if (!isJsonFormat(target.format)) return named === undefined ? target : { ...target, columns: chosen.map((c) => c.name) };
  const jsonColumns: JsonColumn[] = chosen.map((c) => ({ name: c.name, kind: c.kind, elementJson: c.elementJson }));
  return { ...target, columns: chosen.map((c) => c.name), jsonColumns };
}
