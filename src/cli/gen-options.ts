/**
 * The options of `pgsurge dbt3 gen` and `pgsurge gen narrow`, parsed from commander's raw
 * strings and validated once, with messages that name the flag and the bad value.
 */
import { LoadError } from '../core/load-error.js';
import { DBT3_TABLES, isDbt3Table, type Dbt3Table } from '../datasets/dbt3-schema.js';
import { DEFAULT_SEED } from '../datasets/dbt3/context.js';
import { partsuppKeysUnique, dbt3Counts } from '../datasets/dbt3/scale.js';
import { DBT3_GEN_FORMATS, DEFAULT_ROW_GROUP_ROWS, PARQUET_COMPRESSIONS, type Dbt3GenFormat, type ParquetCompression } from '../datasets/dbt3/gen-formats.js';
import { DEFAULT_NARROW_SEED } from '../datasets/narrow/generate.js';
import { NARROW_FORMATS, NARROW_KEY_ORDERS, type NarrowFormat, type NarrowKeyOrder } from '../datasets/narrow/narrow-rows.js';

/** What commander hands the action: every value as given on the command line. */
export interface RawDbt3GenOptions {
  scale?: string;
  out?: string;
  seed?: string;
  tables?: string;
  parts?: string;
  part?: string;
  workers?: string;
  format?: string;
  compression?: string;
  rowGroupSize?: string;
  refresh?: string;
}

export interface Dbt3GenCliOptions {
  readonly scale: number;
  readonly out: string;
  readonly seed: number;
  readonly tables: readonly Dbt3Table[];
  readonly parts: number;
  readonly part: number;
  readonly workers: number | undefined;
  readonly format: Dbt3GenFormat;
  /** Parquet only (refused with `--format tbl`). */
  readonly compression: ParquetCompression;
  readonly rowGroupRows: number;
  /** Refresh sets 1..n to write (`dbgen -U n`); 0: none. */
  readonly refresh: number;
}

export interface RawNarrowOptions {
  rows?: string;
  out?: string;
  keys?: string;
  seed?: string;
  format?: string;
}

export interface NarrowCliOptions {
  readonly rows: number;
  readonly out: string;
  readonly keys: NarrowKeyOrder;
  readonly seed: number;
  readonly format: NarrowFormat;
}

function shown(value: string | undefined): string {
  return value === undefined ? 'nothing' : `\`${value}\``;
}

/** A usage error: the command line is wrong and nothing was written (exit 2). */
function fail(flag: string, expected: string, value: string | undefined): never {
  throw new LoadError('bad-option', `Expected \`${flag}\` to be ${expected}, got ${shown(value)}`);
}

/** Whole numbers, with `_` or `,` between digit groups allowed (100_000_000) or in e-notation (1e8). */
export function parseWholeNumber(flag: string, value: string | undefined, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const expected = max === Number.MAX_SAFE_INTEGER ? `a whole number from ${min} up` : `a whole number from ${min} to ${max}`;
  if (value === undefined) fail(flag, expected, value);
  const text = value.trim().replace(/[_,]/g, '');
  if (!/^\d+(\.\d+)?(e\d+)?$/i.test(text)) fail(flag, expected, value);
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < min || n > max) fail(flag, expected, value);
  return n;
}

export function parseScale(value: string | undefined): number {
  const expected = 'a number greater than 0';
  if (value === undefined || !/^\s*(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?\s*$/i.test(value)) fail('--scale', expected, value);
  const scale = Number(value);
  if (!Number.isFinite(scale) || scale <= 0) fail('--scale', expected, value);
  if (!partsuppKeysUnique(dbt3Counts(scale))) {
    fail('--scale', 'a scale factor whose supplier count gives every part four distinct suppliers (0.01, 0.1, 1 and the spec\'s scale factors do; 0.001 and 0.015 do not)', value);
  }
  return scale;
}

export function parseTables(value: string | undefined): readonly Dbt3Table[] {
  if (value === undefined) return DBT3_TABLES;
  const names = value.split(',').map((t) => t.trim().toLowerCase()).filter((t) => t !== '');
  if (names.length === 0) fail('--tables', `a comma-separated list of ${DBT3_TABLES.join(', ')}`, value);
  const tables: Dbt3Table[] = [];
  for (const name of names) {
    if (!isDbt3Table(name)) fail('--tables', `a comma-separated list of ${DBT3_TABLES.join(', ')}`, value);
    if (!tables.includes(name)) tables.push(name);
  }
  // generate in the schema's order, whatever order they were named in
  return DBT3_TABLES.filter((t) => tables.includes(t));
}

export function parseDbt3GenOptions(raw: RawDbt3GenOptions): Dbt3GenCliOptions {
  const scale = parseScale(raw.scale);
  if (raw.out === undefined || raw.out === '') fail('--out', 'a directory, or - for stdout', raw.out);
  const refresh = raw.refresh === undefined ? 0 : parseWholeNumber('--refresh', raw.refresh, 1, 999);
  // the sets beside the tables; `--tables none` for the sets alone (as dbgen -U writes them)
  const tables = refresh > 0 && raw.tables?.trim().toLowerCase() === 'none' ? [] : parseTables(raw.tables);
  if (refresh > 0) {
    if (raw.out === '-') fail('--out', 'a directory with `--refresh` (it writes three files per set)', raw.out);
    if (raw.parts !== undefined) fail('--parts', 'left out with `--refresh` (refresh sets are not sliced)', raw.parts);
    if (raw.format !== undefined && raw.format !== 'tbl') fail('--format', 'tbl with `--refresh` (refresh sets are dbgen\'s | text)', raw.format);
  }
  if (raw.out === '-' && tables.length !== 1) {
    fail('--tables', 'exactly one table when `--out -` writes to stdout', raw.tables);
  }
  const seed = raw.seed === undefined ? DEFAULT_SEED : parseWholeNumber('--seed', raw.seed, 0, 0xffffffff);
  const parts = raw.parts === undefined ? 1 : parseWholeNumber('--parts', raw.parts, 1);
  if (raw.part !== undefined && raw.parts === undefined) fail('--parts', 'given with `--part`', raw.parts);
  const part = raw.part === undefined ? 1 : parseWholeNumber('--part', raw.part, 1, parts);
  if (raw.parts !== undefined && raw.part === undefined && parts > 1) fail('--part', `a whole number from 1 to ${parts} (which slice to write)`, raw.part);
  const workers = raw.workers === undefined ? undefined : parseWholeNumber('--workers', raw.workers, 0, 64);
  const format = raw.format ?? 'tbl';
  if (!(DBT3_GEN_FORMATS as readonly string[]).includes(format)) fail('--format', DBT3_GEN_FORMATS.join(' or '), raw.format);
  if (format !== 'parquet') {
    if (raw.compression !== undefined) fail('--format', 'parquet when `--compression` is given (a .tbl file is written uncompressed)', raw.format);
    if (raw.rowGroupSize !== undefined) fail('--format', 'parquet when `--row-group-size` is given', raw.format);
  } else if (raw.out === '-') {
    fail('--out', 'a directory with `--format parquet` (a Parquet file ends in its footer; it is not streamed to stdout)', raw.out);
  }
  const compression = raw.compression ?? 'snappy';
  if (!(PARQUET_COMPRESSIONS as readonly string[]).includes(compression)) fail('--compression', PARQUET_COMPRESSIONS.join(', ') + ' (zstd needs a compressor Node 20 lacks)', raw.compression);
  const rowGroupRows = raw.rowGroupSize === undefined ? DEFAULT_ROW_GROUP_ROWS : parseWholeNumber('--row-group-size', raw.rowGroupSize, 1, 100_000_000);
  return { scale, out: raw.out, seed, tables, parts, part, workers, format: format as Dbt3GenFormat, compression: compression as ParquetCompression, rowGroupRows, refresh };
}

export function parseNarrowOptions(raw: RawNarrowOptions): NarrowCliOptions {
  const rows = parseWholeNumber('--rows', raw.rows, 0, 2 ** 52);
  if (raw.out === undefined || raw.out === '') fail('--out', 'a file, or - for stdout', raw.out);
  const keys = raw.keys ?? 'sequential';
  if (!(NARROW_KEY_ORDERS as readonly string[]).includes(keys)) fail('--keys', NARROW_KEY_ORDERS.join(' or '), raw.keys);
  const format = raw.format ?? 'text';
  if (!(NARROW_FORMATS as readonly string[]).includes(format)) fail('--format', NARROW_FORMATS.join(' or '), raw.format);
  const seed = raw.seed === undefined ? DEFAULT_NARROW_SEED : parseWholeNumber('--seed', raw.seed, 0, 0xffffffff);
  return { rows, out: raw.out, keys: keys as NarrowKeyOrder, seed, format: format as NarrowFormat };
}
