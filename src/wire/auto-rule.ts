import type { ColumnType } from './field-encoder.js';

/**
 * `--wire auto`'s rule, in one place with the numbers behind it (docs/binary-wire.md,
 * "The auto rule"; bench/wire-shapes.ts and bench/wire.ts measure them).
 *
 * Binary saves the server the parsing of values whose input function does real work
 * (numeric_in, date_in, timestamp_in, float8in) and costs pgsurge their encoding plus a
 * length prefix and a copy for every other field. Measured on 2 shared cores (PostgreSQL
 * 15, lineitem): the server spent ~0.95 µs/row less (4.0 → 3.1), pgsurge ~1.1 µs/row
 * more (2.1 → 3.2): no gain in total, and with -w2 the client's single thread lost
 * outright (57k → 38k rows/s). Narrow rows (bigint, integer, text) saved the server
 * nothing measurable (int4in and int8in are cheap) and cost the client ~1.2 µs/row.
 *
 * So: binary only when the server runs on another machine (its CPU is then the scarce
 * one, and pgsurge's does not compete with it) and at least a quarter of the columns are
 * of a type whose parsing the server is spared.
 */

/** Types whose text input function costs the server enough that binary measurably spares it. */
const COSTLY_TO_PARSE = new Set(['numeric', 'date', 'timestamp', 'timestamptz', 'time', 'timetz', 'interval', 'float4', 'float8']);

/** Binary when at least this share of the columns is costly to parse (lineitem: 7 of 16). */
export const AUTO_MIN_COSTLY_SHARE = 0.25;

export function autoPicksBinary(columns: readonly ColumnType[], serverIsLocal: boolean): { binary: boolean; why: string } {
  const costly = columns.filter((c) => COSTLY_TO_PARSE.has(c.typname)).length;
  const share = columns.length === 0 ? 0 : costly / columns.length;
  const what = `${costly} of ${columns.length} columns (${Math.round(share * 100)}%) are numeric, date/time or float`;
  if (serverIsLocal) return { binary: false, why: `the server runs on this machine, where the encoding's client CPU costs as much as it spares the server (${what}); --wire binary to use it anyway` };
  return share >= AUTO_MIN_COSTLY_SHARE
    ? { binary: true, why: what }
    : { binary: false, why: `only ${what}; binary measured no faster below ${Math.round(AUTO_MIN_COSTLY_SHARE * 100)}%` };
}

/** A Unix socket, or a loopback address: the server shares this machine's cores. */
export function isLocalHost(host: string | undefined): boolean {
  return host === undefined || host === '' || host.startsWith('/') || host === 'localhost' || /^127\./.test(host) || host === '::1';
}
