/**
 * Writing fields straight into a preallocated buffer: each function takes the buffer and
 * a position and returns the position after what it wrote. No strings are built per row.
 */

export const PIPE = 0x7c;
export const NEWLINE = 0x0a;
export const TAB = 0x09;
const ZERO = 0x30;
const MINUS = 0x2d;
const DOT = 0x2e;

/** "00", "01", … "99" as byte pairs. */
const PAIRS = new Uint8Array(200);
for (let i = 0; i < 100; i++) {
  PAIRS[2 * i] = ZERO + Math.floor(i / 10);
  PAIRS[2 * i + 1] = ZERO + (i % 10);
}

function digitCount(n: number): number {
  if (n < 10) return 1;
  if (n < 100) return 2;
  if (n < 1000) return 3;
  if (n < 10000) return 4;
  if (n < 100000) return 5;
  if (n < 1000000) return 6;
  if (n < 10000000) return 7;
  if (n < 100000000) return 8;
  if (n < 1000000000) return 9;
  return String(n).length;
}

/** A non-negative integer below 2^53, in decimal. */
export function writeUint(buf: Uint8Array, pos: number, n: number): number {
  const end = pos + digitCount(n);
  let p = end;
  if (n < 4294967296) {
    // 32-bit path: integer division stays in small integers
    let v = n >>> 0;
    while (v >= 100) {
      const q = (v / 100) >>> 0;
      const r = (v - q * 100) << 1;
      buf[--p] = PAIRS[r + 1]!;
      buf[--p] = PAIRS[r]!;
      v = q;
    }
    if (v >= 10) {
      buf[--p] = PAIRS[(v << 1) + 1]!;
      buf[--p] = PAIRS[v << 1]!;
    } else {
      buf[--p] = ZERO + v;
    }
    return end;
  }
  let v = n;
  while (v > 0) {
    const q = Math.floor(v / 10);
    buf[--p] = ZERO + (v - q * 10);
    v = q;
  }
  return end;
}

/** An integer zero-padded to `width` digits (the 9 digits of `Customer#000000042`). */
export function writeUintPadded(buf: Uint8Array, pos: number, n: number, width: number): number {
  const end = pos + width;
  let p = end;
  let v = n;
  while (p > pos) {
    const q = Math.floor(v / 10);
    buf[--p] = ZERO + (v - q * 10);
    v = q;
  }
  return end;
}

/** An amount in cents as a decimal with two places: -12345 → `-123.45`, 5 → `0.05`. */
export function writeCents(buf: Uint8Array, pos: number, cents: number): number {
  if (cents < 0) {
    buf[pos++] = MINUS;
    cents = -cents;
  }
  const whole = Math.floor(cents / 100);
  const frac = (cents - whole * 100) << 1;
  pos = writeUint(buf, pos, whole);
  buf[pos] = DOT;
  buf[pos + 1] = PAIRS[frac]!;
  buf[pos + 2] = PAIRS[frac + 1]!;
  return pos + 3;
}

/** Copy `len` bytes of `src` from `from`; a plain loop beats a native call for short runs. */
export function writeBytes(buf: Uint8Array, pos: number, src: Uint8Array, from: number, len: number): number {
  if (len > 64) {
    buf.set(src.subarray(from, from + len), pos);
    return pos + len;
  }
  for (let i = 0; i < len; i++) buf[pos + i] = src[from + i]!;
  return pos + len;
}

/** A whole byte string (a precomputed word). */
export function writeWord(buf: Uint8Array, pos: number, word: Uint8Array): number {
  const len = word.length;
  for (let i = 0; i < len; i++) buf[pos + i] = word[i]!;
  return pos + len;
}

export function latin1(s: string): Buffer {
  return Buffer.from(s, 'latin1');
}

export function latin1List(list: readonly string[]): Buffer[] {
  return list.map(latin1);
}
