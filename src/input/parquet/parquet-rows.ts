import type { Chunk } from '../../core/chunk.js';
import type { SplittableRecords } from '../../core/chunk.js';

/** Where each line of a buffer of newline-ended lines ends (exclusive, after the newline). */
function lineEnds(b: Buffer): number[] {
  const ends: number[] = [];
  for (let at = b.indexOf(0x0a); at >= 0; at = b.indexOf(0x0a, at + 1)) ends.push(at + 1);
  return ends;
}

/**
 * A Parquet chunk's rows, one by one, for isolating a bad row: its COPY text (`data`) and
 * its rows as JSON lines (the source, what the reject file shows) both hold one line a
 * row, and the chunk's location counts rows, not bytes (`byteOffset` is the first row's
 * index in the file, `byteLength` the rows), so row i is at `byteOffset + i`.
 */
export class ParquetRowRecords implements SplittableRecords {
  private readonly dataEnds: number[];
  private readonly sourceEnds: number[];

  constructor(
    private readonly chunk: Chunk,
    private readonly source: Buffer,
  ) {
    this.dataEnds = lineEnds(chunk.data);
    this.sourceEnds = lineEnds(source);
    if (this.dataEnds.length !== chunk.records || this.sourceEnds.length !== chunk.records) {
      throw new Error(`internal: a Parquet chunk of ${chunk.records} rows has ${this.dataEnds.length} COPY lines and ${this.sourceEnds.length} JSON lines`);
    }
  }

  get count(): number {
    return this.chunk.records;
  }

  start(i: number): number {
    return i;
  }

  linesBefore(i: number): number {
    return i;
  }

  sourceOf(i: number): Buffer {
    return this.source.subarray(i === 0 ? 0 : this.sourceEnds[i - 1]!, this.sourceEnds[i]!);
  }

  slice(from: number, to: number): Chunk {
    const { chunk } = this;
    if (from === 0 && to === this.count) return chunk;
    const at = (ends: number[], i: number): number => (i === 0 ? 0 : ends[i - 1]!);
    const { location } = chunk;
    return {
      location: { ...location, byteOffset: location.byteOffset + from, byteLength: to - from, firstLine: location.firstLine === undefined ? undefined : location.firstLine + from },
      data: chunk.data.subarray(at(this.dataEnds, from), at(this.dataEnds, to)),
      source: this.source.subarray(at(this.sourceEnds, from), at(this.sourceEnds, to)),
      records: to - from,
      lines: to - from,
      target: chunk.target,
    };
  }
}
