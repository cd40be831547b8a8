/**
 * The generator's `.tbl` rows as typed columns, for `dbt3 gen --format parquet`: a block
 * of `|`-delimited lines is parsed back into one row group's worth of column arrays, so
 * the Parquet file holds exactly the rows the `.tbl` file would (one generator, two
 * encodings), typed as the DBT-3 kit's schema: integer → INT32, bigint → INT64,
 * numeric(p,s) → DECIMAL(p,s) on INT64, date → DATE, char/varchar → STRING.
 */
import { DBT3_COLUMNS, type Dbt3Table } from '../dbt3-schema.js';

export type TblColumnKind =
  | { readonly kind: 'int32' }
  | { readonly kind: 'int64' }
  | { readonly kind: 'decimal'; readonly precision: number; readonly scale: number }
  | { readonly kind: 'date' }
  | { readonly kind: 'string' };

export interface TblColumn {
  readonly name: string;
  readonly type: TblColumnKind;
}

/** A DBT-3 column's PostgreSQL type as the column kind its Parquet field has. */
export function tblColumnKind(pgType: string): TblColumnKind {
  if (pgType === 'integer') return { kind: 'int32' };
  if (pgType === 'bigint') return { kind: 'int64' };
  if (pgType === 'date') return { kind: 'date' };
  if (/^(char|varchar)\(\d+\)$/.test(pgType)) return { kind: 'string' };
  const decimal = /^numeric\((\d+),(\d+)\)$/.exec(pgType);
  // INT64 holds 18 digits; the schema's money columns are numeric(15,2)
  if (decimal !== null && Number(decimal[1]) <= 18) return { kind: 'decimal', precision: Number(decimal[1]), scale: Number(decimal[2]) };
  throw new Error(`No Parquet type for the DBT-3 column type ${pgType}`);
}

export function tblColumns(table: Dbt3Table): readonly TblColumn[] {
  return DBT3_COLUMNS[table].map(([name, type]) => ({ name, type: tblColumnKind(type) }));
}

/** One column's values of a row group: typed arrays for numbers, byte views for strings. */
export type ColumnValues = Int32Array | BigInt64Array | Uint8Array[];

export interface RowGroupColumns {
  readonly rows: number;
  readonly columns: readonly ColumnValues[];
}

const PIPE = 0x7c;
const NEWLINE = 0x0a;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;

/** Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil). */
export function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function fieldError(column: TblColumn, buf: Uint8Array, start: number, end: number): Error {
  return new Error(`Cannot read ${Buffer.from(buf.subarray(start, end)).toString('latin1')} as the ${column.type.kind} column ${column.name}`);
}

/** A decimal integer (optionally negative) in buf[start, end). */
function parseInteger(column: TblColumn, buf: Uint8Array, start: number, end: number): number {
  let p = start;
  const negative = buf[p] === MINUS;
  if (negative) p++;
  if (p === end) throw fieldError(column, buf, start, end);
  let n = 0;
  for (; p < end; p++) {
    const digit = buf[p]! - ZERO;
    if (digit < 0 || digit > 9) throw fieldError(column, buf, start, end);
    n = n * 10 + digit;
  }
  return negative ? -n : n;
}

/** `-123.45` with scale 2 → -12345: the unscaled value; fewer fraction digits are padded, more refused. */
function parseUnscaled(column: TblColumn, scale: number, buf: Uint8Array, start: number, end: number): number {
  let p = start;
  const negative = buf[p] === MINUS;
  if (negative) p++;
  let n = 0;
  let digits = 0;
  let fraction = -1;
  for (; p < end; p++) {
    const c = buf[p]!;
    if (c === DOT && fraction < 0) {
      fraction = 0;
      continue;
    }
    const digit = c - ZERO;
    if (digit < 0 || digit > 9) throw fieldError(column, buf, start, end);
    n = n * 10 + digit;
    digits++;
    if (fraction >= 0) fraction++;
  }
  if (fraction < 0) fraction = 0;
  if (digits === 0 || fraction > scale) throw fieldError(column, buf, start, end);
  for (; fraction < scale; fraction++) n *= 10;
  if (!Number.isSafeInteger(n)) throw fieldError(column, buf, start, end);
  return negative ? -n : n;
}

function twoDigits(buf: Uint8Array, p: number): number {
  return (buf[p]! - ZERO) * 10 + (buf[p + 1]! - ZERO);
}

/** `YYYY-MM-DD` → days since 1970-01-01. */
function parseDate(column: TblColumn, buf: Uint8Array, start: number, end: number): number {
  if (end - start !== 10 || buf[start + 4] !== MINUS || buf[start + 7] !== MINUS) throw fieldError(column, buf, start, end);
  const y = twoDigits(buf, start) * 100 + twoDigits(buf, start + 2);
  const m = twoDigits(buf, start + 5);
  const d = twoDigits(buf, start + 8);
  if (!(y >= 0 && m >= 1 && m <= 12 && d >= 1 && d <= 31)) throw fieldError(column, buf, start, end);
  return daysFromCivil(y, m, d);
}

/**
 * Fills the columns of one row group, row by row, from `.tbl` blocks; `fill` stops at the
 * end of the block or when the group is full, and says where it stopped.
 */
export class RowGroupBuilder {
  private values: ColumnValues[] = [];
  private count = 0;

  constructor(
    private readonly columns: readonly TblColumn[],
    readonly capacity: number,
  ) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new Error(`A row group needs at least one row, got ${capacity}`);
    this.reset();
  }

  get rows(): number {
    return this.count;
  }

  get full(): boolean {
    return this.count === this.capacity;
  }

  private reset(): void {
    this.count = 0;
    this.values = this.columns.map(({ type }) => {
      switch (type.kind) {
        case 'int32':
        case 'date':
          return new Int32Array(this.capacity);
        case 'int64':
        case 'decimal':
          return new BigInt64Array(this.capacity);
        case 'string':
          return new Array<Uint8Array>(this.capacity);
      }
    });
  }

  /**
   * Parses whole `.tbl` lines of `buf` from `pos` until the block ends or the group is
   * full; returns the position after the last line taken. String values are views of
   * `buf`, which must therefore stay unchanged until the group is taken.
   */
  fill(buf: Uint8Array, pos: number): number {
    const { columns } = this;
    const n = columns.length;
    while (pos < buf.length && this.count < this.capacity) {
      const row = this.count;
      for (let c = 0; c < n; c++) {
        const start = pos;
        let end = start;
        while (end < buf.length && buf[end] !== PIPE && buf[end] !== NEWLINE) end++;
        if (buf[end] !== PIPE) throw new Error(`A .tbl line has fewer than ${n} fields (column ${columns[c]!.name} is missing)`);
        const column = columns[c]!;
        const values = this.values[c]!;
        switch (column.type.kind) {
          case 'int32':
            (values as Int32Array)[row] = parseInteger(column, buf, start, end);
            break;
          case 'int64':
            (values as BigInt64Array)[row] = BigInt(parseInteger(column, buf, start, end));
            break;
          case 'decimal':
            (values as BigInt64Array)[row] = BigInt(parseUnscaled(column, column.type.scale, buf, start, end));
            break;
          case 'date':
            (values as Int32Array)[row] = parseDate(column, buf, start, end);
            break;
          case 'string':
            (values as Uint8Array[])[row] = buf.subarray(start, end);
            break;
        }
        pos = end + 1;
      }
      // the line ends in `|` then a newline: the last field's `|` was the trailing one
      if (buf[pos] !== NEWLINE) throw new Error(`A .tbl line has more than ${n} fields`);
      pos++;
      this.count++;
    }
    return pos;
  }

  /** The rows so far (the arrays cut to their count), and a fresh, empty group. */
  take(): RowGroupColumns {
    const rows = this.count;
    const columns = this.values.map((v) => (v.length === rows ? v : v.slice(0, rows)));
    this.reset();
    return { rows, columns };
  }
}
