/**
 * The unnest fast path: a run of COPY text records (tab or `|` delimited) that holds no
 * backslash at all — so no escapes and no `\N`, every field is its bytes as they are —
 * straight to one PostgreSQL array literal per column, copied byte by byte, without a
 * JavaScript string per field. Decoding the same bytes with `decodeRecords` and quoting
 * them with `arrayLiteral` gives the same literals (a unit test checks it); this only
 * spares the client millions of small strings and the garbage collector's time.
 */

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
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
  let pos = 0;
  let record = 0;
  while (pos < data.length) {
    sizes.fill(2); // the braces
    let rows = 0;
    while (rows < batchRows && pos < data.length) {
      let field = 0;
      let start = pos;
      const base = rows * columns * 2;
      for (;;) {
        const b = data[pos];
        if (b === delimiter || b === NEWLINE || b === undefined) {
          let end = pos;
          if (b !== delimiter && end > start && data[end - 1] === CARRIAGE_RETURN) end--;
          if (field >= columns) throw new FieldCountError(record + 1, countFields(data, pos, delimiter) + field + 1, columns);
          bounds[base + field * 2] = start;
          bounds[base + field * 2 + 1] = end;
          sizes[field]! += end - start + 3; // quotes and comma
          field++;
          pos++;
          if (b !== delimiter) break;
          start = pos;
        } else {
          if (b === QUOTE) sizes[field < columns ? field : 0]! += 1; // escaped as \"
          pos++;
        }
      }
      if (field !== columns) throw new FieldCountError(record + 1, field, columns);
      rows++;
      record++;
    }
    const literals = new Array<string>(columns);
    for (let c = 0; c < columns; c++) {
      const out = Buffer.allocUnsafe(sizes[c]!);
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

/** Fields left on the line after `pos` (for the message about extra data). */
function countFields(data: Buffer, pos: number, delimiter: number): number {
  let n = 0;
  for (let i = pos; i < data.length && data[i] !== NEWLINE; i++) if (data[i] === delimiter) n++;
  return n;
}
