import type pg from 'pg';
import { qualifiedName } from './identifiers.js';
import { LoadError } from './load-error.js';

/** How a JSON value (or a Parquet field) goes into a column: as JSON text, as an array, or as a scalar's text. */
export type ColumnKind = 'json' | 'array' | 'scalar';

/**
 * A live column of a table (not dropped; generated ones included, marked), as the catalog
 * describes it: what the column plan, the checks, INSERT, the binary wire and Citus
 * routing each need of it.
 */
export interface TableColumn {
  readonly attnum: number;
  readonly name: string;
  /** `format_type(atttypid, atttypmod)`: `character(25)`, `numeric(15,2)`, `integer[]`, a domain's name. */
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
  readonly notNull: boolean;
  /** A DEFAULT expression (generated columns have one too). */
  readonly hasDefault: boolean;
  /** GENERATED … AS IDENTITY. */
  readonly identity: boolean;
  /** GENERATED ALWAYS AS IDENTITY: no UPDATE can set it (an INSERT with OVERRIDING SYSTEM VALUE can). */
  readonly identityAlways: boolean;
  /** GENERATED ALWAYS AS … columns take no input: COPY without a column list leaves them out. */
  readonly generated: boolean;
  /**
   * For the JSON and Parquet plans, the declared type, or for a domain the type it is
   * declared over (one step): `json` when that is json or jsonb, `array` for an array.
   */
  readonly kind: ColumnKind;
  /** An array whose elements are json or jsonb. */
  readonly elementJson: boolean;
  /** `pg_type.typname` of that type, or of an array's element: `int4`, `bytea`, `_int4` → `int4`. */
  readonly typname: string;
  /** `pg_type.typcategory` of that type, or of an array's element: N numeric, S string, D date/time, B boolean, U user (bytea, uuid)… */
  readonly category: string;
  /**
   * The type under every domain (through domains over domains) and the typmod that
   * applies (the innermost domain's own, else the column's): what the binary wire encodes.
   */
  readonly storage: { readonly oid: number; readonly typname: string; readonly typmod: number };
}

/** Tables' columns read once for several readers of one load: keyed by the table's qualified name. */
export type TableColumnCache = Map<string, Promise<readonly TableColumn[]>>;

interface ColumnRow {
  attnum: number;
  name: string;
  type: string;
  unmodified: string;
  is_array: boolean;
  not_null: boolean;
  has_default: boolean;
  identity: boolean;
  identity_always: boolean;
  generated: boolean;
  over_typname: string;
  over_category: string;
  element_typname: string | null;
  element_category: string | null;
  storage_oid: string;
  storage_typname: string;
  storage_typmod: number;
}

const COLUMNS_SQL = `WITH RECURSIVE chain AS (
       SELECT a.attnum, a.atttypid AS typid, a.atttypmod AS typmod, 0 AS depth
         FROM pg_attribute a
        WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped
       UNION ALL
       SELECT c.attnum, t.typbasetype, CASE WHEN t.typtypmod <> -1 THEN t.typtypmod ELSE c.typmod END, c.depth + 1
         FROM chain c JOIN pg_type t ON t.oid = c.typid
        WHERE t.typtype = 'd'
     ), storage AS (
       SELECT DISTINCT ON (attnum) attnum, typid, typmod FROM chain ORDER BY attnum, depth DESC
     )
     SELECT a.attnum::int AS attnum, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, format_type(a.atttypid, -1) AS unmodified,
            t.typcategory = 'A' AS is_array, a.attnotnull AS not_null, a.atthasdef AS has_default, a.attidentity <> '' AS identity, a.attidentity = 'a' AS identity_always,
            a.attgenerated <> '' AS generated, ot.typname AS over_typname, ot.typcategory AS over_category,
            et.typname AS element_typname, et.typcategory AS element_category,
            s.typid::int8 AS storage_oid, st.typname AS storage_typname, s.typmod AS storage_typmod
       FROM pg_attribute a
       JOIN pg_type t ON t.oid = a.atttypid
       JOIN pg_type ot ON ot.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
       LEFT JOIN pg_type et ON et.oid = ot.typelem AND ot.typcategory = 'A'
       JOIN storage s ON s.attnum = a.attnum
       JOIN pg_type st ON st.oid = s.typid
      WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attnum`;

const isJson = (typname: string | null): boolean => typname === 'json' || typname === 'jsonb';

function columnOf(r: ColumnRow): TableColumn {
  return {
    attnum: r.attnum,
    name: r.name,
    type: r.type,
    baseType: r.unmodified,
    isArray: r.is_array,
    notNull: r.not_null,
    hasDefault: r.has_default,
    identity: r.identity,
    identityAlways: r.identity_always,
    generated: r.generated,
    kind: isJson(r.over_typname) ? 'json' : r.over_category === 'A' ? 'array' : 'scalar',
    elementJson: isJson(r.element_typname),
    typname: r.element_typname ?? r.over_typname,
    category: r.element_category ?? r.over_category,
    storage: { oid: Number(r.storage_oid), typname: r.storage_typname, typmod: Number(r.storage_typmod) },
  };
}

/**
 * Every live column of a table (none when it does not exist), in order: one catalog query
 * per table, or none when `cache` holds it already.
 */
export function readTableColumns(client: pg.Client, table: string, schema: string | undefined, cache?: TableColumnCache): Promise<readonly TableColumn[]> {
  const name = qualifiedName(table, schema);
  const known = cache?.get(name);
  if (known !== undefined) return known;
  const read = client.query<ColumnRow>(COLUMNS_SQL, [name]).then((r) => r.rows.map(columnOf));
  cache?.set(name, read);
  return read;
}

/** The columns COPY without a column list fills, in order: every live column except generated ones. */
export function copyColumns(columns: readonly TableColumn[]): readonly TableColumn[] {
  return columns.filter((c) => !c.generated);
}

/** The columns COPY without a column list fills (`copyColumns`); a table that does not exist or has none is an error. */
export async function tableColumns(client: pg.Client, table: string, schema: string | undefined): Promise<readonly TableColumn[]> {
  const columns = copyColumns(await readTableColumns(client, table, schema));
  if (columns.length === 0) throw new LoadError('missing-table', `table ${qualifiedName(table, schema)} does not exist or has no columns`, { hint: 'create it first, or add --create' });
  return columns;
}
