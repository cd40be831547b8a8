import type { Framer } from '../framing/framer.js';
import { RecordError } from '../framing/record-error.js';
import { recordFailure } from '../source/record-failure.js';
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
  // Targets for records that fill other columns than the target's (JSON key sets), one per set.
  const variants = new Map<string, LoadTarget>();
  const variant = (columns: readonly string[] | undefined): LoadTarget => {
    if (columns === undefined) return target;
    const key = columns.join('\u0000');
    let t = variants.get(key);
    if (t === undefined) variants.set(key, (t = { ...target, columns }));
    return t;
  };

  function* cut(eof: boolean): Generator<Chunk> {
    for (;;) {
      if (pendingBytes === 0) return;
      const buf = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
      const framed = framer.frame(buf, eof);
      // A partial record is copied out, so the big buffer it sat in can be freed with the chunk;
      // records left on purpose (`more`) are framed again at once and need no copy.
      const rest = framed.consumed >= buf.length ? undefined : framed.more ? buf.subarray(framed.consumed) : Buffer.from(buf.subarray(framed.consumed));
      pending = rest ? [rest] : [];
      pendingBytes = rest?.length ?? 0;
      if (framed.records > 0) {
        yield {
          location: { file: target.file, byteOffset: offset, byteLength: framed.consumed, firstLine: line },
          data: framed.out,
          source: buf.subarray(0, framed.consumed),
          records: framed.records,
          lines: framed.lines,
          target: variant(framed.columns),
        };
      }
      offset += framed.consumed;
      if (line !== undefined) line += framed.lines;
      if (!framed.more || framed.consumed === 0) return;
    }
  }

  try {
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
  } catch (error) {
    // `offset` and `line` still point at the start of the block that failed to frame.
    if (error instanceof RecordError) throw await recordFailure(error, target, offset, line);
    throw error;
  }
}
