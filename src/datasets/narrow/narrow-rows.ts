/**
 * Narrow rows as bytes: `id<TAB>val<TAB>note\n` (COPY text) or `id|val|note|\n` (tbl).
 */
import { NEWLINE, PIPE, TAB, writeUint } from '../dbt3/byte-writer.js';
import { RowRng, STREAM } from '../dbt3/prng.js';
import { KeyPermutation } from './key-permutation.js';

export const NARROW_FORMATS = ['text', 'tbl'] as const;
export type NarrowFormat = (typeof NARROW_FORMATS)[number];
export const NARROW_KEY_ORDERS = ['sequential', 'random'] as const;
export type NarrowKeyOrder = (typeof NARROW_KEY_ORDERS)[number];

export const NOTE_MIN = 20;
export const NOTE_MAX = 28;
/** Longest row: 16-digit id, 10-digit val, the longest note, separators. */
export const MAX_NARROW_ROW_BYTES = 16 + 1 + 10 + 1 + NOTE_MAX + 2;

const LETTERS = Buffer.from('abcdefghijklmnopqrstuvwxyz', 'latin1');

export interface NarrowRowWriter {
  /** Write row `i` (0-based) and return the position after it. */
  (buf: Uint8Array, pos: number, i: number): number;
}

export function narrowRowWriter(rows: number, keys: NarrowKeyOrder, seed: number, format: NarrowFormat): NarrowRowWriter {
  const rng = new RowRng();
  const permutation = keys === 'random' ? new KeyPermutation(rows, seed) : undefined;
  const sep = format === 'tbl' ? PIPE : TAB;
  const trailing = format === 'tbl';
  return (buf, pos, i) => {
    rng.seed(seed, STREAM.narrow, i);
    pos = writeUint(buf, pos, (permutation === undefined ? i : permutation.at(i)) + 1);
    buf[pos++] = sep;
    pos = writeUint(buf, pos, rng.next() >>> 1);
    buf[pos++] = sep;
    const len = rng.int(NOTE_MIN, NOTE_MAX);
    for (let c = 0; c < len; c += 4) {
      let bits = rng.next();
      const stop = Math.min(len, c + 4);
      for (let j = c; j < stop; j++) {
        buf[pos + j] = LETTERS[(bits & 0xff) % 26]!;
        bits >>>= 8;
      }
    }
    pos += len;
    if (trailing) buf[pos++] = PIPE;
    buf[pos++] = NEWLINE;
    return pos;
  };
}
