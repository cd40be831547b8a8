/**
 * Big-endian stores into a WireBuffer's bytes, as plain indexed writes (a Uint8Array store
 * keeps the low 8 bits of the number, so no masking is needed). The callers reserve first.
 */
import type { WireBuffer } from './field-encoder.js';

/** A hex digit's value by its byte (either case), -1 for any other byte. */
export const HEX: Int8Array = new Int8Array(256).fill(-1);
for (let i = 0; i < 10; i++) HEX[48 + i] = i;
for (let i = 0; i < 6; i++) {
  HEX[65 + i] = 10 + i;
  HEX[97 + i] = 10 + i;
}

export function putInt16(b: Uint8Array, p: number, v: number): void {
  b[p] = v >> 8;
  b[p + 1] = v;
}

export function putInt32(b: Uint8Array, p: number, v: number): void {
  b[p] = v >> 24;
  b[p + 1] = v >> 16;
  b[p + 2] = v >> 8;
  b[p + 3] = v;
}

/** An int64 given as a safe integer (|v| < 2^53): high word by floor division, so negatives come out in two's complement. */
export function putInt64Number(b: Uint8Array, p: number, v: number): void {
  const hi = Math.floor(v / 4294967296);
  const lo = v - hi * 4294967296;
  putInt32(b, p, hi);
  b[p + 4] = lo / 16777216;
  b[p + 5] = lo >>> 16;
  b[p + 6] = lo >>> 8;
  b[p + 7] = lo;
}

/** An int64 given as a bigint (already range-checked by the caller). */
export function putInt64BigInt(b: Uint8Array, p: number, v: bigint): void {
  const u = BigInt.asUintN(64, v);
  putInt32(b, p, Number(u >> 32n));
  putInt32(b, p + 4, Number(u & 0xffffffffn));
}

/** Appends a field that is `n` bytes copied from `src[start, start + n)`, length first. */
export function putField(out: WireBuffer, src: Uint8Array, start: number, n: number): void {
  out.reserve(4 + n);
  const b = out.bytes;
  const p = out.pos;
  putInt32(b, p, n);
  copyBytes(b, p + 4, src, start, n);
  out.pos = p + 4 + n;
}

/** A byte loop for short values (no subarray object); `set` for long ones. */
export function copyBytes(b: Uint8Array, p: number, src: Uint8Array, start: number, n: number): void {
  if (n < 48) {
    for (let i = 0; i < n; i++) b[p + i] = src[start + i]!;
  } else {
    b.set(src.subarray(start, start + n), p);
  }
}

/** Appends a field holding `bytes` as they are, length first. */
export function writeLengthPrefixed(out: WireBuffer, bytes: Uint8Array): void {
  putField(out, bytes, 0, bytes.length);
}
