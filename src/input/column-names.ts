/**
 * Column names a DBA would type, made from the names a file shows (a header, JSON keys):
 * lower case, words joined by `_`, letters without their accents, no reserved word left
 * bare, unique, at most 63 bytes; `c1`…`cN` for columns the file does not name.
 */

/**
 * PostgreSQL's reserved key words and those that cannot be a column name unquoted
 * (`reserved` and `type_func_name` in src/include/parser/kwlist.h): such a name gets a
 * trailing `_`.
 */
const RESERVED = new Set(
  (
    'all analyse analyze and any array as asc asymmetric authorization binary both case cast check collate collation column ' +
    'concurrently constraint create cross current_catalog current_date current_role current_schema current_time current_timestamp ' +
    'current_user default deferrable desc distinct do else end except false fetch for foreign freeze from full grant group having ' +
    'ilike in initially inner intersect into is isnull join lateral leading left like limit localtime localtimestamp natural not ' +
    'notnull null offset on only or order outer overlaps placing primary references returning right select session_user similar ' +
    'some symmetric system_user table tablesample then to trailing true union unique user using variadic verbose when where window with'
  ).split(' '),
);

/** NAMEDATALEN - 1: PostgreSQL truncates a longer identifier. */
const MAX_BYTES = 63;

function truncate(name: string): string {
  while (Buffer.byteLength(name) > MAX_BYTES) name = name.slice(0, -1);
  return name;
}

/** One name as an identifier: `Order Date` → `order_date`, `customerID` → `customer_id`, `Prénom` → `prenom`, `2024 sales` → `c2024_sales`. */
export function identifierOf(name: string): string {
  let s = name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/([\p{Ll}0-9])(\p{Lu})/gu, '$1_$2')
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1_$2')
    .toLowerCase()
    .replace(/[^\p{L}0-9_]+/gu, '_')
    .replace(/_+/g, '_')
    .replace(/^_|_$/g, '');
  if (s === '') return '';
  if (/^[0-9]/.test(s)) s = `c${s}`;
  if (RESERVED.has(s)) s = `${s}_`;
  return truncate(s);
}

/** The columns' identifiers: each name's (or `cN` for an empty one), made unique with `_2`, `_3`… */
export function columnIdentifiers(names: readonly string[]): string[] {
  const used = new Set<string>();
  return names.map((name, i) => {
    const base = identifierOf(name) || `c${i + 1}`;
    let id = base;
    for (let k = 2; used.has(id); k++) id = truncate(base.slice(0, MAX_BYTES - String(k).length - 1)) + `_${k}`;
    used.add(id);
    return id;
  });
}

/** `c1`…`cN`, for a file that names no column. */
export function numberedColumns(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `c${i + 1}`);
}
