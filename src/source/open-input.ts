import { promises as fs } from 'node:fs';
import type { Readable } from 'node:stream';
import type { LoadTarget } from '../batching/chunk.js';
import type { ChunkSource } from '../batching/chunk-queue.js';
import { chunkRecords } from '../batching/chunker.js';
import { isNewlineFramed } from '../framing/formats.js';
import { framerFor } from '../framing/framer-for.js';
import { readRange, splitFileIntoRanges } from './byte-ranges.js';

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
  /** Read only the first this many records (`compare --rows`), by one reader, cut at a record boundary. */
  readonly maxRows?: number;
}

/**
 * A regular file in a newline-framed format is cut into byte ranges (one per worker, at
 * most one per chunk) so workers read it in parallel; CSV, stdin and pipes are read by
 * one reader whose chunks any worker may take.
 */
export async function openInput(target: LoadTarget, options: OpenOptions): Promise<OpenedInput> {
  const framer = framerFor(target.format);
  const { chunkBytes } = options;
  const maxRecords = options.maxRows;
  if (target.file === '-') {
    const stdin = options.stdin ?? process.stdin;
    return { sources: [chunkRecords(stdin, { target, framer, chunkBytes, startOffset: 0, startLine: 1, maxRecords })], size: undefined };
  }
  const fh = await fs.open(target.file, 'r');
  const stat = await fh.stat();
  if (!stat.isFile()) {
    await fh.close();
    const { createReadStream } = await import('node:fs');
    const stream = createReadStream(target.file, { highWaterMark: Math.min(chunkBytes, 1 << 20) });
    return { sources: [chunkRecords(stream, { target, framer, chunkBytes, startOffset: 0, startLine: 1, maxRecords })], size: undefined };
  }
  const size = stat.size;
  // The first n records of a file are read in order by one reader; otherwise byte ranges.
  const parts = isNewlineFramed(target.format) && maxRecords === undefined ? Math.max(1, Math.min(options.workers, Math.ceil(size / chunkBytes))) : 1;
  const ranges = await splitFileIntoRanges(fh, size, parts);
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
          maxRecords,
        });
      } finally {
        await closeOne();
      }
    })(),
  );
  return { sources, size };
}
