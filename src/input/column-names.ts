import { isReservedWord } from '../core/identifiers.js';

/**
 * Column names a DBA would type, made from the names a file shows (a header, JSON keys):
 * lower case, words joined by `_`, letters without their accents, no reserved word left
 * bare, unique, at most 63 bytes; `c1`…`cN` for columns the file does not name.
 */

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
  // a reserved word (src/include/parser/kwlist.h's `reserved` and `type_func_name`) gets a trailing `_`
  if (isReservedWord(s)) s = `${s}_`;
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
