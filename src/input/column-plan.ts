import type pg from 'pg';
import type { LoadTarget } from '../core/chunk.js';
import { isJsonFormat } from './formats.js';
import type { JsonColumn, JsonColumnKind } from './json/json-record.js';
import { qualifiedName } from '../core/identifiers.js';
import { LoadError } from '../core/load-error.js';

/** A column of the target table, as the catalog describes it. */
export interface TableColumn {
  readonly name: string;
  /** `format_type()`: `numeric(15,2)`, `integer[]`, `jsonb`. */
  readonly type: string;
  readonly kind: JsonColumnKind;
  readonly elementJson: boolean;
  /** `pg_type.typname` of the (base) type, and of an array's element: `int4`, `bytea`, `_int4` → `int4`. */
  readonly typname?: string;
  /** `pg_type.typcategory` of the (base) type, of an array's element for an array: N numeric, S string, D date/time, B boolean, U user (bytea, uuid)… */
  readonly category?: string;
  readonly hasDefault: boolean;
  /** GENERATED ALWAYS AS … columns take no input. */
  readonly generated: boolean;
}

export async function readTableColumns(client: pg.Client, table: string, schema: string | undefined): Promise<TableColumn[]> {
  const r = await client.query<{ name: string; type: string; generated: boolean; has_default: boolean; base: string; category: string; element: string | null; element_category: string | null }>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attgenerated <> '' AS generated,
            a.atthasdef AS has_default, bt.typname AS base, bt.typcategory AS category, et.typname AS element, et.typcategory AS element_category
       FROM pg_attribute a
       JOIN pg_type t ON t.oid = a.atttypid
       JOIN pg_type bt ON bt.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
       LEFT JOIN pg_type et ON et.oid = bt.typelem AND bt.typcategory = 'A'
      WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attnum`,
    [qualifiedName(table, schema)],
  );
  const json = (t: string | null): boolean => t === 'json' || t === 'jsonb';
  return r.rows.map((c) => ({
    name: c.name,
    type: c.type,
    kind: json(c.base) ? 'json' : c.category === 'A' ? 'array' : 'scalar',
    elementJson: json(c.element),
    typname: c.element ?? c.base,
    category: c.element_category ?? c.category,
    hasDefault: c.has_default,
    generated: c.generated,
  }));
}

/**
 * The column plan of one input, read from the catalog once before the load: which
 * columns its records fill, in which order (COPY's column list), and for JSON how each
 * takes a value. `named` are the columns the user gave (`--columns`) or the header named
 * (`--header match`); `source` says which, for the message when one does not exist.
 */
export function planColumns(target: LoadTarget, table: readonly TableColumn[], named: readonly string[] | undefined, source: string): LoadTarget {
  const byName = new Map(table.map((c) => [c.name, c]));
  const tableName = qualifiedName(target.table, target.schema);
  let chosen: TableColumn[];
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
    chosen = table.filter((c) => !c.generated);
  }
  if (!isJsonFormat(target.format)) return named === undefined ? target : { ...target, columns: chosen.map((c) => c.name) };
  const jsonColumns: JsonColumn[] = chosen.map((c) => ({ name: c.name, kind: c.kind, elementJson: c.elementJson }));
  return { ...target, columns: chosen.map((c) => c.name), jsonColumns };
}
