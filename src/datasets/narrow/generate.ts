/**
 * `pgsurge gen narrow`: n narrow rows with a unique key, to a file or stdout, in blocks.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { MAX_PERMUTATION_SIZE } from './key-permutation.js';
import {
  MAX_NARROW_ROW_BYTES,
  NARROW_FORMATS,
  NARROW_KEY_ORDERS,
  narrowRowWriter,
  type NarrowFormat,
  type NarrowKeyOrder,
} from './narrow-rows.js';

export const DEFAULT_NARROW_SEED = 42;
const BLOCK_ROWS = 16384;

export interface NarrowOptions {
  readonly rows: number;
  readonly keys: NarrowKeyOrder;
  readonly seed?: number;
  readonly format: NarrowFormat;
  /** A file path, or `-` for stdout. */
  readonly out: string;
  /** Where `-` writes (the CLI's stdout, or a test's stream); needed for `-`. */
  readonly stdout?: Writable;
  /** Called after every block with the rows and bytes written so far. */
  readonly onProgress?: (p: { readonly rows: number; readonly bytes: number; readonly elapsedMs: number }) => void;
}

export interface NarrowResult {
  readonly path: string;
  readonly rows: number;
  readonly bytes: number;
}

function validate(opts: NarrowOptions): number {
  const { rows } = opts;
  if (!Number.isSafeInteger(rows) || rows < 0 || rows > MAX_PERMUTATION_SIZE) {
    throw new Error(`The number of rows must be a whole number from 0 to 2^52, got ${rows}`);
  }
  if (!NARROW_KEY_ORDERS.includes(opts.keys)) throw new Error(`Key order must be one of ${NARROW_KEY_ORDERS.join(', ')}, got ${opts.keys}`);
  if (!NARROW_FORMATS.includes(opts.format)) throw new Error(`Format must be one of ${NARROW_FORMATS.join(', ')}, got ${opts.format}`);
  const seed = opts.seed ?? DEFAULT_NARROW_SEED;
  if (!Number.isSafeInteger(seed) || seed < 0 || seed > 0xffffffff) throw new Error(`The seed must be a whole number from 0 to 4294967295, got ${seed}`);
  return seed;
}

/** The rows in blocks of bytes, in order. */
export function* narrowBlocks(opts: Omit<NarrowOptions, 'out' | 'stdout'>): Generator<Buffer> {
  const seed = validate({ ...opts, out: '-' });
  if (opts.rows === 0) return;
  const write = narrowRowWriter(opts.rows, opts.keys, seed, opts.format);
  for (let start = 0; start < opts.rows; start += BLOCK_ROWS) {
    const end = Math.min(opts.rows, start + BLOCK_ROWS);
    const buf = Buffer.allocUnsafe((end - start) * MAX_NARROW_ROW_BYTES);
    let pos = 0;
    for (let i = start; i < end; i++) pos = write(buf, pos, i);
    yield buf.subarray(0, pos);
  }
}

export async function generateNarrow(opts: NarrowOptions): Promise<NarrowResult> {
  validate(opts);
  const started = Date.now();
  let bytes = 0;
  let rows = 0;
  const progress = (block: Buffer): void => {
    bytes += block.length;
    rows = Math.min(opts.rows, rows + BLOCK_ROWS);
    opts.onProgress?.({ rows, bytes, elapsedMs: Date.now() - started });
  };
  if (opts.out === '-') {
    const stdout = opts.stdout;
    if (stdout === undefined) throw new Error('internal: generating narrow rows to `-` without a stream to write them to');
    for (const block of narrowBlocks(opts)) {
      progress(block);
      if (!stdout.write(block)) await once(stdout, 'drain');
    }
    return { path: '-', rows: opts.rows, bytes };
  }
  const handle: FileHandle = await open(opts.out, 'w');
  try {
    for (const block of narrowBlocks(opts)) {
      let done = 0;
      while (done < block.length) done += (await handle.write(block, done, block.length - done)).bytesWritten;
      progress(block);
    }
  } finally {
    await handle.close();
  }
  return { path: opts.out, rows: opts.rows, bytes };
}
