import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * A minimal narrow-row source for `pgsurge decay`: rows of ~45 bytes with a unique
 * `id bigint` key, an integer and a short text, as PostgreSQL COPY text.
 *
 * Stand-in for the narrow-row generator being built on another branch
 * (`generateNarrow({rows, keys, seed, format, out})` in src/datasets/narrow/generate.ts):
 * `writeNarrowRows` takes the same options, so swapping it in is a one-line change in
 * src/decay/decay.ts.
 */

export const NARROW_KEYS = ['sequential', 'random'] as const;
export type NarrowKeys = (typeof NARROW_KEYS)[number];

export interface NarrowRowOptions {
  readonly rows: number;
  readonly keys: NarrowKeys;
  readonly seed: number;
}

/** The decay table's columns; the same shape as the narrow data set's `NARROW_COLUMNS`. */
export const DECAY_COLUMNS: readonly (readonly [string, string])[] = [
  ['id', 'bigint'],
  ['n', 'integer'],
  ['s', 'text'],
];

/** 32-bit mix (murmur3's finaliser): the Feistel round function. */
function mix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

/**
 * A bijection of [0, n): a balanced Feistel network over the smallest even power of two
 * ≥ n, cycle-walking until the value falls inside the domain. Deterministic for a seed;
 * every index maps to a distinct key, so the key stays unique with no set to remember.
 */
export function keyScrambler(n: number, seed: number): (i: number) => number {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`key domain must be a whole number ≥ 1, got ${n}`);
  let halfBits = 1;
  while (2 ** (2 * halfBits) < n) halfBits++;
  if (halfBits > 26) throw new RangeError(`key domain too large: ${n}`);
  const half = 2 ** halfBits;
  const mask = half - 1;
  const keys = [0x9e3779b9, 0x7f4a7c15, 0x94d049bb, 0xbf58476d].map((k) => mix32(k ^ mix32(seed >>> 0)));
  const permute = (x: number): number => {
    let left = Math.floor(x / half);
    let right = x % half;
    for (const k of keys) {
      const next = (left ^ (mix32(right ^ k) & mask)) >>> 0;
      left = right;
      right = next;
    }
    return left * half + right;
  };
  return (i: number): number => {
    let x = permute(i);
    while (x >= n) x = permute(x);
    return x;
  };
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** Row `i` (0-based) of the data set as one COPY text line: `id \t n \t s \n`. */
export function narrowRow(id: number): string {
  const h = mix32(id);
  let s = '';
  let v = h;
  for (let k = 0; k < 30; k++) {
    s += ALPHABET[v % 36];
    v = k % 6 === 5 ? mix32(v + id) : Math.floor(v / 36);
  }
  return `${id}\t${h % 1_000_000}\t${s}\n`;
}

/** The rows, in buffers of about 1 MB. Keys are 1..rows, in order or scrambled. */
export async function* narrowRows(options: NarrowRowOptions): AsyncGenerator<Buffer> {
  const { rows, keys, seed } = options;
  if (rows === 0) return;
  const key = keys === 'random' ? keyScrambler(rows, seed) : (i: number): number => i;
  let batch = '';
  for (let i = 0; i < rows; i++) {
    batch += narrowRow(key(i) + 1);
    if (batch.length >= 1 << 20) {
      yield Buffer.from(batch);
      batch = '';
    }
  }
  if (batch.length > 0) yield Buffer.from(batch);
}

/** Writes the rows to a file (same options as the narrow generator's `generateNarrow`, text format). */
export async function writeNarrowRows(options: NarrowRowOptions & { readonly out: string }): Promise<void> {
  await pipeline(Readable.from(narrowRows(options)), createWriteStream(options.out));
}
