/**
 * bytea: `bytearecv` takes the bytes as they are.
 *
 * Accepted text, as `byteain` reads it: the hex format `\x` followed by pairs of hex digits
 * (either case); or the escape format, where `\\` is a backslash, `\ooo` (first digit 0–3)
 * an octal byte, and any other byte stands for itself. Refused: blanks between hex pairs
 * (byteain skips them; rare, so we leave them to it), an odd number of hex digits, any other
 * backslash sequence, and bytes ≥ 0x80 or NUL in the escape format (the text wire would
 * first check and convert them as characters of the client encoding).
 */
import type { FieldEncoder, WireBuffer } from './field-encoder.js';
import { HEX, putInt32, writeLengthPrefixed } from './store.js';

export const byteaEncoder: FieldEncoder = {
  encode(src, start, end, out) {
    const n = end - start;
    out.reserve(4 + n);
    const b = out.bytes;
    const p = out.pos;
    let q = p + 4;
    if (n >= 2 && src[start] === 92 && src[start + 1] === 120) {
      if ((n & 1) !== 0) return false;
      for (let i = start + 2; i < end; i += 2) {
        const hi = HEX[src[i]!]!;
        const lo = HEX[src[i + 1]!]!;
        if ((hi | lo) < 0) return false;
        b[q++] = (hi << 4) | lo;
      }
    } else {
      for (let i = start; i < end; i++) {
        const c = src[i]!;
        if (c === 0 || c >= 0x80) return false;
        if (c !== 92) {
          b[q++] = c;
          continue;
        }
        const c1 = src[i + 1];
        if (i + 1 < end && c1 === 92) {
          b[q++] = 92;
          i++;
        } else if (i + 3 < end && c1! >= 48 && c1! <= 51 && isOctal(src[i + 2]!) && isOctal(src[i + 3]!)) {
          b[q++] = ((c1! - 48) << 6) | ((src[i + 2]! - 48) << 3) | (src[i + 3]! - 48);
          i += 3;
        } else return false;
      }
    }
    putInt32(b, p, q - p - 4);
    out.pos = q;
    return true;
  },
};

function isOctal(c: number): boolean {
  return c >= 48 && c <= 55;
}

/** Appends a bytea field holding `bytes`. */
export const writeBytea: (out: WireBuffer, bytes: Uint8Array) => void = writeLengthPrefixed;
