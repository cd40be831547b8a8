/**
 * smallint, integer, bigint: `int2recv`/`int4recv`/`int8recv` read a big-endian two's
 * complement integer of 2, 4 or 8 bytes.
 *
 * Accepted text: an optional `-` or `+`, then decimal digits (leading zeros are fine).
 * Refused (the server decides): blanks, an empty field, anything out of the type's range
 * (the server says "out of range" with its own message), and PostgreSQL 16's `0x`/`0o`/`0b`
 * and `1_000` forms.
 */
import type { FieldEncoder, WireBuffer } from './field-encoder.js';
import { putInt16, putInt32, putInt64BigInt, putInt64Number } from './store.js';

/**
 * The value of `src[start, end)` as an integer of at most `maxDigits` significant digits
 * (≤ 15, so it is exact in a double), or NaN when the text is not `[+-]?[0-9]+` or too long.
 */
function parseSmallInteger(src: Uint8Array, start: number, end: number, maxDigits: number): number {
  let p = start;
  let neg = false;
  if (p < end) {
    const c = src[p]!;
    if (c === 45) {
      neg = true;
      p++;
    } else if (c === 43) p++;
  }
  if (p === end) return NaN;
  while (p < end - 1 && src[p] === 48) p++;
  if (end - p > maxDigits) return NaN;
  let v = 0;
  for (; p < end; p++) {
    const d = src[p]! - 48;
    if (d < 0 || d > 9) return NaN;
    v = v * 10 + d;
  }
  return neg ? -v : v;
}

export const int2Encoder: FieldEncoder = {
  fast: 'int2',
  encode(src, start, end, out) {
    const v = parseSmallInteger(src, start, end, 5);
    if (!(v >= -32768 && v <= 32767)) return false;
    writeInt16(out, v);
    return true;
  },
};

export const int4Encoder: FieldEncoder = {
  fast: 'int4',
  encode(src, start, end, out) {
    const v = parseSmallInteger(src, start, end, 10);
    if (!(v >= -2147483648 && v <= 2147483647)) return false;
    writeInt32(out, v);
    return true;
  },
};

const INT8_MIN = -(2n ** 63n);
const INT8_MAX = 2n ** 63n - 1n;

export const int8Encoder: FieldEncoder = {
  fast: 'int8',
  encode(src, start, end, out) {
    const v = parseSmallInteger(src, start, end, 15);
    if (v === v) {
      writeInt64(out, v);
      return true;
    }
    // 16 to 19 significant digits: rare, so a bigint is fine here.
    const big = parseBigInteger(src, start, end);
    if (big === undefined || big < INT8_MIN || big > INT8_MAX) return false;
    writeInt64(out, big);
    return true;
  },
};

function parseBigInteger(src: Uint8Array, start: number, end: number): bigint | undefined {
  let p = start;
  let neg = false;
  if (p < end && (src[p] === 45 || src[p] === 43)) neg = src[p++] === 45;
  if (p === end || end - p > 40) return undefined;
  let s = '';
  for (; p < end; p++) {
    const c = src[p]!;
    if (c < 48 || c > 57) return undefined;
    s += String.fromCharCode(c);
  }
  const v = BigInt(s);
  return neg ? -v : v;
}

/** Appends an int2 field (length 2). `v` must be an integer in range. */
export function writeInt16(out: WireBuffer, v: number): void {
  out.reserve(6);
  const b = out.bytes;
  const p = out.pos;
  putInt32(b, p, 2);
  putInt16(b, p + 4, v);
  out.pos = p + 6;
}

/** Appends an int4 field (length 4). `v` must be an integer in range. */
export function writeInt32(out: WireBuffer, v: number): void {
  out.reserve(8);
  const b = out.bytes;
  const p = out.pos;
  putInt32(b, p, 4);
  putInt32(b, p + 4, v);
  out.pos = p + 8;
}

/** Appends an int8 field (length 8): a bigint in range, or a safe integer number. */
export function writeInt64(out: WireBuffer, v: bigint | number): void {
  out.reserve(12);
  const b = out.bytes;
  const p = out.pos;
  putInt32(b, p, 8);
  if (typeof v === 'number') putInt64Number(b, p + 4, v);
  else putInt64BigInt(b, p + 4, v);
  out.pos = p + 12;
}
