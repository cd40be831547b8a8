import type pg from 'pg';
import { qualifiedName } from './identifiers.js';
import { LoadError } from './load-error.js';

/** A column an input record fills, as the catalog describes it. */
export interface TableColumn {
  readonly name: string;
  /** `format_type(atttypid, atttypmod)`: `character(25)`, `numeric(15,2)`, `integer[]`. */
  readonly type: string;
  /**
   * `format_type(atttypid, -1)`: the type without its modifier, spelled so a cast does not
   * imply one (`bpchar` and `"bit"`, where `character` and `bit` would mean length 1;
   * `numeric`, `character varying`). Parameters are cast to this, so the column's own
   * modifier is applied on assignment and a too-long value is an error, as in COPY,
   * rather than cut short by an explicit cast.
   */
  readonly baseType: string;
  /** The column holds arrays: `unnest` would flatten them, so they travel as text. */
  readonly isArray: boolean;
}

/**
 * The columns COPY without a column list fills, in order: every live column except
 * generated ones.
 */
export async function tableColumns(client: pg.Client, table: string, schema: string | undefined): Promise<TableColumn[]> {
  const name = qualifiedName(table, schema);
  const result = await client.query<{ name: string; type: string; base_type: string; is_array: boolean }>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, format_type(a.atttypid, -1) AS base_type,
            t.typcategory = 'A' AS is_array
       FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
      WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
      ORDER BY a.attnum`,
    [name],
  );
  if (result.rows.length === 0) throw new LoadError('missing-table', `table ${name} does not exist or has no columns`, { hint: 'create it first, or add --create' });
  return result.rows.map((r) => ({ name: r.name, type: r.type, baseType: r.base_type, isArray: r.is_array }));
}
