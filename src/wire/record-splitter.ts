import type { WireFormat } from './wire-format.js';
import { unescapeTextInto } from './decode-records.js';
import { writeNull, writeTupleStart } from '../codecs/binary-copy.js';
import type { FieldEncoder, WireBuffer } from '../codecs/field-encoder.js';
import { fastDate, fastInteger, fastKinds, fastNumeric, fastText, KIND_DATE, KIND_INT2, KIND_INT4, KIND_INT8, KIND_NONE, KIND_NUMERIC, KIND_TEXT, textStops } from './fast-fields.js';
import { WasmRecords } from './wasm-records.js';

/**
 * The binary wire's hot path: a chunk's framed records (COPY text or CSV, as the text
 * wire would send them) → binary COPY tuples, each an int16 field count and per field
 * -1 for NULL or what the column's encoder writes. Fields are cut and NULLs found exactly
 * as PostgreSQL's CopyReadAttributesText / CopyReadAttributesCSV do; a field without a
 * backslash (text) or a quote (CSV) is encoded straight from the chunk's bytes, the others
 * are unescaped or unquoted into a scratch buffer first.
 *
 * Anything the splitter cannot cut with certainty (a record with another number of fields
 * than the table has columns, a literal carriage return that is not the chunk's line
 * ending, an end-of-data marker `\.`, an unterminated quote) or any field an encoder
 * refuses stops it: the whole chunk then goes as text, and the server decides.
 */

/** The framing rules of a chunk's bytes, as bytes. */
export interface SplitFormat {
  readonly csv: boolean;
  readonly delimiter: number;
  /** The NULL string as written (compared before unescaping, as COPY does). */
  readonly null: Uint8Array;
  /** CSV only. */
  readonly quote: number;
  /** CSV only. */
  readonly escape: number;
}

/** The split format of a wire format, or why it has none (COPY allows only one-byte delimiters, quotes and escapes). */
export function splitFormatOf(wire: WireFormat): SplitFormat | string {
  const csv = wire.format === 'csv';
  const delimiter = wire.delimiter ?? (csv ? ',' : '\t');
  const quote = wire.quote ?? '"';
  const escape = wire.escape ?? quote;
  for (const [name, value] of [['delimiter', delimiter], ['quote', quote], ['escape', escape]] as const) {
    if (Buffer.byteLength(value) !== 1) return `its ${name} ${JSON.stringify(value)} is not one byte`;
  }
  return {
    csv,
    delimiter: delimiter.charCodeAt(0),
    null: Buffer.from(wire.null ?? (csv ? '' : '\\N'), 'utf8'),
    quote: quote.charCodeAt(0),
    escape: escape.charCodeAt(0),
  };
}

/** Why a chunk goes as text after all: the first record and field that sent it. */
export interface SplitRefusal {
  /** 1-based record of the chunk. */
  readonly record: number;
  /** 0-based column, where one field is to blame. */
  readonly column?: number;
  /** The field's value text (unescaped, cut to 80 characters), where one field is to blame. */
  readonly value?: string;
  readonly why: string;
}

/** Records encoded in JavaScript after the WebAssembly took none, before it is asked again. */
const WASM_BACKOFF = 16;

const NL = 0x0a;
const CR = 0x0d;
const BACKSLASH = 0x5c;
const DOT = 0x2e;

/** Line endings seen so far in one chunk (one COPY): PostgreSQL takes the first line's and refuses any other. */
const EOL_UNKNOWN = 0;
const EOL_NL = 1;
const EOL_CRNL = 2;

/** Bytes that stop the fast scan of a field, per format: 1 where the byte needs a look. */
function stopBytes(format: SplitFormat): Uint8Array {
  const t = new Uint8Array(257);
  t[NL] = 1;
  t[CR] = 1;
  t[format.delimiter] = 1;
  if (format.csv) t[format.quote] = 1;
  else t[BACKSLASH] = 1;
  // Index 256 stands for "past the end" (see `at`).
  t[256] = 1;
  return t;
}

/**
 * Cuts one table's chunks into binary tuples; one per table and worker (it owns scratch
 * space). `encoders[i]` encodes the i-th column of the COPY's column list.
 */
export class RecordSplitter {
  private readonly stops: Uint8Array;
  /** Per column, its fast path's kind (src/wire/fast-fields.ts), KIND_NONE for the encoder's general one. COPY text only. */
  private readonly kinds: Int8Array;
  private readonly textStops: Uint8Array;
  private scratch: Uint8Array = new Uint8Array(4096);
  private refusal: SplitRefusal | undefined;
  /** The chunk's line ending so far (one chunk is one COPY). */
  private eol = EOL_UNKNOWN;
  /** Whole records in WebAssembly (src/wire/wasm-records.ts), when every column has a fast kind. */
  private readonly wasm: WasmRecords | undefined;

  /**
   * `options.fastPaths: false`: every field through its encoder's `encode` (the tests'
   * reference); `options.wasm: false`: the fast paths in JavaScript only (default on; the
   * CLI turns it off for `PGSURGE_WIRE_WASM=0`).
   */
  constructor(
    private readonly format: SplitFormat,
    private readonly encoders: readonly FieldEncoder[],
    options: { fastPaths?: boolean; wasm?: boolean | undefined } = {},
  ) {
    this.stops = stopBytes(format);
    this.kinds = options.fastPaths === false || format.csv ? new Int8Array(encoders.length + 1) : fastKinds(encoders, format.delimiter);
    this.textStops = textStops(format.delimiter);
    const allFast = encoders.length > 0 && this.kinds.subarray(0, encoders.length).every((k) => k !== KIND_NONE);
    this.wasm = allFast && options.wasm !== false ? WasmRecords.create(this.kinds, encoders.length, format.delimiter, this.textStops, format.null) : undefined;
  }

  /**
   * Appends the binary tuples of every record in `data` (whole records, each ending in a
   * newline) to `out`; returns the number of records, or the refusal that sends the chunk
   * as text (then `out.pos` is back where it was). `continuing`: `data` is the next piece
   * of the chunk whose earlier pieces went before (same COPY, same line ending).
   */
  encode(data: Uint8Array, out: WireBuffer, continuing = false): number | SplitRefusal {
    const begin = out.pos;
    this.refusal = undefined;
    // A chunk encoded in pieces (`continuing`) keeps its first line's ending across them.
    if (!continuing) this.eol = EOL_UNKNOWN;
    const rows = this.format.csv ? this.encodeCsv(data, out) : this.encodeText(data, out);
    if (rows < 0) {
      out.pos = begin;
      return this.refusal!;
    }
    return rows;
  }

  private refuse(record: number, why: string, column?: number, value?: Uint8Array, from = 0, to = 0): -1 {
    this.refusal = {
      record,
      why,
      ...(column !== undefined ? { column } : {}),
      ...(value !== undefined ? { value: shorten(Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8', from, to)) } : {}),
    };
    return -1;
  }

  /**
   * At the byte `c` (at `p`) that ends field `col`: a line ending must be the chunk's
   * first line's, the record must end in one, and the field must be one of the table's.
   * False, with the refusal set, when not.
   */
  private fieldEnds(d: Uint8Array, p: number, len: number, c: number, record: number, col: number): boolean {
    if (c === CR) {
      if (at(d, p + 1, len) !== NL || this.eol === EOL_NL) return this.refused(record, 'a carriage return that is not the line ending', col);
      this.eol = EOL_CRNL;
    } else if (c === NL) {
      if (this.eol === EOL_CRNL) return this.refused(record, 'a line ending other than the first line\'s');
      this.eol = EOL_NL;
    } else if (c === 256) {
      return this.refused(record, 'a record without its newline');
    }
    return col < this.encoders.length || this.refused(record, `more fields than the table's ${this.encoders.length} columns`);
  }

  private refused(record: number, why: string, column?: number): false {
    this.refuse(record, why, column);
    return false;
  }

  /** After field `col`, ended by `c`: the bytes to step over (1 past a delimiter, 1 or 2 past the line ending), or -1 refused (a field too few). */
  private afterField(c: number, delim: number, record: number, col: number): number {
    if (c === delim) return 1;
    const ncols = this.encoders.length;
    if (col !== ncols - 1) return this.refuse(record, `${col + 1} field${col === 0 ? '' : 's'} where the table has ${ncols} columns`);
    return c === CR ? 2 : 1;
  }

  /**
   * Ends field `col` at the byte `c` (at `p`), in either format: checks that it may end
   * there (fieldEnds), writes it (NULL when `isNull`, else `value[from, to)`, the field
   * unescaped or unquoted where it had to be, through the column's encoder) and returns
   * where the next field or record starts (past the delimiter or line ending: afterField),
   * or -1 refused.
   */
  private endField(d: Uint8Array, p: number, len: number, c: number, record: number, col: number, isNull: boolean, value: Uint8Array, from: number, to: number, out: WireBuffer): number {
    if (!this.fieldEnds(d, p, len, c, record, col)) return -1;
    if (isNull) writeNull(out);
    else if (!this.encoders[col]!.encode(value, from, to, out)) return this.refuse(record, 'a value its encoder cannot encode exactly', col, value, from, to);
    const step = this.afterField(c, this.format.delimiter, record, col);
    return step < 0 ? -1 : p + step;
  }

  private room(n: number): Uint8Array {
    if (this.scratch.length < n) this.scratch = new Uint8Array(Math.max(n, this.scratch.length * 2));
    return this.scratch;
  }

  private encodeText(d: Uint8Array, out: WireBuffer): number {
    const { stops, encoders, kinds, textStops } = this;
    const delim = this.format.delimiter;
    const nul = this.format.null;
    const nulLen = nul.length;
    const ncols = encoders.length;
    const last = ncols - 1;
    const len = d.length;
    const wasm = this.wasm;
    let p = 0;
    let record = 0;
    // The input goes into the WebAssembly's memory on its first run (a CR-NL chunk never has one).
    let loaded = false;
    // Records the JavaScript takes before the WebAssembly is asked again after it took none.
    let backoff = 0;
    while (p < len) {
      // Whole fast records in WebAssembly, up to one it cannot encode: that one, and after a
      // miss a few more (a chunk of such records would otherwise cross over for each), here.
      if (wasm !== undefined && this.eol !== EOL_CRNL && backoff-- <= 0) {
        if (!loaded) {
          wasm.load(d);
          loaded = true;
        }
        const n = wasm.run(p, len, out);
        if (n > 0) {
          record += n;
          p = wasm.consumed;
          this.eol = EOL_NL;
          if (p >= len) break;
        } else backoff = WASM_BACKOFF;
      }
      record++;
      writeTupleStart(out, ncols);
      for (let col = 0; ; col++) {
        const s = p;
        const kind = kinds[col]!;
        if (kind !== KIND_NONE) {
          // The fast path (src/wire/fast-fields.ts); kept only when it read the whole field and the field is not the NULL string.
          const mark = out.pos;
          const e =
            kind === KIND_TEXT
              ? fastText(d, s, len, textStops, out)
              : kind === KIND_NUMERIC
                ? fastNumeric(d, s, len, out)
                : kind === KIND_DATE
                  ? fastDate(d, s, len, out)
                  : kind === KIND_INT4
                    ? fastInteger(d, s, len, 9, 4, out)
                    : kind === KIND_INT8
                      ? fastInteger(d, s, len, 15, 8, out)
                      : kind === KIND_INT2
                        ? fastInteger(d, s, len, 4, 2, out)
                        : -1;
          if (e >= 0 && e < len && (e - s !== nulLen || !equalAt(d, s, nul))) {
            const c = d[e]!;
            if (c === delim && col < last) {
              p = e + 1;
              continue;
            }
            if (c === NL && col === last && this.eol !== EOL_CRNL) {
              this.eol = EOL_NL;
              p = e + 1;
              break;
            }
          }
          out.pos = mark;
        }
        let c = at(d, p, len);
        while (stops[c] === 0) c = at(d, ++p, len);
        let escaped = false;
        if (c === BACKSLASH) {
          // The slow path: find the field's end, stepping over escaped bytes.
          escaped = true;
          while (c !== NL && c !== CR && c !== delim && c !== 256) {
            if (c === BACKSLASH) {
              const next = at(d, p + 1, len);
              // `\.` is COPY's end-of-data marker (or an error) wherever it stands: the server's to read.
              if (next === DOT) return this.refuse(record, 'an end-of-data marker \\.', col, d, s, Math.min(len, p + 2));
              if (next === 256) return this.refuse(record, 'a backslash at the end of the input', col);
              p += 2;
            } else p++;
            c = at(d, p, len);
          }
        }
        const isNull = p - s === nulLen && equalAt(d, s, nul);
        let value = d;
        let from = s;
        let to = p;
        if (escaped && !isNull) {
          value = this.room(p - s);
          from = 0;
          to = unescapeTextInto(d, s, p, value, 0);
        }
        p = this.endField(d, p, len, c, record, col, isNull, value, from, to, out);
        if (p < 0) return -1;
        if (c !== delim) break;
      }
    }
    return record;
  }

  private encodeCsv(d: Uint8Array, out: WireBuffer): number {
    const { stops, encoders } = this;
    const { delimiter: delim, quote, escape } = this.format;
    const nul = this.format.null;
    const nulLen = nul.length;
    const ncols = encoders.length;
    const len = d.length;
    let p = 0;
    let record = 0;
    while (p < len) {
      record++;
      // In CSV a record starting `\.` may be the end-of-data marker.
      if (d[p] === BACKSLASH && at(d, p + 1, len) === DOT) return this.refuse(record, 'an end-of-data marker \\.');
      writeTupleStart(out, ncols);
      for (let col = 0; ; col++) {
        const s = p;
        let c = at(d, p, len);
        while (stops[c] === 0) c = at(d, ++p, len);
        let quoted = false;
        let n = 0;
        if (c === quote) {
          // The slow path: unquote into scratch (the value is never longer than its source).
          quoted = true;
          const scratch = this.room(len - s);
          scratch.set(d.subarray(s, p), 0);
          n = p - s;
          while (c === quote) {
            p++;
            for (;;) {
              if (p >= len) return this.refuse(record, 'an unterminated quoted field', col);
              const b = d[p]!;
              if (b === escape && p + 1 < len && (d[p + 1] === escape || d[p + 1] === quote)) {
                scratch[n++] = d[p + 1]!;
                p += 2;
                continue;
              }
              p++;
              if (b === quote) break;
              scratch[n++] = b;
            }
            // After the closing quote: unquoted bytes again, up to the next stop.
            c = at(d, p, len);
            while (stops[c] === 0) {
              scratch[n++] = c;
              c = at(d, ++p, len);
            }
          }
        }
        p = quoted ? this.endField(d, p, len, c, record, col, false, this.scratch, 0, n, out) : this.endField(d, p, len, c, record, col, p - s === nulLen && equalAt(d, s, nul), d, s, p, out);
        if (p < 0) return -1;
        if (c !== delim) break;
      }
    }
    return record;
  }
}

/** The byte at `p`, or 256 past the end (a stop byte of every format). */
function at(d: Uint8Array, p: number, len: number): number {
  return p < len ? d[p]! : 256;
}

function equalAt(d: Uint8Array, s: number, what: Uint8Array): boolean {
  for (let i = 0; i < what.length; i++) if (d[s + i] !== what[i]) return false;
  return true;
}

function shorten(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
