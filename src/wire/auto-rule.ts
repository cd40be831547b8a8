import os from 'node:os';
import type { ColumnType } from '../codecs/field-encoder.js';

/**
 * `--wire auto`'s rule, in one place with the numbers behind it (docs/binary-wire.md,
 * "The auto rule"; bench/wire.ts, bench/wire-shapes.ts and bench/wire-encode.ts measure
 * them).
 *
 * Binary saves the server the parsing of values whose input function does real work
 * (numeric_in, date_in, timestamp_in, float8in) and costs pgsurge their encoding plus a
 * length prefix for every other field, on its one event loop. Narrow rows (bigint,
 * integer, text) save the server nothing measurable (int4in and int8in are cheap), so
 * binary needs at least a quarter of the columns to be of a type the server is spared.
 *
 * Where the server runs matters because of whose CPU the encoding takes:
 * - on another machine, pgsurge's CPU does not compete with the server's: binary;
 * - on this machine, binary wins while the workers are no more than the cores: SF 1
 *   lineitem, PostgreSQL 15, 2 cores, -w1: binary 1.23–1.44× psql's rows/s, text
 *   0.93–0.97×; -w2 (the encoding's client CPU now competes with both backends): binary
 *   ahead of text in all eight rounds of two SF 1 runs (1.05–1.32×; with the WebAssembly
 *   records: 1.06, 1.05, 1.06, 1.15, 1.06; bench/results/wire.md). An encoder as slow as
 *   the first JavaScript one lost at -w2 (0.75× psql against text's 0.86×). More workers than
 *   cores is not measured: text. An unknown worker count counts as "as many as cores".
 */

/** Types whose text input function costs the server enough that binary measurably spares it. */
const COSTLY_TO_PARSE = new Set(['numeric', 'date', 'timestamp', 'timestamptz', 'time', 'timetz', 'interval', 'float4', 'float8']);

/** Binary when at least this share of the columns is costly to parse (lineitem: 7 of 16). */
export const AUTO_MIN_COSTLY_SHARE = 0.25;

/** Where the load runs: `workers`, the load's connections (undefined: unknown); `cores`, this machine's (default: availableParallelism). */
export interface AutoContext {
  readonly serverIsLocal: boolean;
  readonly workers?: number | undefined;
  readonly cores?: number;
}

export function autoPicksBinary(columns: readonly ColumnType[], context: AutoContext): { binary: boolean; why: string } {
  const costly = columns.filter((c) => COSTLY_TO_PARSE.has(c.typname)).length;
  const share = columns.length === 0 ? 0 : costly / columns.length;
  const what = `${costly} of ${columns.length} columns (${Math.round(share * 100)}%) are of a type whose text the server parses slowly (numeric, date/time, interval or float; integers and text are cheap)`;
  if (share < AUTO_MIN_COSTLY_SHARE) return { binary: false, why: `only ${what}; binary measured no faster below ${Math.round(AUTO_MIN_COSTLY_SHARE * 100)}%` };
  if (!context.serverIsLocal) return { binary: true, why: what };
  const cores = context.cores ?? os.availableParallelism();
  const { workers } = context;
  if (workers === undefined || workers <= cores) {
    const many = workers === undefined ? 'an unknown number of workers (counted as many as the cores)' : `${workers} worker${workers === 1 ? '' : 's'} on ${cores} cores`;
    return { binary: true, why: `${what}; the server runs on this machine, with ${many}: binary measured faster there` };
  }
  return { binary: false, why: `the server runs on this machine, with ${workers} workers on ${cores} cores: more backends than cores, where binary is not measured (${what}); --wire binary to use it anyway` };
}

/** A Unix socket, or a loopback address: the server shares this machine's cores. */
export function isLocalHost(host: string | undefined): boolean {
  return host === undefined || host === '' || host.startsWith('/') || host === 'localhost' || /^127\./.test(host) || host === '::1';
}
