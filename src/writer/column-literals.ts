/**
 * The unnest fast path: a run of COPY text records (tab or `|` delimited) that holds no
 * backslash at all — so no escapes and no `\N`, every field is its bytes as they are —
 * straight to one PostgreSQL array literal per column, copied byte by byte, without a
 * JavaScript string per field. Decoding the same bytes with `decodeRecords` and quoting
 * them with `arrayLiteral` gives the same literals (a unit test checks it); this only
 * spares the client millions of small strings and the garbage collector's time.
 */

import { CARRIAGE_RETURN, NEWLINE } from '../input/framer.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN = 0x7b;
const CLOSE = 0x7d;
const COMMA = 0x2c;

/** A record with the wrong number of fields; `record` is 1-based within the data. */
export class FieldCountError extends Error {
  constructor(
    readonly record: number,
    readonly fields: number,
    readonly columns: number,
  ) {
    super(`${fields > columns ? 'extra data after last expected column' : 'missing data for column'} (${fields} fields, the table has ${columns} columns)`);
    this.name = 'FieldCountError';
  }
}

/** Whether `columnLiterals` may read these bytes: no backslash anywhere. */
export function hasNoEscapes(data: Buffer): boolean {
  return data.indexOf(BACKSLASH) < 0;
}

export interface ColumnBatch {
  /** Records in the batch. */
  readonly rows: number;
  /** One array literal per column. */
  readonly literals: string[];
}

/**
 * Cuts `data` (whole records, each ending in `\n`; no backslash) into batches of at most
 * `batchRows` records, each as one array literal per column. `recordOffset` is the number
 * of records before `data` in its chunk, for error messages.
 */
export function* columnLiteralBatches(data: Buffer, delimiter: number, columns: number, batchRows: number): Generator<ColumnBatch> {
  // Field bounds of one batch, reused: [start, end) per field, row-major.
  const bounds = new Int32Array(batchRows * columns * 2);
  const sizes = new Array<number>(columns);
  const scan = { pos: 0, record: 0, quotes: 0 };
  while (scan.pos < data.length) {
    const rows = scanBatch(data, delimiter, columns, batchRows, bounds, scan);
    sizes.fill(2); // the braces
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < columns; c++) {
        const at = (r * columns + c) * 2;
        sizes[c]! += bounds[at + 1]! - bounds[at]! + 3; // quotes and comma
      }
    }
    const literals = new Array<string>(columns);
    for (let c = 0; c < columns; c++) {
      // A quote in a field takes a backslash too: room for all of the batch's, in each column.
      const out = Buffer.allocUnsafe(sizes[c]! + scan.quotes);
      let n = 0;
      out[n++] = OPEN;
      for (let r = 0; r < rows; r++) {
        const at = (r * columns + c) * 2;
        const start = bounds[at]!;
        const end = bounds[at + 1]!;
        out[n++] = QUOTE;
        for (let i = start; i < end; i++) {
          const b = data[i]!;
          if (b === QUOTE) out[n++] = BACKSLASH;
          out[n++] = b;
        }
        out[n++] = QUOTE;
        out[n++] = COMMA;
      }
      if (rows > 0) n--; // the last comma
      out[n++] = CLOSE;
      literals[c] = out.toString('utf8', 0, n);
    }
    yield { rows, literals };
  }
}

/** A batch of records as one multi-row VALUES statement's parameters: the Bind message. */
export interface BindBatch {
  readonly rows: number;
  readonly message: Buffer;
}

/**
 * The `values` fast path: each batch of records (no backslash) as a ready Bind + Execute +
 * Sync for `statement`, one text parameter per field, its bytes copied from `data`.
 * `makeMessage` is `bindMessage` (passed in to keep this module free of the protocol).
 */
export function* valuesBindBatches(
  data: Buffer,
  delimiter: number,
  columns: number,
  batchRows: number,
  makeMessage: (count: number, paramBytes: number, write: (out: Buffer, offset: number) => number) => Buffer,
): Generator<BindBatch> {
  const bounds = new Int32Array(batchRows * columns * 2);
  const scan = { pos: 0, record: 0, quotes: 0 };
  while (scan.pos < data.length) {
    const rows = scanBatch(data, delimiter, columns, batchRows, bounds, scan);
    const fields = rows * columns;
    let bytes = 0;
    for (let f = 0; f < fields; f++) bytes += 4 + bounds[f * 2 + 1]! - bounds[f * 2]!;
    const message = makeMessage(fields, bytes, (out, offset) => {
      let n = offset;
      for (let f = 0; f < fields; f++) {
        const start = bounds[f * 2]!;
        const end = bounds[f * 2 + 1]!;
        const len = end - start;
        out[n] = len >>> 24;
        out[n + 1] = (len >>> 16) & 0xff;
        out[n + 2] = (len >>> 8) & 0xff;
        out[n + 3] = len & 0xff;
        n += 4;
        // Most fields are a few bytes: a loop beats a native copy call per field.
        if (len < 64) for (let i = start; i < end; i++) out[n++] = data[i]!;
        else n += data.copy(out, n, start, end);
      }
      return n;
    });
    yield { rows, message };
  }
}

/**
 * Finds the field bounds of up to `batchRows` records from `scan.pos`, checking each has
 * `columns` fields; advances `scan` and returns the number of records.
 */
function scanBatch(data: Buffer, delimiter: number, columns: number, batchRows: number, bounds: Int32Array, scan: { pos: number; record: number; quotes: number }): number {
  let pos = scan.pos;
  let rows = 0;
  scan.quotes = 0;
  while (rows < batchRows && pos < data.length) {
    let field = 0;
    let start = pos;
    const base = rows * columns * 2;
    for (;;) {
      const b = data[pos];
      if (b === delimiter || b === NEWLINE || b === undefined) {
        let end = pos;
        if (b !== delimiter && end > start && data[end - 1] === CARRIAGE_RETURN) end--;
        if (field >= columns) throw new FieldCountError(scan.record + 1, countFields(data, pos, delimiter) + field + 1, columns);
        bounds[base + field * 2] = start;
        bounds[base + field * 2 + 1] = end;
        field++;
        pos++;
        if (b !== delimiter) break;
        start = pos;
      } else {
        if (b === QUOTE) scan.quotes++;
        pos++;
      }
    }
    if (field !== columns) throw new FieldCountError(scan.record + 1, field, columns);
    rows++;
    scan.record++;
  }
  scan.pos = pos;
  return rows;
}

/** Fields left on the line after `pos` (for the message about extra data). */
function countFields(data: Buffer, pos: number, delimiter: number): number {
  let n = 0;
  for (let i = pos; i < data.length && data[i] !== NEWLINE; i++) if (data[i] === delimiter) n++;
  return n;
}
