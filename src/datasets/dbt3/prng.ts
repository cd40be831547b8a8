/**
 * A small, fast PRNG seeded per row, so any row of any table can be generated on its
 * own: the same (seed, stream, row) always gives the same numbers, in any worker, in
 * any slice. xoroshiro64** over two 32-bit words, initialised by murmur3's finaliser.
 */

/** murmur3's 32-bit finaliser: a cheap bijective mix. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const TWO_POW_32 = 4294967296;
const INV_TWO_POW_32 = 1 / TWO_POW_32;

export class RowRng {
  private s0 = 1;
  private s1 = 2;

  /** Reseed for one row of one stream. `row` may be any non-negative integer below 2^53. */
  seed(seed: number, stream: number, row: number): this {
    const lo = row >>> 0;
    const hi = Math.floor(row * INV_TWO_POW_32) >>> 0;
    const base = fmix32((seed >>> 0) ^ Math.imul(stream + 1, 0x9e3779b1));
    let a = fmix32(base ^ Math.imul(lo, 0xcc9e2d51) ^ hi);
    let b = fmix32((a + 0x6a09e667) ^ Math.imul(hi + 1, 0x1b873593) ^ lo);
    if (a === 0 && b === 0) b = 1; // the one state xoroshiro cannot leave
    this.s0 = a;
    this.s1 = b;
    return this;
  }

  /** The next 32 random bits, as an unsigned integer. */
  next(): number {
    const s0 = this.s0;
    let s1 = this.s1;
    const m = Math.imul(s0, 0x9e3779bb);
    const result = Math.imul((m << 5) | (m >>> 27), 5) >>> 0;
    s1 ^= s0;
    this.s0 = (((s0 << 26) | (s0 >>> 6)) ^ s1 ^ (s1 << 9)) | 0;
    this.s1 = ((s1 << 13) | (s1 >>> 19)) | 0;
    return result;
  }

  /** A uniform integer in [lo, hi], both inclusive; hi - lo below 2^31. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1) * INV_TWO_POW_32);
  }
}

/** Stream numbers: one per kind of row, so tables never share random numbers by accident. */
export const STREAM = {
  region: 1,
  nation: 2,
  supplier: 3,
  customer: 4,
  part: 5,
  partsupp: 6,
  order: 7,
  textPool: 8,
  narrow: 9,
} as const;
