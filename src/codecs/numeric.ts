/**
 * numeric: `numeric_recv` reads int16 ndigits, int16 weight, uint16 sign, uint16 dscale,
 * then ndigits base-10000 digits (int16 each, most significant first); the value is
 * Σ digit[i] · 10000^(weight − i), and dscale is how many decimal digits follow the point.
 * It then rounds to the column's typmod exactly as `numeric_in` does, so we send the value
 * as written and let the server apply numeric(p,s).
 *
 * What we send is what `numeric_send(numeric_in(s))` gives: digits grouped by four around
 * the decimal point, leading and trailing zero groups dropped (weight adjusted), dscale =
 * the number of digits written after the point (`1.50` → 2), zero as no digits with weight
 * 0 and a positive sign (`-0.00` is 0 with dscale 2), `NaN` as sign 0xC000, ±Infinity as
 * 0xD000/0xF000 (dscale as numeric_send gives them: 0, 32) (PostgreSQL 14 on; before that the text wire lets the server refuse it).
 *
 * Accepted text: `[+-]?` digits with an optional `.` and more digits (`.5`, `5.` and
 * leading zeros included), at most 2000 digits on either side of the point; `NaN`,
 * `Infinity`, `+Infinity`, `-Infinity` in any case. Refused: exponents (`1e5`), blanks,
 * `inf`, PostgreSQL 16's `1_000` and `0x1F`, anything else malformed.
 */
import type { FieldEncoder, WireBuffer } from './field-encoder.js';
import { putInt16, putInt32 } from './store.js';

export const NUMERIC_POS = 0x0000;
export const NUMERIC_NEG = 0x4000;
export const NUMERIC_NAN = 0xc000;
export const NUMERIC_PINF = 0xd000;
export const NUMERIC_NINF = 0xf000;

/** Well below numeric_in's own limits (131072 digits before the point, 16383 after). */
const MAX_DIGITS_EACH_SIDE = 2000;

/** The numeric encoder; `withInfinity` when the server has numeric ±Infinity (server_version_num ≥ 140000). */
export function numericEncoder(withInfinity: boolean): FieldEncoder {
  return withInfinity ? numericWithInfinity : numericWithoutInfinity;
}

const numericWithInfinity: FieldEncoder = { encode: (src, start, end, out) => encodeNumericText(src, start, end, out, true), fast: 'numeric' };
const numericWithoutInfinity: FieldEncoder = { encode: (src, start, end, out) => encodeNumericText(src, start, end, out, false), fast: 'numeric' };

function encodeNumericText(src: Uint8Array, start: number, end: number, out: WireBuffer, withInfinity: boolean): boolean {
  let p = start;
  if (p === end) return false;
  let neg = false;
  let c = src[p]!;
  if (c === 45) {
    neg = true;
    p++;
  } else if (c === 43) p++;
  const intStart = p;
  while (p < end && (c = src[p]!) >= 48 && c <= 57) p++;
  const intEnd = p;
  let fracStart = p;
  let fracEnd = p;
  if (p < end && src[p] === 46) {
    fracStart = ++p;
    while (p < end && (c = src[p]!) >= 48 && c <= 57) p++;
    fracEnd = p;
  }
  if (p !== end || (intEnd === intStart && fracEnd === fracStart)) {
    if (intEnd === intStart && fracStart === intEnd) return encodeSpecial(src, start, intStart, end, neg, out, withInfinity);
    return false;
  }
  return encodeDigits(src, intStart, intEnd, fracStart, fracEnd, neg, out);
}

/** `NaN` (no sign) or `[+-]?Infinity`, any case; anything else is refused. */
function encodeSpecial(src: Uint8Array, start: number, at: number, end: number, neg: boolean, out: WireBuffer, withInfinity: boolean): boolean {
  let sign: number;
  if (at === start && matchesIgnoringCase(src, at, end, 'nan')) sign = NUMERIC_NAN;
  else if (withInfinity && matchesIgnoringCase(src, at, end, 'infinity')) sign = neg ? NUMERIC_NINF : NUMERIC_PINF;
  else return false;
  writeNumericHeader(out, 0, 0, sign, specialDscale(sign));
  return true;
}

/**
 * The dscale numeric_send gives a special value: it reads the short-header dscale bits of
 * the sign word, which are 0 for NaN (0xC000) and 32 for ±Infinity (0xD000, 0xF000).
 * numeric_recv ignores it; we send it so our bytes are the server's own.
 */
function specialDscale(sign: number): number {
  return (sign & 0x1f80) >> 7;
}

export function matchesIgnoringCase(src: Uint8Array, start: number, end: number, lower: string): boolean {
  if (end - start !== lower.length) return false;
  for (let i = 0; i < lower.length; i++) if ((src[start + i]! | 0x20) !== lower.charCodeAt(i)) return false;
  return true;
}

function writeNumericHeader(out: WireBuffer, ndigits: number, weight: number, sign: number, dscale: number): void {
  out.reserve(12);
  const b = out.bytes;
  const p = out.pos;
  putInt32(b, p, 8 + 2 * ndigits);
  putInt16(b, p + 4, ndigits);
  putInt16(b, p + 6, weight);
  putInt16(b, p + 8, sign);
  putInt16(b, p + 10, dscale);
  out.pos = p + 12;
}

/**
 * Appends the numeric whose integer digits are `src[intStart, intEnd)` and fraction digits
 * `src[fracStart, fracEnd)` (ASCII digits, already checked), negative when `neg`; with
 * `small`, the common case by `writeScaledNumeric` (writeNumericFromDecimal's callers try
 * that first: it goes group by group, which the unit tests compare the two with).
 */
function encodeDigits(src: Uint8Array, intStart: number, intEnd: number, fracStart: number, fracEnd: number, neg: boolean, out: WireBuffer, small = true): boolean {
  let i = intStart;
  while (i < intEnd && src[i] === 48) i++;
  const nInt = intEnd - i;
  const dscale = fracEnd - fracStart;
  if (nInt > MAX_DIGITS_EACH_SIDE || dscale > MAX_DIGITS_EACH_SIDE) return false;
  if (small && nInt <= 8 && dscale <= 4) {
    writeSmallNumeric(src, i, intEnd, fracStart, fracEnd, neg, out);
    return true;
  }
  const intGroups = (nInt + 3) >> 2;
  out.reserve(12 + 2 * (intGroups + ((dscale + 3) >> 2)));
  const b = out.bytes;
  const base = out.pos;
  let q = base + 12;
  let weight = intGroups - 1;
  if (nInt > 0) {
    // The first group holds what is left over when the integer digits are cut in fours from the point.
    const first = nInt & 3 || 4;
    let g = 0;
    for (let k = 0; k < first; k++) g = g * 10 + src[i++]! - 48;
    b[q] = g >> 8;
    b[q + 1] = g;
    q += 2;
    while (i < intEnd) {
      g = (src[i]! - 48) * 1000 + (src[i + 1]! - 48) * 100 + (src[i + 2]! - 48) * 10 + (src[i + 3]! - 48);
      i += 4;
      b[q] = g >> 8;
      b[q + 1] = g;
      q += 2;
    }
  }
  let f = fracStart;
  while (f < fracEnd) {
    let g: number;
    if (f + 4 <= fracEnd) {
      g = (src[f]! - 48) * 1000 + (src[f + 1]! - 48) * 100 + (src[f + 2]! - 48) * 10 + (src[f + 3]! - 48);
      f += 4;
    } else {
      g = 0;
      let k = 0;
      for (; f < fracEnd; f++, k++) g = g * 10 + src[f]! - 48;
      for (; k < 4; k++) g *= 10;
    }
    if (g === 0 && q === base + 12) {
      weight--; // a leading zero group after the point: 0.00001 has weight -2
      continue;
    }
    b[q] = g >> 8;
    b[q + 1] = g;
    q += 2;
  }
  while (q > base + 12 && b[q - 1] === 0 && b[q - 2] === 0) q -= 2;
  const ndigits = (q - base - 12) >> 1;
  if (ndigits === 0) {
    weight = 0;
    neg = false;
  }
  putInt32(b, base, 8 + 2 * ndigits);
  putInt16(b, base + 4, ndigits);
  putInt16(b, base + 6, weight);
  putInt16(b, base + 8, neg ? NUMERIC_NEG : NUMERIC_POS);
  putInt16(b, base + 10, dscale);
  out.pos = q;
  return true;
}

/**
 * The common case (prices, quantities): at most 8 integer digits (leading zeros gone) and
 * 4 after the point, read as one safe integer for `putScaledNumeric`.
 */
function writeSmallNumeric(src: Uint8Array, i: number, intEnd: number, fracStart: number, fracEnd: number, neg: boolean, out: WireBuffer): void {
  let v = 0;
  for (; i < intEnd; i++) v = v * 10 + (src[i]! - 48);
  for (let f = fracStart; f < fracEnd; f++) v = v * 10 + (src[f]! - 48);
  writeScaledNumeric(out, neg ? -v : v, fracEnd - fracStart);
}

const POW10 = [1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000];
/** What a fraction of `scale` digits is multiplied by to fill whole base-10000 groups. */
const GROUP_SCALE = [1, 1000, 100, 10, 1, 1000, 100, 10, 1];

/**
 * Appends the numeric `unscaled · 10^-scale` for a safe integer and scale 0–8, as
 * `numeric_send` gives it (`writeNumericFromDecimal`'s bytes, without a string): the
 * small case of the text encoder above, the record splitter's fast path
 * (src/wire/fast-fields.ts) and a Parquet DECIMAL's (src/input/parquet/).
 */
export function writeScaledNumeric(out: WireBuffer, unscaled: number, scale: number): void {
  out.reserve(SCALED_NUMERIC_ROOM);
  out.pos = putScaledNumeric(out.bytes, out.pos, unscaled, scale);
}

/** Bytes `putScaledNumeric` writes at most: length, header, and 6 base-10000 digits (4 whole ones below 2^53, 2 of fraction). */
export const SCALED_NUMERIC_ROOM = 24;

/**
 * `writeScaledNumeric` into `b` at `p` (room reserved by the caller); returns the
 * position after it. Base-10000 digits, the leading and trailing zero ones dropped,
 * dscale = scale, the sign positive for zero (`-0.00`). The same routine in C serves the
 * WebAssembly modules: src/codecs/wasm/numeric-send.h.
 */
export function putScaledNumeric(b: Uint8Array, p: number, unscaled: number, scale: number): number {
  const neg = unscaled < 0;
  const a = neg ? -unscaled : unscaled;
  const p10 = POW10[scale]!;
  let whole: number;
  let frac: number;
  if (a <= 0x7fffffff) {
    // int32 arithmetic (a division by a constant becomes a multiplication).
    whole = (a / p10) | 0;
    frac = a - whole * p10;
  } else {
    whole = Math.floor(a / p10);
    frac = a - whole * p10;
  }
  // The whole part's base-10000 digits, most significant first (whole < 2^53 < 10^16: at most 4, the first not zero).
  let q = p + 12;
  let weight = -1;
  if (whole >= 1e8) {
    const top = Math.floor(whole / 1e8);
    const low = whole - top * 1e8;
    if (top >= 10000) {
      const t = (top / 10000) | 0;
      q = putDigit(b, putDigit(b, q, t), top - t * 10000);
      weight = 3;
    } else {
      q = putDigit(b, q, top);
      weight = 2;
    }
    const l = (low / 10000) | 0;
    q = putDigit(b, putDigit(b, q, l), low - l * 10000);
  } else if (whole >= 10000) {
    const t = (whole / 10000) | 0;
    q = putDigit(b, putDigit(b, q, t), whole - t * 10000);
    weight = 1;
  } else if (whole > 0) {
    q = putDigit(b, q, whole);
    weight = 0;
  }
  // Then the fraction padded to whole digits (scale 1–4: one, 5–8: two); a zero one before any other only lowers the weight.
  if (scale > 4) {
    const padded = frac * GROUP_SCALE[scale]!;
    const hi = (padded / 10000) | 0;
    if (hi !== 0 || q !== p + 12) q = putDigit(b, q, hi);
    else weight--;
    q = putDigit(b, q, padded - hi * 10000);
  } else if (scale > 0) q = putDigit(b, q, frac * GROUP_SCALE[scale]!);
  // Trailing zero digits dropped; zero is no digits, weight 0, positive.
  while (q > p + 12 && b[q - 1] === 0 && b[q - 2] === 0) q -= 2;
  const ndigits = (q - p - 12) >> 1;
  const len = 8 + 2 * ndigits;
  if (ndigits === 0) weight = 0;
  b[p] = 0;
  b[p + 1] = 0;
  b[p + 2] = len >> 8;
  b[p + 3] = len;
  b[p + 4] = 0;
  b[p + 5] = ndigits;
  b[p + 6] = weight >> 8;
  b[p + 7] = weight;
  b[p + 8] = neg && ndigits !== 0 ? NUMERIC_NEG >> 8 : 0;
  b[p + 9] = 0;
  b[p + 10] = 0;
  b[p + 11] = scale;
  return q;
}

function putDigit(b: Uint8Array, q: number, g: number): number {
  b[q] = g >> 8;
  b[q + 1] = g;
  return q + 2;
}

/**
 * Appends the numeric `unscaled · 10^-scale` (a Parquet or Arrow DECIMAL), with dscale =
 * `scale` as numeric_in would give for the same value written with `scale` decimals.
 * A negative scale multiplies (dscale 0). Returns false when it has more than 2000 digits.
 */
export function writeNumericFromDecimal(out: WireBuffer, unscaled: bigint, scale: number): boolean {
  const neg = unscaled < 0n;
  let digits = (neg ? -unscaled : unscaled).toString();
  if (scale < 0) {
    digits += '0'.repeat(-scale);
    scale = 0;
  }
  if (digits.length <= scale) digits = '0'.repeat(scale - digits.length + 1) + digits;
  const bytes = Buffer.from(digits, 'latin1');
  const point = bytes.length - scale;
  return encodeDigits(bytes, 0, point, point, bytes.length, neg, out, false);
}

/** Appends NaN, +Infinity or -Infinity (the sign word: NUMERIC_NAN, NUMERIC_PINF, NUMERIC_NINF). */
export function writeNumericSpecial(out: WireBuffer, sign: typeof NUMERIC_NAN | typeof NUMERIC_PINF | typeof NUMERIC_NINF): void {
  writeNumericHeader(out, 0, 0, sign, specialDscale(sign));
}
