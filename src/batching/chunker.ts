import type { Framer } from '../framing/framer.js';
import type { Chunk, LoadTarget } from './chunk.js';

export interface ChunkerOptions {
  readonly target: LoadTarget;
  readonly framer: Framer;
  /** Aim for chunks of this many source bytes; a chunk always holds at least one whole record. */
  readonly chunkBytes: number;
  /** Source offset of the first byte of `blocks`. */
  readonly startOffset: number;
  /** Line number of the first byte of `blocks`, when known. */
  readonly startLine: number | undefined;
  /** Stop after this many records (`--rows`): the last chunk ends at a record boundary, the rest is not read. */
  readonly maxRecords?: number;
}

/**
 * Records → chunks: gathers blocks until a chunk's worth of bytes is pending, frames the
 * whole records in them, and keeps the partial record for the next chunk.
 */
export async function* chunkRecords(blocks: AsyncIterable<Buffer>, options: ChunkerOptions): AsyncGenerator<Chunk> {
  const { target, framer, chunkBytes } = options;
  let offset = options.startOffset;
  let line = options.startLine;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let remaining = options.maxRecords ?? Infinity;

  function* cut(eof: boolean): Generator<Chunk> {
    if (pendingBytes === 0 || remaining <= 0) return;
    const buf = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
    let framed = framer.frame(buf, eof);
    if (framed.records > remaining) framed = framePrefix(framer, buf, eof, remaining);
    remaining -= framed.records;
    const rest = buf.subarray(framed.consumed);
    pending = rest.length > 0 ? [rest] : [];
    pendingBytes = rest.length;
    if (framed.records === 0) return;
    yield {
      location: { file: target.file, byteOffset: offset, byteLength: framed.consumed, firstLine: line },
      data: framed.out,
      records: framed.records,
      lines: framed.lines,
      target,
    };
    offset += framed.consumed;
    if (line !== undefined) line += framed.lines;
  }

  for await (const block of blocks) {
    if (remaining <= 0) break; // closes the reader: the rest of the input is never read
    // Pieces no bigger than a chunk, so a large block from a pipe still makes bounded chunks.
    for (let at = 0; at < block.length; at += chunkBytes) {
      const piece = block.subarray(at, at + chunkBytes);
      pending.push(piece);
      pendingBytes += piece.length;
      if (pendingBytes >= chunkBytes) yield* cut(false);
    }
  }
  if (remaining <= 0) return;
  yield* cut(false);
  yield* cut(true);
}

/**
 * The framing of the shortest prefix of `buf` that holds exactly `records` whole records.
 * Only the framer knows where records end (a CSV newline may sit inside quotes), and the
 * record count of a prefix grows with its length, so binary search over the prefixes that
 * end just past a newline, framing each candidate; done once, for the last chunk of `--rows`.
 */
export function framePrefix(framer: Framer, buf: Buffer, eof: boolean, records: number): ReturnType<Framer['frame']> {
  const ends: number[] = [];
  for (let i = buf.indexOf(0x0a); i >= 0; i = buf.indexOf(0x0a, i + 1)) ends.push(i + 1);
  let lo = 0;
  let hi = ends.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (framer.frame(buf.subarray(0, ends[mid]), false).records >= records) hi = mid;
    else lo = mid + 1;
  }
  const end = ends[lo];
  const framed = end === undefined ? undefined : framer.frame(buf.subarray(0, end), false);
  // The last record may lack its newline only at the end of the input.
  if (framed === undefined || framed.records !== records) {
    const whole = framer.frame(buf, eof);
    if (whole.records === records) return whole;
    throw new Error(`internal: cannot cut ${records} records from a block of ${whole.records}`);
  }
  return framed;
}
