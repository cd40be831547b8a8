import { WireBuffer } from '../../codecs/field-encoder.js';
import type { FlatColumn } from './flat-decoder.js';
import { putScaledNumeric, SCALED_NUMERIC_ROOM } from '../../codecs/numeric.js';
import { UNIX_TO_POSTGRES_DAYS, type BinaryCell, type FlatValueWriter } from './parquet-cells.js';

/*
 * Binary COPY tuples written straight from the flat decoder's columns, one row after the
 * other, with no call per value for the common forms: a tight loop over the columns that
 * switches on how each column is written. A dictionary-encoded column whose values need
 * more than a copy (a DECIMAL into numeric, a FLOAT, a UUID, …) has every distinct value's
 * field (length and bytes) made once per row group (a "table"); a row then copies its
 * value's bytes. INT32 into int4, DATE into date and INT64/DOUBLE into int8/float8 are
 * written from the decoded bytes (big-endian, days from 2000-01-01), strings copied from
 * theirs. The bytes are exactly those of `binaryCell`'s writers (the table is made by
 * them; the unit tests compare the two on every row).
 */

export const TABLE = 0;
const INT32 = 1;
const DATE = 2;
const LE8 = 3;
const SPAN = 4;
const VALUE = 5;
const CELL = 6;
const DECIMAL32 = 7;
const DECIMAL64 = 8;

/** The kinds written inline (not by a writer of their own), those the kernels' tuples write too (wasm-tuples.ts). */
export const INLINE_KINDS: ReadonlySet<number> = new Set([TABLE, INT32, DATE, LE8, SPAN, DECIMAL32, DECIMAL64]);

/** A string field longer than this is written by its own writer (which makes room for it), so a row's room stays small. */
const LONGEST_INLINE = 4096;

/** How one column's fields are written (every field set, so the loop sees one shape). */
export class ColumnTuples {
  private constructor(
    readonly kind: number,
    /** Value index of each row of the row group (-1: NULL), from `base`; unused by CELL. */
    readonly index: Int32Array,
    readonly base: number,
    /** INT32, DATE, LE8, SPAN: the decoded values' bytes; TABLE: the fields'. */
    readonly bytes: Uint8Array,
    readonly i32: Int32Array,
    /** SPAN: value i is `bytes[span[2i], span[2i + 1])`; TABLE: field i is `len[i]` bytes at `at[i]` (-1: it does not fit the column). */
    readonly span: Int32Array,
    readonly at: Int32Array,
    readonly len: Int32Array,
    /** VALUE: the value's writer. */
    readonly write: (i: number, out: WireBuffer) => boolean,
    /** CELL: the row's writer (a column hyparquet decoded). */
    readonly cell: BinaryCell,
    /** Bytes a field of this column takes at most, for those written inline (a NULL's 4 at least). */
    readonly room: number,
    /** DECIMAL32/DECIMAL64: digits after the point. */
    readonly scale: number,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** `bytes` as a DataView, to copy fields four bytes at a time. */
  readonly view: DataView<ArrayBufferLike>;

  /** A column hyparquet decoded: its binary cell, called per row. */
  static ofCell(cell: BinaryCell): ColumnTuples {
    return new ColumnTuples(CELL, EMPTY_I32, 0, EMPTY_U8, EMPTY_I32, EMPTY_I32, EMPTY_I32, EMPTY_I32, NEVER, cell, 4, 0);
  }

  /** A flat column (its rows from `base`), written as `writer` says. */
  static ofFlat(c: FlatColumn, base: number, writer: FlatValueWriter): ColumnTuples {
    const values = valueCount(c);
    const make = (kind: number, room: number): ColumnTuples => new ColumnTuples(kind, c.index, base, c.bytes, c.i32, c.span ?? EMPTY_I32, EMPTY_I32, EMPTY_I32, writer.write, NO_CELL, room, writer.scale ?? 0);
    switch (writer.kind) {
      case 'int32':
        return make(INT32, 8);
      case 'date':
        return make(DATE, 8);
      case 'le8':
        return make(LE8, 12);
      case 'span': {
        const span = c.span!;
        let longest = 0;
        for (let k = 0; k < span.length; k += 2) longest = Math.max(longest, span[k + 1]! - span[k]!);
        return longest <= LONGEST_INLINE ? make(SPAN, 4 + longest) : make(VALUE, 4);
      }
      case 'decimal32':
      case 'decimal64':
      case 'value':
        // A value repeated (a dictionary's) is made once; one used once is written where it goes.
        if (2 * values <= c.rows) return ColumnTuples.table(c, base, values, writer.write);
        return writer.kind === 'value' ? make(VALUE, 4) : make(writer.kind === 'decimal32' ? DECIMAL32 : DECIMAL64, SCALED_NUMERIC_ROOM);
    }
  }

  private static table(c: FlatColumn, base: number, values: number, write: (i: number, out: WireBuffer) => boolean): ColumnTuples {
    const at = new Int32Array(values);
    const len = new Int32Array(values);
    const out = new WireBuffer(4096);
    let room = 4;
    for (let i = 0; i < values; i++) {
      const start = out.pos;
      at[i] = start;
      if (write(i, out)) {
        len[i] = out.pos - start;
        room = Math.max(room, len[i]!);
      } else {
        len[i] = -1;
        out.pos = start;
      }
    }
    return new ColumnTuples(TABLE, c.index, base, out.bytes.subarray(0, out.pos), EMPTY_I32, EMPTY_I32, at, len, NEVER, NO_CELL, room, 0);
  }
}

/** The number of values a flat column holds (its dictionary's and its plain pages'). */
function valueCount(c: FlatColumn): number {
  if (c.span !== undefined) return c.span.length >> 1;
  return c.width > 0 ? Math.floor(c.bytes.length / c.width) : 0;
}

const EMPTY_I32 = new Int32Array(0);
const EMPTY_U8 = new Uint8Array(0);
const NEVER = (): boolean => {
  throw new Error('internal: a Parquet column written inline was asked for its writer');
};
const NO_CELL: BinaryCell = NEVER;

const EMPTY_VIEW: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));

/** Copies `n` bytes from `src` at `s` to `b` at `p` (their DataViews `to`, `from`), four at a time then one by one (measured ~2× a byte loop for 10–40 bytes); returns `p + n`. */
function copyField(to: DataView<ArrayBufferLike>, b: Uint8Array, p: number, from: DataView<ArrayBufferLike>, src: Uint8Array, s: number, n: number): number {
  let q = 0;
  for (; q + 4 <= n; q += 4) to.setUint32(p + q, from.getUint32(s + q));
  for (; q < n; q++) b[p + q] = src[s + q]!;
  return p + n;
}

let viewed: Uint8Array | undefined;
let lastView: DataView<ArrayBufferLike> = EMPTY_VIEW;

/** `b` as a DataView, the last one made kept (a piece's buffer changes only when a reserve grows it). */
function viewOf(b: Uint8Array): DataView<ArrayBufferLike> {
  if (b !== viewed) {
    viewed = b;
    lastView = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }
  return lastView;
}

/** Bytes a tuple of these columns takes at most, but for the fields written by their own writers. */
export function tupleRoom(columns: readonly ColumnTuples[]): number {
  return columns.reduce((n, c) => n + c.room, 2);
}

/**
 * Rows [from, to) as binary COPY tuples until `out.pos` reaches `limit`: the row it stopped
 * before, or the first value that does not fit its column (`out.pos` then means nothing).
 */
export function writeFlatTuples(columns: readonly ColumnTuples[], room: number, from: number, to: number, out: WireBuffer, limit: number): number | { row: number; column: number } {
  const n = columns.length;
  let r = from;
  while (r < to && out.pos < limit) {
    out.reserve(room);
    let b = out.bytes;
    let view = viewOf(b);
    let p = out.pos;
    b[p] = n >> 8;
    b[p + 1] = n;
    p += 2;
    for (let k = 0; k < n; k++) {
      const c = columns[k]!;
      const kind = c.kind;
      // A field written by its own writer (which makes its own room): false when it does not fit the column.
      let own: boolean | undefined;
      if (kind === CELL) {
        out.pos = p;
        own = c.cell(r, out);
      } else {
        const i = c.index[c.base + r]!;
        if (i < 0) {
          b[p] = 0xff;
          b[p + 1] = 0xff;
          b[p + 2] = 0xff;
          b[p + 3] = 0xff;
          p += 4;
          continue;
        }
        switch (kind) {
          case TABLE: {
            const len = c.len[i]!;
            if (len < 0) return { row: r, column: k };
            p = copyField(view, b, p, c.view, c.bytes, c.at[i]!, len);
            break;
          }
          case INT32:
          case DATE: {
            const v = kind === DATE ? c.i32[i]! - UNIX_TO_POSTGRES_DAYS : c.i32[i]!;
            b[p] = 0;
            b[p + 1] = 0;
            b[p + 2] = 0;
            b[p + 3] = 4;
            b[p + 4] = v >> 24;
            b[p + 5] = v >> 16;
            b[p + 6] = v >> 8;
            b[p + 7] = v;
            p += 8;
            break;
          }
          case LE8: {
            // The little-endian 8 bytes reversed: its high word first, each word big-endian.
            const s = 8 * i;
            view.setInt32(p, 8);
            view.setUint32(p + 4, c.view.getUint32(s + 4, true));
            view.setUint32(p + 8, c.view.getUint32(s, true));
            p += 12;
            break;
          }
          case SPAN: {
            const src = c.bytes;
            const s = c.span[2 * i]!;
            const len = c.span[2 * i + 1]! - s;
            b[p] = len >> 24;
            b[p + 1] = len >> 16;
            b[p + 2] = len >> 8;
            b[p + 3] = len;
            p = copyField(view, b, p + 4, c.view, src, s, len);
            break;
          }
          case DECIMAL32:
            p = putScaledNumeric(b, p, c.i32[i]!, c.scale);
            break;
          case DECIMAL64: {
            const lo = c.i32[2 * i]! >>> 0;
            const hi = c.i32[2 * i + 1]!;
            // A safe integer (|v| < 2^53: hi in [-2^21, 2^21)) inline; a bigger one by the column's writer.
            if (hi >= -2097152 && hi < 2097152) {
              p = putScaledNumeric(b, p, hi * 4294967296 + lo, c.scale);
              break;
            }
            out.pos = p;
            own = c.write(i, out);
            break;
          }
          default:
            out.pos = p;
            own = c.write(i, out);
        }
      }
      if (own !== undefined) {
        if (!own) return { row: r, column: k };
        out.reserve(room);
        b = out.bytes;
        view = viewOf(b);
        p = out.pos;
      }
    }
    out.pos = p;
    r++;
  }
  return r;
}

/** `writeFlatTuples` bound to one plan's columns and room: rows [from, to) until `out.pos` reaches `limit`. */
export type FlatTuplesWriter = (from: number, to: number, out: WireBuffer, limit: number) => number | { row: number; column: number };

/**
 * `writeFlatTuples` for one plan, as straight-line code: the columns' kinds known, each
 * column's arrays in locals, no switch per field. The source is made once per sequence of
 * kinds (lineitem's 16 columns: one), so every row group's writer shares its compiled and
 * optimized code; the bytes and refusals are `writeFlatTuples`' own (the unit tests run
 * both on every row). Where code cannot be made from strings
 * (`--disallow-code-generation-from-strings`), `writeFlatTuples` it is.
 */
export function compileFlatTuples(columns: readonly ColumnTuples[], room: number): FlatTuplesWriter {
  const shape = columns.map((c) => c.kind).join(',');
  let factory = factories.get(shape);
  if (factory === undefined) {
    try {
      factory = new Function('cols', 'room', 'copyField', 'putScaledNumeric', 'viewOf', 'UNIX', factorySource(columns)) as Factory;
    } catch {
      factory = null;
    }
    factories.set(shape, factory);
  }
  if (factory === null) return (from, to, out, limit) => writeFlatTuples(columns, room, from, to, out, limit);
  return factory(columns, room, copyField, putScaledNumeric, viewOf, UNIX_TO_POSTGRES_DAYS);
}

type Factory = (cols: readonly ColumnTuples[], room: number, copy: typeof copyField, numeric: typeof putScaledNumeric, view: typeof viewOf, unix: number) => FlatTuplesWriter;
const factories = new Map<string, Factory | null>();

/** The source of a factory that binds `cols`' arrays to locals and returns the plan's writer (see `writeFlatTuples` for each kind's bytes). */
function factorySource(columns: readonly ColumnTuples[]): string {
  const n = columns.length;
  const binds: string[] = [];
  const fields: string[] = [];
  // After a field written by its own writer: room again, and the buffer may have moved.
  const again = (k: number): string => `if (!own) return { row: r, column: ${k} }; out.reserve(room); b = out.bytes; view = viewOf(b); p = out.pos;`;
  for (const [k, c] of columns.entries()) {
    binds.push(`const c${k} = cols[${k}], ix${k} = c${k}.index, base${k} = c${k}.base, by${k} = c${k}.bytes, v${k} = c${k}.view, i32${k} = c${k}.i32, sp${k} = c${k}.span, at${k} = c${k}.at, ln${k} = c${k}.len, w${k} = c${k}.write, cell${k} = c${k}.cell, sc${k} = c${k}.scale;`);
    if (c.kind === CELL) {
      fields.push(`out.pos = p; own = cell${k}(r, out); ${again(k)}`);
      continue;
    }
    let body: string;
    switch (c.kind) {
      case TABLE:
        body = `const len = ln${k}[i]; if (len < 0) return { row: r, column: ${k} }; p = copyField(view, b, p, v${k}, by${k}, at${k}[i], len);`;
        break;
      case INT32:
      case DATE:
        body = `const v = i32${k}[i]${c.kind === DATE ? ' - UNIX' : ''}; b[p] = 0; b[p + 1] = 0; b[p + 2] = 0; b[p + 3] = 4; b[p + 4] = v >> 24; b[p + 5] = v >> 16; b[p + 6] = v >> 8; b[p + 7] = v; p += 8;`;
        break;
      case LE8:
        body = `const s = 8 * i; view.setInt32(p, 8); view.setUint32(p + 4, v${k}.getUint32(s + 4, true)); view.setUint32(p + 8, v${k}.getUint32(s, true)); p += 12;`;
        break;
      case SPAN:
        body = `const s = sp${k}[2 * i], len = sp${k}[2 * i + 1] - s; b[p] = len >> 24; b[p + 1] = len >> 16; b[p + 2] = len >> 8; b[p + 3] = len; p = copyField(view, b, p + 4, v${k}, by${k}, s, len);`;
        break;
      case DECIMAL32:
        body = `p = putScaledNumeric(b, p, i32${k}[i], sc${k});`;
        break;
      case DECIMAL64:
        body = `const lo = i32${k}[2 * i] >>> 0, hi = i32${k}[2 * i + 1]; if (hi >= -2097152 && hi < 2097152) p = putScaledNumeric(b, p, hi * 4294967296 + lo, sc${k}); else { out.pos = p; own = w${k}(i, out); ${again(k)} }`;
        break;
      default:
        body = `out.pos = p; own = w${k}(i, out); ${again(k)}`;
    }
    fields.push(`{ const i = ix${k}[base${k} + r]; if (i < 0) { b[p] = 0xff; b[p + 1] = 0xff; b[p + 2] = 0xff; b[p + 3] = 0xff; p += 4; } else { ${body} } }`);
  }
  return `'use strict';
${binds.join('\n')}
return function flatTuples(from, to, out, limit) {
  let r = from, own = true;
  while (r < to && out.pos < limit) {
    out.reserve(room);
    let b = out.bytes, view = viewOf(b), p = out.pos;
    b[p] = ${n >> 8}; b[p + 1] = ${n & 0xff}; p += 2;
    ${fields.join('\n    ')}
    out.pos = p;
    r++;
  }
  return r;
};`;
}
