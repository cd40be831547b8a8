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

  function* cut(eof: boolean): Generator<Chunk> {
    if (pendingBytes === 0) return;
    const buf = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
    const framed = framer.frame(buf, eof);
    const rest = buf.subarray(framed.consumed);
    pending = rest.length > 0 ? [rest] : [];
    pendingBytes = rest.length;
    if (framed.records === 0) return;
    yield {
      location: { file: target.file, byteOffset: offset, byteLength: framed.consumed, firstLine: line },
      data: framed.out,
      source: buf.subarray(0, framed.consumed),
      records: framed.records,
      lines: framed.lines,
      target,
    };
    offset += framed.consumed;
    if (line !== undefined) line += framed.lines;
  }

  for await (const block of blocks) {
    // Pieces no bigger than a chunk, so a large block from a pipe still makes bounded chunks.
    for (let at = 0; at < block.length; at += chunkBytes) {
      const piece = block.subarray(at, at + chunkBytes);
      pending.push(piece);
      pendingBytes += piece.length;
      if (pendingBytes >= chunkBytes) yield* cut(false);
    }
  }
  yield* cut(false);
  yield* cut(true);
}
