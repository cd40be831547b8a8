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
 * `src[fracStart, fracEnd)` (ASCII digits, already checked), negative when `neg`.
 */
function encodeDigits(src: Uint8Array, intStart: number, intEnd: number, fracStart: number, fracEnd: number, neg: boolean, out: WireBuffer): boolean {
  let i = intStart;
  while (i < intEnd && src[i] === 48) i++;
  const nInt = intEnd - i;
  const dscale = fracEnd - fracStart;
  if (nInt > MAX_DIGITS_EACH_SIDE || dscale > MAX_DIGITS_EACH_SIDE) return false;
  if (nInt <= 8 && dscale <= 4) {
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

const FRACTION_GROUP_SCALE = [10000, 1000, 100, 10, 1];

/**
 * The common case (prices, quantities): at most 8 integer digits (leading zeros gone) and
 * 4 after the point, so at most three base-10000 digits — hi and lo of the integer part,
 * then the fraction — computed as numbers instead of group by group.
 */
function writeSmallNumeric(src: Uint8Array, i: number, intEnd: number, fracStart: number, fracEnd: number, neg: boolean, out: WireBuffer): void {
  let iv = 0;
  for (; i < intEnd; i++) iv = iv * 10 + (src[i]! - 48);
  let fv = 0;
  for (let f = fracStart; f < fracEnd; f++) fv = fv * 10 + (src[f]! - 48);
  putSmallNumeric(out, iv, fv, fracEnd - fracStart, neg);
}

/**
 * Appends the numeric `iv.fv` written with `dscale` (0–4) fraction digits, `iv` < 10^8:
 * `fv` is the fraction digits' value (`.05` → 5 with dscale 2). Shared by the small case
 * above and the record splitter's fast path (src/wire/fast-fields.ts).
 */
export function putSmallNumeric(out: WireBuffer, iv: number, fv: number, dscale: number, neg: boolean): void {
  fv *= FRACTION_GROUP_SCALE[dscale]!;
  const hi = Math.floor(iv / 10000);
  const lo = iv - hi * 10000;
  // Groups hi, lo, fv have weights 1, 0, -1: drop the leading and trailing zero ones.
  const first = hi !== 0 ? 0 : lo !== 0 ? 1 : 2;
  const last = fv !== 0 ? 2 : lo !== 0 ? 1 : 0;
  const ndigits = iv === 0 && fv === 0 ? 0 : last - first + 1;
  out.reserve(18);
  const b = out.bytes;
  const p = out.pos;
  putInt32(b, p, 8 + 2 * ndigits);
  putInt16(b, p + 4, ndigits);
  putInt16(b, p + 6, ndigits === 0 ? 0 : 1 - first);
  putInt16(b, p + 8, neg && ndigits !== 0 ? NUMERIC_NEG : NUMERIC_POS);
  putInt16(b, p + 10, dscale);
  let q = p + 12;
  for (let k = first; k < first + ndigits; k++) {
    const g = k === 0 ? hi : k === 1 ? lo : fv;
    b[q] = g >> 8;
    b[q + 1] = g;
    q += 2;
  }
  out.pos = q;
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
  return encodeDigits(bytes, 0, point, point, bytes.length, neg, out);
}

/** Appends NaN, +Infinity or -Infinity (the sign word: NUMERIC_NAN, NUMERIC_PINF, NUMERIC_NINF). */
export function writeNumericSpecial(out: WireBuffer, sign: typeof NUMERIC_NAN | typeof NUMERIC_PINF | typeof NUMERIC_NINF): void {
  writeNumericHeader(out, 0, 0, sign, specialDscale(sign));
}
