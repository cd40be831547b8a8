import { promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { Chunk, LoadTarget } from '../core/chunk.js';
import type { ChunkSource } from './chunk-queue.js';
import type { ChunkBuffers } from './chunk-buffers.js';
import { chunkRecords, readStepFor } from './chunker.js';
import { isNewlineFramed } from './formats.js';
import { framerForTarget, sourceFramer } from './framer-for.js';
import { fileLineEnd, readRange, recordEndRuleFor, splitFileRange, uncoveredRanges, type ByteRange } from './byte-ranges.js';
import { rangeReader } from './byte-reader.js';
import { compressionOf, fileBlocks } from './file-blocks.js';
import { recordEndsFor } from './header.js';
import { jsonArrayChunks } from './json/json-array-source.js';
import { BOM, dropBom, dropRecords, RecordEnds, takeRecords } from './record-window.js';
import { skipCovered } from './skip-covered.js';
import { withinShare } from './load-part.js';

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
  /** The load's chunk buffers, shared by all its readers. */
  readonly buffers?: ChunkBuffers;
  /** `--part K/N`: only this record-aligned range of the file is this process's (`readsInRanges` inputs only). */
  readonly share?: ByteRange;
  /** How Parquet inputs are decoded. */
  readonly parquet?: ParquetSettings | undefined;
}

/** How a load decodes Parquet (for measuring: the CLI sets these from PGSURGE_PARQUET_*; `ParquetOpenOptions`). */
export interface ParquetSettings {
  /** Decode in a thread per reader (true) or on the load's loop (false); default `decodeThreadsByDefault`'s rule. */
  readonly decodeThreads?: boolean;
  /** false: without the WebAssembly kernels; default with them, where WebAssembly runs. */
  readonly wasm?: boolean;
}

/**
 * A regular, uncompressed file in a newline-framed format, without `--skip` or
 * `--limit`, is read in byte ranges; anything else from its start by one reader.
 */
export function readsInRanges(target: LoadTarget): boolean {
  const input = target.input ?? {};
  return target.file !== '-' && compressionOf(target) === undefined && isNewlineFramed(target.format) && input.skip === undefined && input.limit === undefined;
}

/**
 * A regular, uncompressed file in a newline-framed format (tbl, text, NDJSON) is cut into
 * byte ranges (one per worker, at most one per chunk) so workers read it in parallel; CSV,
 * JSON arrays, compressed files, stdin and pipes are read by one reader whose chunks any
 * worker may take, and so is any input with `--skip` or `--limit` (records counted from the start).
 * A Parquet file is read by row group (`parquet-source.ts`).
 */
export async function openInput(target: LoadTarget, options: OpenOptions): Promise<OpenedInput> {
  const { chunkBytes } = options;
  // Every chunk's records are framed by the file's line ending, from its first line.
  // (A pipe is not read here: its framer finds the line ending in its first block.)
  if (target.lineEnd === undefined && target.file !== '-' && compressionOf(target) === undefined && (target.format === 'text' || target.format === 'tbl' || target.format === 'csv') && (await fs.stat(target.file)).isFile()) {
    const fh = await fs.open(target.file, 'r');
    try {
      const lineEnd = await fileLineEnd(fh, target);
      if (lineEnd !== undefined) target = { ...target, lineEnd };
    } finally {
      await fh.close();
    }
  }
  const covered = options.covered ?? [];
  // Parquet: read by row group, its own reader; the ledger's ranges count rows.
  // Imported here, not at the top: the Parquet reader and its decompressors are ~40% of the bundle, and every other
  // command would load them at its start (scripts/bundle.js splits them into a chunk of their own).
  if (target.format === 'parquet') {
    const { openParquetInput } = await import('./parquet/parquet-source.js');
    return openParquetInput(target, { workers: options.workers, chunkBytes, covered, ...options.parquet });
  }
  // Sequential readers read everything again and drop what an earlier run committed.
  const sequential = (chunks: AsyncGenerator<Chunk>): ChunkSource => skipCovered(chunks, sourceFramer(target), covered);
  const input = target.input ?? {};
  if (!readsInRanges(target)) {
    if (options.share) throw new Error(`internal: ${target.file} is read from its start and cannot be loaded in parts`);
    let size: number | undefined;
    if (target.file !== '-') {
      const st = await fs.stat(target.file);
      if (st.isFile() && compressionOf(target) === undefined) size = st.size;
    }
    const reopen = target.file === '-' ? undefined : () => fileBlocks(target, chunkBytes);
    return { sources: [sequential(fromStart(fileBlocks(target, chunkBytes, options.stdin), target, { ...options, ...(reopen ? { reopen } : {}) }))], size };
  }
  const fh = await fs.open(target.file, 'r');
  const stat = await fh.stat();
  if (!stat.isFile()) {
    await fh.close();
    if (options.share) throw new Error(`internal: ${target.file} is not a regular file and cannot be loaded in parts`);
    return { sources: [sequential(fromStart(fileBlocks(target, chunkBytes), target, options))], size: undefined };
  }
  const size = stat.size;
  // A resumed load reads only what earlier runs did not commit; ledger ranges end at record boundaries.
  const ranges: ByteRange[] = [];
  const todos = uncoveredRanges(size, covered);
  for (const todo of options.share ? withinShare(todos, options.share) : todos) {
    const parts = Math.max(1, Math.min(options.workers, Math.ceil((todo.end - todo.start) / chunkBytes)));
    ranges.push(...(await splitFileRange(fh, todo, parts, recordEndRuleFor(target))));
  }
  let open = ranges.length;
  const closeOne = async (): Promise<void> => {
    if (--open === 0) await fh.close();
  };
  if (ranges.length === 0) await fh.close();
  const sources = ranges.map((range) =>
    (async function* () {
      try {
        if (range.start === 0 && input.header !== undefined) {
          yield* fromStart(readRange(fh, range, readStepFor(options.workers)), target, { ...options, endsInput: range.end === size });
          return;
        }
        // Read in place into the chunks' buffers; the first range drops a UTF-8 byte-order mark.
        const start = range.start === 0 ? await bomLength(fh) : range.start;
        const line = range.start === 0 ? 1 : undefined;
        yield* chunkRecords(rangeReader(fh, { start, end: range.end }, target.file), { target, framer: framerForTarget(target, { endsInput: range.end === size }), chunkBytes, startOffset: start, startLine: line, readStep: readStepFor(options.workers), ...(options.buffers ? { buffers: options.buffers } : {}) });
      } finally {
        await closeOne();
      }
    })(),
  );
  return { sources, size };
}

/** 3 when the file starts with a UTF-8 byte-order mark, else 0. */
async function bomLength(fh: FileHandle): Promise<number> {
  const head = Buffer.alloc(BOM.length);
  const { bytesRead } = await fh.read(head, 0, BOM.length, 0);
  return bytesRead === BOM.length && head.equals(BOM) ? BOM.length : 0;
}

/**
 * The input from its first byte: a UTF-8 byte-order mark dropped, then the header and
 * `--skip` records, then at most `--limit` records, framed into chunks.
 */
async function* fromStart(blocks: AsyncIterable<Buffer>, target: LoadTarget, options: OpenOptions & { reopen?: () => AsyncIterable<Buffer>; endsInput?: boolean }): AsyncGenerator<Chunk> {
  const { chunkBytes, reopen } = options;
  const input = target.input ?? {};
  let rest: AsyncIterable<Buffer> = blocks;
  let offset = 0;
  // A UTF-8 byte-order mark is dropped whatever the declared encoding (in a single-byte one it would be `ï»¿`, never meant).
  const bom = await dropBom(rest);
  rest = bom.rest;
  offset = bom.bytes;
  if (target.format === 'json') {
    yield* jsonArrayChunks(rest, { target, chunkBytes, startOffset: offset, ...(reopen ? { reopen } : {}) });
    return;
  }
  let line = 1;
  const drop = (input.header !== undefined ? 1 : 0) + (input.skip ?? 0);
  if (drop > 0) {
    const dropped = await dropRecords(rest, drop, recordEndsFor(target));
    rest = dropped.rest;
    offset += dropped.bytes;
    line += dropped.lines;
  }
  if (input.limit !== undefined) rest = takeRecords(rest, input.limit, recordEndsFor(target));
  // `endsInput: false`: a byte range that stops before the end of its file (a final `\.` there is no end).
  yield* chunkRecords(rest, { target, framer: framerForTarget(target, options.endsInput === false ? { endsInput: false } : {}), chunkBytes, startOffset: offset, startLine: line, readStep: readStepFor(options.workers), ...(options.buffers ? { buffers: options.buffers } : {}) });
}
