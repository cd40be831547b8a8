/**
 * The narrow-row table: the classic case where insert throughput collapses once the
 * unique index outgrows memory. About 45 bytes a row in COPY text format:
 *
 * - `id bigint`: the unique key, 1..n, sequential or a random permutation;
 * - `val integer`: uniform in [0, 2147483647];
 * - `note text`: 20 to 28 random lowercase letters (24 on average).
 */
import { qualifiedName, quoteIdent } from '../core/identifiers.js';

export const NARROW_TABLE = 'narrow';

export const NARROW_COLUMNS: readonly (readonly [string, string])[] = [
  ['id', 'bigint'],
  ['val', 'integer'],
  ['note', 'text'],
];

/** For `KNOWN_TABLE_COLUMNS`: the narrow table under its default name. */
export const NARROW_TABLE_COLUMNS: Record<string, readonly (readonly [string, string])[]> = {
  [NARROW_TABLE]: NARROW_COLUMNS,
};

/** The primary key on `id` (its unique index is what makes inserts slow down as the table grows). */
export function narrowPrimaryKeySql(table: string = NARROW_TABLE, schema?: string): string {
  return `ALTER TABLE ${qualifiedName(table, schema)} ADD CONSTRAINT ${quoteIdent(`${table}_pkey`)} PRIMARY KEY (${quoteIdent('id')})`;
}
