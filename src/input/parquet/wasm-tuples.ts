import type { WireBuffer } from '../../codecs/field-encoder.js';
import { INLINE_KINDS, TABLE, type ColumnTuples, type FlatTuplesWriter } from './flat-tuples.js';
import { KernelMemoryFull, ParquetKernels, regionBytes, TUPLES_OWN, TUPLES_UNFIT, type Region } from './parquet-kernels.js';

/*
 * A slice's binary tuples written by the kernels (parquet-kernels.c's `tuples`), for a plan
 * whose every column is written inline (no column hyparquet decoded, no value with a writer
 * of its own): its columns' arrays read where they are when they were decoded into the
 * kernels' memory (a reader decoding on this thread), else copied in once per plan; the
 * tuples copied out per call. A row the kernel leaves (a DECIMAL past 2^53) is written by the
 * JavaScript writer, so the bytes are writeFlatTuples' own; the unit tests compare the two
 * on every row.
 */

/** Words a column takes in the kernel's descriptors. */
const WORDS = 8;
/** Bytes the kernel writes per call at most (before a row's room): one output region, kept. */
const CALL_BYTES = 256 * 1024;

/** The plan's tuples by the kernels, with `release` to give their memory back; undefined when some column is not written inline, or there are no kernels. */
export function wasmFlatTuples(columns: readonly ColumnTuples[], room: number, js: FlatTuplesWriter, kernels: ParquetKernels | null = ParquetKernels.get()): { write: FlatTuplesWriter; release(): void } | undefined {
  if (kernels === null || columns.length === 0 || !columns.every((c) => INLINE_KINDS.has(c.kind))) return undefined;
  // Per column (parquet-kernels.c): its rows' value indexes from the slice's first row, its bytes, SPAN's spans or TABLE's field offsets, TABLE's field lengths.
  const arrays = columns.map((c) => [c.index.subarray(c.base), c.bytes, c.kind === TABLE ? c.at : c.span, c.len] as const);
  // Arrays decoded into the kernels' memory (KernelPool) are read where they are (their regions have the slack); the others are copied in.
  const sizeOf = (a: ArrayBufferView): number => (kernels.owns(a) ? 0 : regionBytes(a.byteLength));
  const total = WORDS * 4 * columns.length + arrays.reduce((n, list) => n + list.reduce((m, a) => m + sizeOf(a), 0), 0);
  let region: Region | undefined;
  try {
    region = kernels.alloc(total);
  } catch (error) {
    if (error instanceof KernelMemoryFull) return undefined; // the JavaScript writer's, then
    throw error;
  }
  const bytes = kernels.memoryBytes;
  const words = kernels.memoryWords;
  const cols = region.at;
  let at = cols + WORDS * 4 * columns.length;
  for (const [k, c] of columns.entries()) {
    const d = (cols >> 2) + WORDS * k;
    words[d] = c.kind;
    for (const [j, a] of arrays[k]!.entries()) {
      if (kernels.owns(a)) {
        words[d + 1 + j] = a.byteOffset;
        continue;
      }
      bytes.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), at);
      words[d + 1 + j] = at;
      at += sizeOf(a);
    }
    words[d + 5] = c.scale;
  }
  const n = columns.length;
  const write: FlatTuplesWriter = (from: number, to: number, out: WireBuffer, limit: number) => {
    if (region === undefined) throw new Error('internal: Parquet tuples written after their plan was released');
    let r = from;
    while (r < to && out.pos < limit) {
      let result: { stop: number; row: number; column: number };
      try {
        result = kernels.tuples(cols, n, r, to, Math.min(limit - out.pos, CALL_BYTES), room, out);
      } catch (error) {
        if (error instanceof KernelMemoryFull) return js(r, to, out, limit); // no room for the output region: the rest by the JavaScript
        throw error;
      }
      r = result.row;
      if (result.stop === TUPLES_UNFIT) return { row: r, column: result.column };
      if (result.stop === TUPLES_OWN) {
        // The row whose field has a writer of its own: the JavaScript's.
        const one = js(r, r + 1, out, Infinity);
        if (typeof one !== 'number') return one;
        r = one;
      }
    }
    return r;
  };
  return {
    write,
    release() {
      if (region === undefined) return;
      kernels.release(region);
      region = undefined;
    },
  };
}
