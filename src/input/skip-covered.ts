import type { Chunk } from '../core/chunk.js';
import type { ChunkSource } from './chunk-queue.js';
import { ChunkRecords } from './chunk-split.js';
import { LoadError } from '../core/load-error.js';
import type { Framer } from './framer.js';
import type { ByteRange } from './byte-ranges.js';

/**
 * For inputs that cannot seek (stdin, pipes): reads everything again and drops the
 * records an earlier run committed, cutting a chunk at the covered ranges' edges, which
 * are record boundaries when the input is the same as before.
 */
export async function* skipCovered(chunks: AsyncGenerator<Chunk>, framer: Framer, covered: readonly ByteRange[]): ChunkSource & AsyncGenerator<Chunk> {
  if (covered.length === 0) {
    yield* chunks;
    return;
  }
  for await (const chunk of chunks) {
    const start = chunk.location.byteOffset;
    const end = start + chunk.location.byteLength;
    const overlapping = covered.filter((c) => c.start < end && c.end > start);
    if (overlapping.length === 0) {
      yield chunk;
      continue;
    }
    const records = new ChunkRecords(chunk, framer);
    let at = start;
    for (const c of [...overlapping, { start: end, end }]) {
      if (c.start > at) {
        const from = records.recordAt(at - start);
        const to = records.recordAt(Math.min(c.start, end) - start);
        if (from < 0 || to < 0) {
          throw new LoadError('bad-input', `${chunk.location.file}: the input differs from the earlier run of this load (no record boundary at byte ${from < 0 ? at : c.start})`, {
            hint: 'resume only with the same input; start a new load with another --load-id',
          });
        }
        if (to > from) yield records.slice(from, to);
      }
      at = Math.max(at, c.end);
    }
  }
}
