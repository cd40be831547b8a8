import type { ColumnType } from './field-encoder.js';

/**
 * `--wire auto`'s rule, in one place with the numbers behind it (docs/binary-wire.md,
 * "The auto rule"). Binary saves the server the parsing of typed values (int4in,
 * numeric_in, date_in…) and costs pgsurge their encoding; a string column costs the
 * server about as much either way (its bytes are copied) and the client a length prefix
 * plus a copy. So what binary wins grows with the share of typed columns.
 */

/** Types whose text input is their value: the server's text path only copies them, so binary saves it little. */
const STRING_TYPES = new Set(['text', 'varchar', 'bpchar', 'name', 'json', 'bytea']);

/** Binary when at least this share of the columns is typed (measured: see the doc). */
export const AUTO_MIN_TYPED_SHARE = 0.5;

export function autoPicksBinary(columns: readonly ColumnType[]): { binary: boolean; why: string } {
  const typed = columns.filter((c) => !STRING_TYPES.has(c.typname)).length;
  const share = columns.length === 0 ? 0 : typed / columns.length;
  const pct = `${Math.round(share * 100)}%`;
  return share >= AUTO_MIN_TYPED_SHARE
    ? { binary: true, why: `${typed} of ${columns.length} columns (${pct}) are typed` }
    : { binary: false, why: `only ${typed} of ${columns.length} columns (${pct}) are typed; binary measured no faster below ${Math.round(AUTO_MIN_TYPED_SHARE * 100)}%` };
}
