import { parquetRead, type ColumnData, type FileMetaData } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import type { Chunk, LoadTarget } from '../../batching/chunk.js';
import type { ChunkSource } from '../../batching/chunk-queue.js';
import { LoadError } from '../../db/load-error.js';
import { WireBuffer } from '../../wire/field-encoder.js';
import type { ByteRange } from '../byte-ranges.js';
import type { ParquetColumn } from './parquet-columns.js';
import { openParquet, type ParquetFile } from './parquet-file.js';
import { ParquetRowRecords } from './parquet-rows.js';
import { arrayLiteral, bigEndianSigned, decimalText, jsonText, leafText, putByte, putCopyBytes, putCopyText, type RawValue } from './parquet-text.js';

/** A run of rows of one row group: what one chunk holds. */
export interface ParquetSlice {
  readonly rowGroup: number;
  /** Index in the file of the slice's first row (0-based). */
  readonly firstRow: number;
  readonly rows: number;
  /** The row group's compressed bytes, shared out among its slices by rows (progress and MB/s). */
  readonly bytes: number;
}

/** A row group's place in the file's rows, and its size. */
export interface RowGroupSpan {
  readonly firstRow: number;
  readonly rows: number;
  /** Compressed bytes of its column chunks in the file. */
  readonly compressedBytes: number;
  /** Bytes its pages hold uncompressed (the footer's `total_byte_size`). */
  readonly uncompressedBytes: number;
}

export function rowGroupSpans(metadata: FileMetaData): RowGroupSpan[] {
  let firstRow = 0;
  return metadata.row_groups.map((g) => {
    const rows = Number(g.num_rows);
    const compressedBytes = g.columns.reduce((n, c) => n + Number(c.meta_data?.total_compressed_size ?? 0n), 0);
    const span = { firstRow, rows, compressedBytes, uncompressedBytes: Number(g.total_byte_size) };
    firstRow += rows;
    return span;
  });
}

/**
 * Hands out the runs of a file in order, to as many readers as ask: a run is a row group,
 * or the part of one that an earlier run of the load did not commit (`covered`, row
 * ranges, sorted and merged). A reader decodes its run once, then cuts it into chunks.
 */
export class RunCursor {
  private group = 0;
  private next: number;

  constructor(
    private readonly groups: readonly RowGroupSpan[],
    private readonly covered: readonly ByteRange[],
  ) {
    this.next = groups[0]?.firstRow ?? 0;
  }

  take(): ParquetSlice | undefined {
    for (;;) {
      const g = this.groups[this.group];
      if (g === undefined) return undefined;
      const end = g.firstRow + g.rows;
      const inside = this.covered.find((c) => c.start <= this.next && c.end > this.next);
      if (inside) this.next = inside.end;
      if (this.next >= end) {
        this.group++;
        this.next = this.groups[this.group]?.firstRow ?? this.next;
        continue;
      }
      const nextCovered = this.covered.find((c) => c.start > this.next && c.start < end);
      const rows = (nextCovered ? nextCovered.start : end) - this.next;
      const run = { rowGroup: this.group, firstRow: this.next, rows, bytes: groupShare(g, this.next - g.firstRow, rows) };
      this.next += rows;
      return run;
    }
  }

  span(rowGroup: number): RowGroupSpan {
    return this.groups[rowGroup]!;
  }
}

/** A row group's compressed bytes shared out among its rows: what `rows` rows from `at` stand for. */
export function groupShare(g: RowGroupSpan, at: number, rows: number): number {
  const share = (r: number): number => Math.round((r / Math.max(1, g.rows)) * g.compressedBytes);
  return share(at + rows) - share(at);
}

/** The parsers the reader converts with: none, every value handed over as its physical units. */
const PHYSICAL = { timestampFromMilliseconds: (v: bigint) => v, timestampFromMicroseconds: (v: bigint) => v, timestampFromNanoseconds: (v: bigint) => v, dateFromDays: (v: number) => v };

/** One value column of a slice, the slice's rows only. */
type Values = ArrayLike<RawValue | undefined>;

/** Reads a slice's columns (the physical values, see `rawMetadata`). */
export async function readSlice(file: ParquetFile, slice: ParquetSlice, columns: readonly ParquetColumn[]): Promise<Values[]> {
  const fields = [...new Set(columns.map((c) => c.field))];
  const pieces = new Map<string, ColumnData[]>(fields.map((f) => [f, []]));
  const rowStart = slice.firstRow;
  const rowEnd = slice.firstRow + slice.rows;
  await parquetRead({
    file: file.buffer,
    metadata: file.raw,
    columns: fields,
    rowStart,
    rowEnd,
    compressors,
    utf8: false,
    parsers: PHYSICAL,
    onChunk: (c) => pieces.get(c.columnName)?.push(c),
  });
  const byField = new Map<string, Values>();
  for (const [field, list] of pieces) byField.set(field, rowsOf(list, rowStart, rowEnd, field, file.path));
  return columns.map((c) => byField.get(c.field)!);
}

/** The rows [start, end) of a column from the pieces the reader handed over (which may reach past them). */
function rowsOf(list: readonly ColumnData[], start: number, end: number, field: string, path: string): Values {
  const one = list.find((p) => p.rowStart <= start && p.rowEnd >= end);
  if (one) {
    const a = start - one.rowStart;
    const data = one.columnData as unknown as { subarray?: (a: number, b: number) => Values; slice: (a: number, b: number) => Values };
    return a === 0 && one.rowEnd === end ? (one.columnData as unknown as Values) : data.subarray ? data.subarray(a, a + end - start) : data.slice(a, a + end - start);
  }
  const out: (RawValue | undefined)[] = new Array(end - start);
  let filled = 0;
  for (const p of list) {
    const from = Math.max(start, p.rowStart);
    const to = Math.min(end, p.rowEnd);
    const data = p.columnData as unknown as ArrayLike<RawValue>;
    for (let r = from; r < to; r++) out[r - start] = data[r - p.rowStart];
    if (to > from) filled += to - from;
  }
  if (filled !== end - start) throw new LoadError('bad-input', `${path}: field ${field} has ${filled} values for rows ${start + 1}–${end}, expected ${end - start}`);
  return out;
}

/** Writes one column's non-NULL value as a COPY text field. */
type FieldWriter = (v: RawValue, out: WireBuffer) => void;

/** The COPY text writer of a column, fast paths for the common physical values. */
export function fieldWriter(c: ParquetColumn): FieldWriter {
  const { shape, rendering } = c;
  if (rendering === 'json') return (v, out) => putCopyText(out, jsonText(shape, v));
  if (rendering === 'array') return (v, out) => putCopyText(out, arrayLiteral(shape, v, false));
  if (shape.shape !== 'leaf') return (v, out) => putCopyText(out, jsonText(shape, v));
  const leaf = shape.leaf;
  switch (leaf.kind) {
    case 'int':
      return (v, out) => putCopyText(out, typeof v === 'number' ? String(v) : (v as bigint).toString());
    case 'string':
    case 'json':
      return (v, out) => putCopyBytes(out, v as Uint8Array);
    case 'bytes':
      return rendering === 'bytea' ? (v, out) => putCopyText(out, leafText(leaf, v, true)) : (v, out) => putCopyBytes(out, v as Uint8Array);
    case 'decimal': {
      const scale = leaf.scale;
      return (v, out) => putCopyText(out, decimalText(v instanceof Uint8Array ? bigEndianSigned(v) : (v as number | bigint), scale));
    }
    case 'date': {
      // Dates repeat (a few thousand distinct in a TPC-H column): their text is kept.
      const seen = new Map<number, string>();
      return (v, out) => {
        let t = seen.get(v as number);
        if (t === undefined) {
          t = leafText(leaf, v, false);
          if (seen.size < 65536) seen.set(v as number, t);
        }
        putCopyText(out, t);
      };
    }
    default:
      return (v, out) => putCopyText(out, leafText(leaf, v, false));
  }
}

const TAB = 0x09;
const NEWLINE = 0x0a;
const NULL_BYTES = [0x5c, 0x4e];

/**
 * Rows `from`… of decoded columns as COPY text (one line a row, tab between fields, `\N`
 * for NULL), until `to` or until `out` holds `limit` bytes or more; returns the row it
 * stopped before.
 */
export function copyTextRows(values: readonly Values[], from: number, to: number, writers: readonly FieldWriter[], out: WireBuffer, limit = Infinity): number {
  const n = values.length;
  let r = from;
  while (r < to && out.pos < limit) {
    for (let c = 0; c < n; c++) {
      if (c > 0) putByte(out, TAB);
      const v = values[c]![r];
      if (v === null || v === undefined) {
        out.reserve(2);
        out.bytes[out.pos++] = NULL_BYTES[0]!;
        out.bytes[out.pos++] = NULL_BYTES[1]!;
      } else writers[c]!(v, out);
    }
    putByte(out, NEWLINE);
    r++;
  }
  return r;
}

/** The bytes written to `out`, as a Buffer (the same memory). */
export function written(out: WireBuffer): Buffer {
  return Buffer.from(out.bytes.buffer, out.bytes.byteOffset, out.pos);
}

/** A slice's rows as JSON lines, for the reject file: `{"file", "row_group", "row" (1-based in the file), "values": {field: value}}`. */
export function jsonLinesOf(values: readonly Values[], slice: ParquetSlice, columns: readonly ParquetColumn[], file: string): Buffer {
  const lines: string[] = [];
  for (let r = 0; r < slice.rows; r++) {
    const fields = columns.map((c, i) => `${JSON.stringify(c.field)}:${jsonText(c.shape, (values[i]![r] ?? null) as RawValue)}`);
    lines.push(`{"file":${JSON.stringify(file)},"row_group":${slice.rowGroup},"row":${slice.firstRow + r + 1},"values":{${fields.join(',')}}}\n`);
  }
  return Buffer.from(lines.join(''), 'utf8');
}

export interface ParquetOpenOptions {
  readonly workers: number;
  readonly chunkBytes: number;
  /** Row ranges an earlier run of the load committed. */
  readonly covered?: readonly ByteRange[];
}

/**
 * A Parquet input as chunk sources: one per worker, all taking the file's runs (row
 * groups) from one cursor, so the workers read different row groups at once. A reader
 * decodes its row group once (memory: one decoded row group per reader), then cuts it
 * into chunks of at most `chunkBytes` of COPY text (a row past the bound ends the chunk),
 * each made when the queue has room for it. A chunk's rows as JSON lines are made again
 * from the file only if the server refuses one of them.
 */
export async function openParquetInput(target: LoadTarget, options: ParquetOpenOptions): Promise<{ sources: ChunkSource[]; size: number }> {
  const planned = target.parquetColumns;
  if (planned === undefined) throw new Error('internal: Parquet input without a column plan');
  const columns: readonly ParquetColumn[] = planned;
  const file = await openParquet(target.file);
  const groups = rowGroupSpans(file.metadata);
  const cursor = new RunCursor(groups, options.covered ?? []);
  const writers = columns.map(fieldWriter);
  const parts = Math.max(1, Math.min(options.workers, groups.length));
  let open = parts;
  const chunkOf = (slice: ParquetSlice, data: Buffer): Chunk => {
    // Read again from a file opened anew: the readers may be done and their file closed by the time a chunk is refused.
    const readSource = async (): Promise<Buffer> => {
      const again = await openParquet(target.file);
      try {
        return jsonLinesOf(await readSlice(again, slice, columns), slice, columns, target.file);
      } finally {
        await again.close();
      }
    };
    const chunk: Chunk = {
      location: { file: target.file, byteOffset: slice.firstRow, byteLength: slice.rows, firstLine: slice.firstRow + 1, rowGroup: slice.rowGroup, sourceBytes: slice.bytes },
      data,
      readSource,
      records: slice.rows,
      lines: slice.rows,
      target,
      splitRecords: async () => new ParquetRowRecords(chunk, await readSource()),
    };
    return chunk;
  };
  async function* chunksOf(run: ParquetSlice): AsyncGenerator<Chunk> {
    const values = await readSlice(file, run, columns);
    const span = cursor.span(run.rowGroup);
    for (let r = 0; r < run.rows; ) {
      // A little room past the bound: the row that crosses it is the chunk's last.
      const out = new WireBuffer(options.chunkBytes + 64 * 1024);
      const end = copyTextRows(values, r, run.rows, writers, out, options.chunkBytes);
      const firstRow = run.firstRow + r;
      yield chunkOf({ rowGroup: run.rowGroup, firstRow, rows: end - r, bytes: groupShare(span, firstRow - span.firstRow, end - r) }, written(out));
      r = end;
    }
  }
  const sources = Array.from({ length: parts }, () =>
    (async function* (): AsyncGenerator<Chunk> {
      try {
        for (let run = cursor.take(); run !== undefined; run = cursor.take()) yield* chunksOf(run);
      } finally {
        if (--open === 0) await file.close();
      }
    })(),
  );
  return { sources, size: file.size };
}
