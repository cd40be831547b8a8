/**
 * The record splitter's fast paths: the common forms of the common types, parsed while the
 * field's end is found (one pass over its bytes instead of a scan, then the encoder's own
 * pass) and called from a `switch` on the column's kind, so each call site sees one
 * function and V8 inlines it (the encoders' `encode` behind one call site is a megamorphic
 * call per field). On DBT-3 lineitem this took the splitter's cost from ~0.57 to ~0.3 µs
 * per row (bench/wire-encode.ts).
 *
 * Each `fast…` starts at the field's first byte `s`, writes the field to `out` and returns
 * the index of the first byte after the form it read — the caller accepts the field only
 * when that byte is the delimiter or the newline that ends the field, and otherwise puts
 * `out.pos` back and gives the field to the encoder's exact general path. So a fast path
 * needs only to be exact for what it reads, and returns -1 for anything beyond it. What
 * each reads is a subset of what its encoder accepts, and it writes the same bytes
 * (test/unit/wire/fast-fields.test.ts compares them on seeded random fields):
 *
 * - int2/int4/int8: `-?` then 1–4 / 1–9 / 1–15 digits (leading zeros count: in range by
 *   construction, and exact in a double);
 * - numeric: `-?` then at most 8 integer digits, optionally `.` and at most 4 more, at
 *   least one digit in all (`12345.67`, `.5`, `5.`): the encoder's small case;
 * - date: `YYYY-MM-DD` (then the encoder's own checks: a day that exists, year ≥ 1);
 * - text: ASCII without NUL or a backslash (those, and any byte ≥ 0x80, go to the encoder,
 *   which checks UTF-8 or the splitter unescapes).
 *
 * Not here, so always the general path: `+`, exponents, blanks, NaN, infinity, BC, longer
 * numbers.
 */
import type { FastKind, FieldEncoder, WireBuffer } from '../codecs/field-encoder.js';
import { parseIsoDate, writeDateDays } from '../codecs/date.js';
import { writeInt16, writeInt32, writeInt64 } from '../codecs/integers.js';
import { writeScaledNumeric } from '../codecs/numeric.js';
import { putInt32 } from '../codecs/store.js';

export const KIND_NONE = 0;
export const KIND_INT2 = 1;
export const KIND_INT4 = 2;
export const KIND_INT8 = 3;
export const KIND_NUMERIC = 4;
export const KIND_DATE = 5;
export const KIND_TEXT = 6;

const KIND_OF: Record<FastKind, number> = { int2: KIND_INT2, int4: KIND_INT4, int8: KIND_INT8, numeric: KIND_NUMERIC, date: KIND_DATE, text: KIND_TEXT };

const MINUS = 0x2d;
const DOT = 0x2e;
const POW10 = [1, 10, 100, 1000, 10000];

/**
 * The fast kind of each encoder (one more entry, KIND_NONE, for a field past the last
 * column, which the splitter refuses). None when the delimiter could be read as part of a
 * number or date (a digit, `-`, `.`: the server refuses such a delimiter for COPY text, but
 * binary COPY never sees it), so such a chunk takes the general path and its refusals.
 */
export function fastKinds(encoders: readonly FieldEncoder[], delimiter: number): Int8Array {
  const kinds = new Int8Array(encoders.length + 1);
  const numberish = (delimiter >= 0x30 && delimiter <= 0x39) || delimiter === MINUS || delimiter === DOT;
  encoders.forEach((e, i) => {
    const k = e.fast === undefined ? KIND_NONE : KIND_OF[e.fast];
    kinds[i] = numberish && k !== KIND_TEXT ? KIND_NONE : k;
  });
  return kinds;
}

/** The value of the digits the last `digitsFrom` read (module state: a second result without an allocation per field). */
let runValue = 0;

/** Reads the ASCII digits from `p`: returns the index past them, their value in `runValue` (exact up to 15 digits). */
function digitsFrom(d: Uint8Array, p: number, len: number): number {
  let v = 0;
  for (; p < len; p++) {
    const x = d[p]! - 48;
    if (x < 0 || x > 9) break;
    v = v * 10 + x;
  }
  runValue = v;
  return p;
}

/** `-?[0-9]{1,maxDigits}` at `s` → an int of `width` bytes (2, 4, 8). */
export function fastInteger(d: Uint8Array, s: number, len: number, maxDigits: number, width: number, out: WireBuffer): number {
  const neg = s < len && d[s] === MINUS;
  const digits = neg ? s + 1 : s;
  const p = digitsFrom(d, digits, len);
  const n = p - digits;
  if (n === 0 || n > maxDigits) return -1;
  const v = neg ? -runValue : runValue;
  if (width === 4) writeInt32(out, v);
  else if (width === 8) writeInt64(out, v);
  else writeInt16(out, v);
  return p;
}

/** `-?[0-9]{0,8}(\.[0-9]{0,4})?` with a digit at `s` → numeric (the encoder's small case). */
export function fastNumeric(d: Uint8Array, s: number, len: number, out: WireBuffer): number {
  const neg = s < len && d[s] === MINUS;
  const intStart = neg ? s + 1 : s;
  let p = digitsFrom(d, intStart, len);
  let v = runValue;
  const nInt = p - intStart;
  if (nInt > 8) return -1;
  let dscale = 0;
  if (p < len && d[p] === DOT) {
    const fracStart = p + 1;
    p = digitsFrom(d, fracStart, len);
    dscale = p - fracStart;
    if (dscale > 4) return -1;
    v = v * POW10[dscale]! + runValue;
  }
  if (nInt === 0 && dscale === 0) return -1;
  writeScaledNumeric(out, neg ? -v : v, dscale);
  return p;
}

/** `YYYY-MM-DD` at `s` (a real day, year ≥ 1) → date. */
export function fastDate(d: Uint8Array, s: number, len: number, out: WireBuffer): number {
  if (s + 10 > len) return -1;
  const days = parseIsoDate(d, s);
  if (days !== days) return -1;
  writeDateDays(out, days);
  return s + 10;
}

/**
 * Bytes that end fast text: NUL, `\n`, `\r`, the backslash, every byte ≥ 0x80, and the
 * delimiter (set per splitter: `textStops`).
 */
export function textStops(delimiter: number): Uint8Array {
  const t = new Uint8Array(256);
  t[0] = 1;
  t[0x0a] = 1;
  t[0x0d] = 1;
  t[0x5c] = 1;
  for (let c = 0x80; c < 256; c++) t[c] = 1;
  t[delimiter] = 1;
  return t;
}

/**
 * ASCII text at `s`, copied while its end is found. Returns the index of the byte that
 * ended it; a caller seeing NUL, a backslash or a byte ≥ 0x80 there gives the field to the
 * general path.
 */
export function fastText(d: Uint8Array, s: number, len: number, stops: Uint8Array, out: WireBuffer): number {
  // Room for the rest of the piece: the field cannot be longer.
  out.reserve(4 + len - s);
  const b = out.bytes;
  const at = out.pos;
  let q = at + 4;
  let p = s;
  for (; p < len; p++) {
    const c = d[p]!;
    if (stops[c] !== 0) break;
    b[q++] = c;
  }
  putInt32(b, at, p - s);
  out.pos = q;
  return p;
}
