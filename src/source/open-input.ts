import { promises as fs } from 'node:fs';
import type { Readable } from 'node:stream';
import type { LoadTarget } from '../batching/chunk.js';
import type { ChunkSource } from '../batching/chunk-queue.js';
import { chunkRecords } from '../batching/chunker.js';
import { isNewlineFramed } from '../framing/formats.js';
import { framerFor } from '../framing/framer-for.js';
import { readRange, splitFileRange, uncoveredRanges, type ByteRange } from './byte-ranges.js';
import { skipCovered } from './skip-covered.js';

export interface OpenedInput {
  /** Exclusive chunk sources: byte ranges of a file read in parallel, or one sequential reader. */
  readonly sources: ChunkSource[];
  /** Input size in bytes, when known (not for stdin or pipes). */
  readonly size: number | undefined;
}

export interface OpenOptions {
  readonly workers: number;
  readonly chunkBytes: number;
  /** Stdin, for `-`. */
  readonly stdin?: Readable;
  /** Byte ranges an earlier run of the load committed (sorted, merged, at record boundaries): not loaded again. */
  readonly covered?: readonly ByteRange[];
}

/**
 * A regular file in a newline-framed format is cut into byte ranges (one per worker, at
 * most one per chunk) so workers read it in parallel; CSV, stdin and pipes are read by
 * one reader whose chunks any worker may take.
 */
export async function openInput(target: LoadTarget, options: OpenOptions): Promise<OpenedInput> {
  const framer = framerFor(target.format);
  const { chunkBytes } = options;
  if (target.file === '-') {
    const stdin = options.stdin ?? process.stdin;
    return { sources: [skipCovered(chunkRecords(stdin, { target, framer, chunkBytes, startOffset: 0, startLine: 1 }), framer, options.covered ?? [])], size: undefined };
  }
  const fh = await fs.open(target.file, 'r');
  const stat = await fh.stat();
  if (!stat.isFile()) {
    await fh.close();
    const { createReadStream } = await import('node:fs');
    const stream = createReadStream(target.file, { highWaterMark: Math.min(chunkBytes, 1 << 20) });
    return { sources: [skipCovered(chunkRecords(stream, { target, framer, chunkBytes, startOffset: 0, startLine: 1 }), framer, options.covered ?? [])], size: undefined };
  }
  const size = stat.size;
  // A resumed load reads only what earlier runs did not commit; ledger ranges end at record boundaries.
  const ranges: ByteRange[] = [];
  for (const todo of uncoveredRanges(size, options.covered ?? [])) {
    const length = todo.end - todo.start;
    const parts = isNewlineFramed(target.format) ? Math.max(1, Math.min(options.workers, Math.ceil(length / chunkBytes))) : 1;
    ranges.push(...(await splitFileRange(fh, todo, parts)));
  }
  let open = ranges.length;
  const closeOne = async (): Promise<void> => {
    if (--open === 0) await fh.close();
  };
  if (ranges.length === 0) await fh.close();
  const sources = ranges.map((range) =>
    (async function* () {
      try {
        yield* chunkRecords(readRange(fh, range, chunkBytes), {
          target,
          framer,
          chunkBytes,
          startOffset: range.start,
          startLine: range.start === 0 ? 1 : undefined,
        });
      } finally {
        await closeOne();
      }
    })(),
  );
  return { sources, size };
}
