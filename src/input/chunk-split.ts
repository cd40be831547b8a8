import type { Framer, RecordSpans } from './framer.js';
import { asRejected } from './line-ends.js';
import type { Chunk, SplittableRecords } from '../core/chunk.js';

/**
 * A chunk's records, addressable one by one: what isolating a bad row and resuming on
 * byte ranges need. Built only when needed (a chunk the server refused, a chunk that a
 * resume covers in part), never on the fast path.
 */
export class ChunkRecords implements SplittableRecords {
  readonly spans: RecordSpans;
  /** `lineStarts[i]`: physical lines before record i in the chunk. */
  private readonly lineStarts: number[];

  private readonly source: Buffer;

  /** `source`: the chunk's source bytes, where the chunk does not keep them (see `chunkSource`). */
  constructor(
    readonly chunk: Chunk,
    private readonly framer: Framer,
    source: Buffer | undefined = chunk.source,
  ) {
    if (source === undefined) throw new Error('internal: ChunkRecords needs the chunk\'s source bytes');
    this.source = source;
    this.spans = framer.recordSpans(source);
    this.lineStarts = [0];
    for (const n of this.spans.lines) this.lineStarts.push(this.lineStarts[this.lineStarts.length - 1]! + n);
  }

  get count(): number {
    return this.spans.ends.length;
  }

  /** Offset of record i's first byte within the chunk's source. */
  start(i: number): number {
    return i === 0 ? 0 : this.spans.ends[i - 1]!;
  }

  end(i: number): number {
    return this.spans.ends[i]!;
  }

  /** Physical lines before record i within the chunk. */
  linesBefore(i: number): number {
    return this.lineStarts[i]!;
  }

  /** Record i as the reject file holds it: as read, its line ending included (`asRejected`). */
  sourceOf(i: number): Buffer {
    return asRejected(this.source.subarray(this.start(i), this.end(i)), this.spans.lineEnd);
  }

  /** Records [from, to) as a chunk of their own: re-framed from the source bytes, with its own location. */
  slice(from: number, to: number): Chunk {
    const { chunk } = this;
    if (from === 0 && to === this.count) return chunk;
    const a = this.start(from);
    const b = to === 0 ? 0 : this.end(to - 1);
    const source = this.source.subarray(a, b);
    const framed = this.framer.frame(source, true);
    const firstLine = chunk.location.firstLine === undefined ? undefined : chunk.location.firstLine + this.linesBefore(from);
    return {
      location: { file: chunk.location.file, byteOffset: chunk.location.byteOffset + a, byteLength: b - a, firstLine },
      data: framed.out,
      source,
      records: framed.records,
      lines: framed.lines,
      target: chunk.target,
    };
  }

  /** Index of the record that starts at `offset` (a record boundary within the chunk), or -1. */
  recordAt(offset: number): number {
    if (offset === 0) return 0;
    let lo = 0;
    let hi = this.count - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const end = this.spans.ends[mid]!;
      if (end === offset) return mid + 1;
      if (end < offset) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }
}

/**
 * The records `idx` of a chunk (in input order) as records of their own: a part of the
 * chunk (a Citus node's, an upsert lane's) split to find its bad rows; `slice` cuts the part.
 */
export function pickedRecords(recs: ChunkRecords, idx: readonly number[], slice: (from: number, to: number) => Chunk): SplittableRecords {
  return {
    count: idx.length,
    start: (i) => recs.start(idx[i]!),
    linesBefore: (i) => recs.linesBefore(idx[i]!),
    sourceOf: (i) => recs.sourceOf(idx[i]!),
    slice,
  };
}
