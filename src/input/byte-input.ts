import { promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import type { Chunk, LoadTarget } from '../core/chunk.js';
import type { ChunkSource } from './chunk-queue.js';
import { chunkRecords, readStepFor } from './chunker.js';
import { readRange, recordEndRuleFor, splitFileRange, uncoveredRanges, type ByteRange } from './byte-ranges.js';
import { rangeReader } from './byte-reader.js';
import { compressionOf, fileBlocks, readOnce } from './file-blocks.js';
import type { Framer } from './framer.js';
import { recordEndsFor } from './header.js';
import type { OpenedInput, OpenOptions } from './input-format.js';
import { BOM, dropBom, dropRecords, takeRecords } from './record-window.js';
import { skipCovered } from './skip-covered.js';
import { withinShare } from './load-part.js';

/** How a format's bytes become chunks: what `openBytes` asks of the format. */
export interface ByteReading {
  /** Records end at a line ending (text and `.tbl`, NDJSON): a plain file can be cut into byte ranges. */
  readonly lineFramed: boolean;
  framer(target: LoadTarget, options: { endsInput?: boolean }): Framer;
  sourceFramer(target: LoadTarget): Framer;
  /** The chunks of an input read from its start, after its byte-order mark, when the format does not frame records from bytes (a JSON array). */
  readonly fromStart?: (blocks: AsyncIterable<Buffer>, target: LoadTarget, options: { chunkBytes: number; startOffset: number; reopen?: () => AsyncIterable<Buffer> }) => AsyncGenerator<Chunk>;
}

/**
 * A regular, uncompressed file in a line-framed format, without `--skip` or `--limit`,
 * is read in byte ranges; anything else from its start by one reader.
 */
export function cutsIntoRanges(target: LoadTarget, lineFramed: boolean): boolean {
  const input = target.input ?? {};
  return !readOnce(target.file) && compressionOf(target) === undefined && lineFramed && input.skip === undefined && input.limit === undefined;
}

/**
 * A regular, uncompressed file in a line-framed format (tbl, text, NDJSON) is cut into
 * byte ranges (one per worker, at most one per chunk) so workers read it in parallel; CSV,
 * JSON arrays, compressed files, stdin and pipes are read by one reader whose chunks any
 * worker may take, and so is any input with `--skip` or `--limit` (records counted from the start).
 */
export async function openBytes(target: LoadTarget, options: OpenOptions, reading: ByteReading): Promise<OpenedInput> {
  const { chunkBytes } = options;
  const covered = options.covered ?? [];
  // Sequential readers read everything again and drop what an earlier run committed.
  const sequential = (chunks: AsyncGenerator<Chunk>): ChunkSource => skipCovered(chunks, reading.sourceFramer(target), covered);
  const input = target.input ?? {};
  if (!cutsIntoRanges(target, reading.lineFramed)) {
    if (options.share) throw new Error(`internal: ${target.file} is read from its start and cannot be loaded in parts`);
    let size: number | undefined;
    if (target.file !== '-') {
      const st = await fs.stat(target.file);
      if (st.isFile() && compressionOf(target) === undefined) size = st.size;
    }
    const reopen = readOnce(target.file) ? undefined : () => fileBlocks(target, chunkBytes);
    return { sources: [sequential(fromStart(fileBlocks(target, chunkBytes, options.stdin), target, reading, { ...options, ...(reopen ? { reopen } : {}) }))], size };
  }
  const fh = await fs.open(target.file, 'r');
  const stat = await fh.stat();
  if (!stat.isFile()) {
    await fh.close();
    if (options.share) throw new Error(`internal: ${target.file} is not a regular file and cannot be loaded in parts`);
    return { sources: [sequential(fromStart(fileBlocks(target, chunkBytes), target, reading, options))], size: undefined };
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
          yield* fromStart(readRange(fh, range, readStepFor(options.workers)), target, reading, { ...options, endsInput: range.end === size });
          return;
        }
        // Read in place into the chunks' buffers; the first range drops a UTF-8 byte-order mark.
        const start = range.start === 0 ? await bomLength(fh) : range.start;
        const line = range.start === 0 ? 1 : undefined;
        yield* chunkRecords(rangeReader(fh, { start, end: range.end }, target.file), { target, framer: reading.framer(target, { endsInput: range.end === size }), chunkBytes, startOffset: start, startLine: line, readStep: readStepFor(options.workers), ...(options.buffers ? { buffers: options.buffers } : {}) });
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
async function* fromStart(blocks: AsyncIterable<Buffer>, target: LoadTarget, reading: ByteReading, options: OpenOptions & { reopen?: () => AsyncIterable<Buffer>; endsInput?: boolean }): AsyncGenerator<Chunk> {
  const { chunkBytes, reopen } = options;
  const input = target.input ?? {};
  let rest: AsyncIterable<Buffer> = blocks;
  let offset = 0;
  // A UTF-8 byte-order mark is dropped whatever the declared encoding (in a single-byte one it would be `ï»¿`, never meant).
  const bom = await dropBom(rest, target.file);
  rest = bom.rest;
  offset = bom.bytes;
  if (reading.fromStart !== undefined) {
    yield* reading.fromStart(rest, target, { chunkBytes, startOffset: offset, ...(reopen ? { reopen } : {}) });
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
  yield* chunkRecords(rest, { target, framer: reading.framer(target, options.endsInput === false ? { endsInput: false } : {}), chunkBytes, startOffset: offset, startLine: line, readStep: readStepFor(options.workers), ...(options.buffers ? { buffers: options.buffers } : {}) });
}
