/**
 * real, double precision: `float4recv`/`float8recv` read the IEEE 754 bits, big-endian.
 *
 * Accepted text: `[+-]?` digits with an optional point and fraction (`.5`, `5.`), an
 * optional exponent (`1.5e-7`: for floats it is plain notation, and the value is exact as
 * long as we round the way `strtod`/`strtof` do), and `NaN`, `Infinity`, `+Infinity`,
 * `-Infinity` in any case. The decimal → double conversion is JavaScript's, which is
 * correctly rounded like glibc's `strtod`; up to 15 significant digits and powers of ten up
 * to 22 take the exact shortcut (one rounding of exact operands), longer ones go through
 * `Number()`.
 *
 * real is rounded twice here (decimal → double → float), which differs from `strtof`'s one
 * rounding only when the double lands exactly halfway between two floats: such values are
 * refused. Also refused: values that overflow (the server says "out of range"), values
 * that underflow to zero or to a subnormal number (where `strtod` reports ERANGE and
 * versions differ), `inf`, hexadecimal floats, blanks, anything malformed.
 */
import type { FieldEncoder, WireBuffer } from './field-encoder.js';
import { matchesIgnoringCase } from './numeric.js';
import { putInt32 } from './store.js';

const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];
const DBL_MIN = 2.2250738585072014e-308;
const FLT_MIN = 1.1754943508222875e-38;

/**
 * The double nearest to the decimal text `src[start, end)`, ±Infinity for the infinity
 * words, NaN for `NaN`; undefined when the text is not accepted or under/overflows.
 */
export function parseFloatText(src: Uint8Array, start: number, end: number): number | undefined {
  let p = start;
  if (p === end) return undefined;
  let neg = false;
  let c = src[p]!;
  if (c === 45 || c === 43) {
    neg = c === 45;
    p++;
  }
  let mantissa = 0;
  let sigDigits = 0;
  let scale = 0; // digits after the point that went into the mantissa
  let digits = 0;
  let nonZero = false;
  while (p < end && (c = src[p]!) >= 48 && c <= 57) {
    if (c !== 48 || sigDigits > 0) {
      mantissa = mantissa * 10 + (c - 48);
      sigDigits++;
    }
    if (c !== 48) nonZero = true;
    digits++;
    p++;
  }
  if (p < end && src[p] === 46) {
    p++;
    while (p < end && (c = src[p]!) >= 48 && c <= 57) {
      if (c !== 48 || sigDigits > 0) {
        mantissa = mantissa * 10 + (c - 48);
        sigDigits++;
      }
      if (c !== 48) nonZero = true;
      scale++;
      digits++;
      p++;
    }
  }
  if (digits === 0) {
    if (p !== (neg || src[start] === 43 ? start + 1 : start)) return undefined; // a lone '.'
    if (p === start && matchesIgnoringCase(src, p, end, 'nan')) return NaN;
    if (matchesIgnoringCase(src, p, end, 'infinity')) return neg ? -Infinity : Infinity;
    return undefined;
  }
  let exp = 0;
  if (p < end && (src[p] === 101 || src[p] === 69)) {
    p++;
    let expNeg = false;
    if (p < end && (src[p] === 45 || src[p] === 43)) expNeg = src[p++] === 45;
    const expStart = p;
    while (p < end && (c = src[p]!) >= 48 && c <= 57) {
      if (exp < 100000) exp = exp * 10 + (c - 48);
      p++;
    }
    if (p === expStart) return undefined;
    if (expNeg) exp = -exp;
  }
  if (p !== end) return undefined;
  let v: number;
  const e10 = exp - scale;
  if (sigDigits <= 15 && e10 >= -22 && e10 <= 22) {
    v = e10 >= 0 ? mantissa * POW10[e10]! : mantissa / POW10[-e10]!;
  } else {
    let s = '';
    for (let i = start; i < end; i++) s += String.fromCharCode(src[i]!);
    v = Math.abs(Number(s));
  }
  if (!nonZero) return neg ? -0 : 0;
  if (v === Infinity || v < DBL_MIN) return undefined; // overflow, or underflow to zero or a subnormal
  return neg ? -v : v;
}

export const float8Encoder: FieldEncoder = {
  encode(src, start, end, out) {
    const v = parseFloatText(src, start, end);
    if (v === undefined) return false;
    writeFloat8(out, v);
    return true;
  },
};

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The float nearest to the double `d` when that is also the float nearest to the decimal `d` came from; undefined when it may not be. */
export function toFloat4(d: number): number | undefined {
  const f = Math.fround(d);
  if (f !== f) return f; // NaN
  if (f === Infinity || f === -Infinity) return d === f ? f : undefined;
  if (f === 0 ? d !== 0 : Math.abs(f) < FLT_MIN) return undefined;
  if (f !== d) {
    // The neighbouring float on d's other side; d halfway between them is a double rounding.
    f32[0] = f;
    const towardZero = Math.abs(d) < Math.abs(f);
    u32[0] = towardZero ? u32[0]! - 1 : u32[0]! + 1;
    const g = f32[0]!;
    if ((f + g) / 2 === d) return undefined;
  }
  return f;
}

export const float4Encoder: FieldEncoder = {
  encode(src, start, end, out) {
    const d = parseFloatText(src, start, end);
    if (d === undefined) return false;
    const f = toFloat4(d);
    if (f === undefined) return false;
    writeFloat4(out, f);
    return true;
  },
};

const f64 = new Float64Array(1);
const f64Bytes = new Uint8Array(f64.buffer);
const f32Bytes = new Uint8Array(f32.buffer);
const littleEndian = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/** Appends a float8 field. NaN goes as the server's own NaN, 0x7ff8000000000000. */
export function writeFloat8(out: WireBuffer, v: number): void {
  out.reserve(12);
  const b = out.bytes;
  const p = out.pos;
  putInt32(b, p, 8);
  f64[0] = v !== v ? NaN : v;
  if (littleEndian) for (let i = 0; i < 8; i++) b[p + 4 + i] = f64Bytes[7 - i]!;
  else for (let i = 0; i < 8; i++) b[p + 4 + i] = f64Bytes[i]!;
  if (v !== v) {
    b[p + 4] = 0x7f;
    b[p + 5] = 0xf8;
    for (let i = 6; i < 12; i++) b[p + i] = 0;
  }
  out.pos = p + 12;
}

/** Appends a float4 field (`v` is rounded to float). NaN goes as 0x7fc00000. */
export function writeFloat4(out: WireBuffer, v: number): void {
  out.reserve(8);
  const b = out.bytes;
  const p = out.pos;
  putInt32(b, p, 4);
  if (v !== v) {
    putInt32(b, p + 4, 0x7fc00000);
  } else {
    f32[0] = v;
    if (littleEndian) for (let i = 0; i < 4; i++) b[p + 4 + i] = f32Bytes[3 - i]!;
    else for (let i = 0; i < 4; i++) b[p + 4 + i] = f32Bytes[i]!;
  }
  out.pos = p + 8;
}
