/**
 * A bijective scramble of 0..n-1 in O(1) memory: a Feistel network over the smallest
 * even-bit power-of-two domain ≥ n, cycle-walking until the value falls below n. The
 * domain is under 4n, so a walk averages fewer than four steps.
 */
import { fmix32 } from '../dbt3/prng.js';

const ROUNDS = 6;
/** Each half of a 2^52 domain is 26 bits, so every step stays in 32-bit integers. */
export const MAX_PERMUTATION_SIZE = 2 ** 52;

export class KeyPermutation {
  private readonly halfSize: number;
  private readonly mask: number;
  private readonly keys: Uint32Array;

  constructor(readonly size: number, seed: number) {
    if (!Number.isSafeInteger(size) || size < 1 || size > MAX_PERMUTATION_SIZE) {
      throw new Error(`A key permutation needs a size from 1 to 2^52, got ${size}`);
    }
    let bits = 2;
    while (2 ** bits < size) bits += 2;
    this.halfSize = 2 ** (bits / 2);
    this.mask = this.halfSize - 1;
    this.keys = new Uint32Array(ROUNDS);
    let k = fmix32((seed >>> 0) ^ 0x5bd1e995);
    for (let r = 0; r < ROUNDS; r++) {
      k = fmix32(k + 0x9e3779b9 + r);
      this.keys[r] = k;
    }
  }

  private scramble(x: number): number {
    let left = Math.floor(x / this.halfSize);
    let right = x - left * this.halfSize;
    for (let r = 0; r < ROUNDS; r++) {
      const next = (left ^ fmix32(right ^ this.keys[r]!)) & this.mask;
      left = right;
      right = next;
    }
    return left * this.halfSize + right;
  }

  /** The image of `i` (0 ≤ i < size), also in 0..size-1. */
  at(i: number): number {
    let x = i;
    do x = this.scramble(x);
    while (x >= this.size);
    return x;
  }
}
