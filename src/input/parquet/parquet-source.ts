import os from 'node:os';
import { parquetRead, parquetSchema, type ColumnChunk, type ColumnData, type FileMetaData, type SchemaElement } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import type { Chunk, LoadTarget } from '../../core/chunk.js';
import type { ChunkSource } from '../chunk-queue.js';
import { LoadError, START_OVER_HINT } from '../../core/load-error.js';
import { WireBuffer } from '../../codecs/field-encoder.js';
import type { ByteRange } from '../byte-ranges.js';
import type { ParquetColumn } from './parquet-columns.js';
import { openParquet, type ParquetFile } from './parquet-file.js';
import { ParquetRowRecords } from './parquet-rows.js';
import { arrayLiteral, bigEndianSigned, decimalText, jsonText, leafText, putByte, putCopyBytes, putCopyText, type RawValue } from './parquet-text.js';
import { BufferPool, dropColumn, flatColumnPages, isFlatColumn, NotFlat, ownedBuffers, type FlatColumn, type FlatDecode } from './flat-decoder.js';
import type { ColumnPool } from './parquet-kernels.js';
import { KernelPool, ParquetKernels } from './parquet-kernels.js';
import { binaryCell, flatColumnWriter, textCell, type BinaryCell, type DecodedColumn, type TextCell } from './parquet-cells.js';
import { DecodeThread, DecodeThreadFailed } from './decode-thread.js';
import { ColumnTuples, compileFlatTuples, tupleRoom, type FlatTuplesWriter } from './flat-tuples.js';
import { wasmFlatTuples } from './wasm-tuples.js';
import type { WireColumn } from '../../codecs/catalog.js';
import type { TypedRows, TypedTuples } from '../../codecs/typed-rows.js';
import { writeTupleStart } from '../../codecs/binary-copy.js';

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

/** Where a top-level flat field's column chunk lies in a row group, for the flat decoder; undefined for a column it does not read (hyparquet's). */
export interface FlatChunk {
  readonly chunk: ColumnChunk;
  readonly element: SchemaElement;
  /** The chunk's bytes in the file: from its dictionary page (or first data page), `length` of them. */
  readonly start: number;
  readonly length: number;
}

export function flatChunkOf(raw: FileMetaData, rowGroup: number, field: string, elements: ReadonlyMap<string, SchemaElement> = topElements(raw)): FlatChunk | undefined {
  const group = raw.row_groups[rowGroup]!;
  const chunk = group.columns.find((cc) => cc.meta_data?.path_in_schema.length === 1 && cc.meta_data.path_in_schema[0] === field);
  const element = elements.get(field);
  if (chunk === undefined || element === undefined || element.num_children || !isFlatColumn(element, chunk.meta_data)) return undefined;
  const meta = chunk.meta_data!;
  const dict = meta.dictionary_page_offset;
  const start = Number(dict !== undefined && dict > 0n && dict < meta.data_page_offset ? dict : meta.data_page_offset);
  return { chunk, element, start, length: Number(meta.total_compressed_size) };
}

/** The file's top-level fields' schema elements, by name. */
export function topElements(raw: FileMetaData): Map<string, SchemaElement> {
  return new Map(parquetSchema(raw).children.map((t) => [t.element.name, t.element]));
}

/**
 * On the load's event loop, a column chunk is decoded for at most about this long before
 * the loop runs (and the writers refill their sockets). A Unix socket holds ~200 KB, but its
 * writer is woken to refill it only once it is down to a quarter (Linux's unix_writable):
 * ~50 KB, ~0.6 ms of a backend's COPY. A decoding block longer than that when the wakeup
 * comes leaves the backend waiting (SF 1 lineitem -w1: at 1 ms the backend waited ~0.13 s
 * more a load than at 0.25; with a 4 MB socket buffer Parquet waited as the `.tbl` did).
 * The decoder stops between pages and between the steps of a big page (`STEPPED_PAGE_BYTES`).
 */
export const DECODE_SLICE_MS = 0.25;

/**
 * Decodes one flat column chunk read from the file (into `scratch`, the compressed bytes
 * being needed only while it is decoded), or undefined when a page turns out not flat
 * (`NotFlat`: hyparquet's then). `sliceMs`: let the event loop run between pages after
 * that much decoding (undefined: decode the chunk in one go, as a decoding thread does).
 */
export async function decodeFlatChunk(
  file: ParquetFile,
  at: FlatChunk,
  groupRows: number,
  scratch: Scratch = { bytes: undefined },
  pool?: ColumnPool,
  sliceMs?: number,
  kernels: ParquetKernels | null = ParquetKernels.get(),
): Promise<FlatColumn | undefined> {
  if (scratch.bytes === undefined || scratch.bytes.length < at.length) scratch.bytes = new Uint8Array(Math.max(at.length, 2 * (scratch.bytes?.length ?? 0)));
  const bytes = scratch.bytes.subarray(0, at.length);
  await file.readInto(at.start, bytes);
  const pages = flatColumnPages(bytes, at.chunk, at.element, groupRows, pool, kernels);
  try {
    let since = performance.now();
    for (;;) {
      const step = pages.next();
      if (step.done) return step.value;
      if (sliceMs !== undefined && performance.now() - since >= sliceMs) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        since = performance.now();
      }
    }
  } catch (error) {
    if (error instanceof NotFlat) return undefined;
    throw error;
  } finally {
    // Left unfinished (nothing between steps throws, but should something): its arrays and page regions go back.
    pages.return(undefined as never);
  }
}

/** A reader's buffer for the compressed column chunk being decoded, reused chunk after chunk (a fresh one each time cost its page faults). */
export interface Scratch {
  bytes: Uint8Array | undefined;
}

/**
 * `FlatDecode` on this thread, from an open file; not called again before the last call's
 * promise settles (one scratch buffer). `pool`: where the columns' arrays come from, and
 * where their owner gives them back (`SliceRows`). `sliceMs`: as for `decodeFlatChunk`.
 * `kernels`: the WebAssembly kernels the decoder uses (Snappy), none when null.
 */
export function flatDecodeHere(file: ParquetFile, pool?: ColumnPool, sliceMs?: number, kernels: ParquetKernels | null = ParquetKernels.get()): FlatDecode {
  const elements = topElements(file.raw);
  const scratch: Scratch = { bytes: undefined };
  return async (rowGroup, fields) => {
    const groupRows = Number(file.raw.row_groups[rowGroup]!.num_rows);
    const out: (FlatColumn | undefined)[] = [];
    try {
      for (const f of fields) {
        const at = flatChunkOf(file.raw, rowGroup, f, elements);
        out.push(at === undefined ? undefined : await decodeFlatChunk(file, at, groupRows, scratch, pool, sliceMs, kernels));
      }
    } catch (error) {
      // A later column failed: the ones decoded go back.
      if (pool !== undefined) for (const c of out) if (c !== undefined) dropColumn(pool, c);
      throw error;
    }
    return out;
  };
}

/**
 * Decodes a slice's columns: each top-level flat column chunk by the flat decoder (the
 * whole row group's chunk, the slice's rows from `base`; on this thread, or by `flat`: a
 * decoding thread's), every other column (nested, or an encoding the flat decoder does
 * not read) by hyparquet (`readSlice`).
 */
export async function decodeSlice(
  file: ParquetFile,
  slice: ParquetSlice,
  columns: readonly ParquetColumn[],
  groupFirstRow: number,
  flat: FlatDecode = flatDecodeHere(file),
  /** Where the flat columns go back when hyparquet's part fails (a reader's `recycle`). */
  giveBack?: (columns: FlatColumn[]) => void,
): Promise<DecodedColumn[]> {
  const fields = [...new Set(columns.map((c) => c.field))];
  const flats = await flat(slice.rowGroup, fields);
  const decoded = new Map<string, DecodedColumn>();
  fields.forEach((f, i) => {
    const d = flats[i];
    if (d !== undefined) decoded.set(f, { flat: d, base: slice.firstRow - groupFirstRow });
  });
  const general = columns.filter((c) => !decoded.has(c.field));
  if (general.length > 0) {
    let values: Awaited<ReturnType<typeof readSlice>>;
    try {
      values = await readSlice(file, slice, general);
    } catch (error) {
      giveBack?.(flats.filter((c) => c !== undefined));
      throw error;
    }
    general.forEach((c, i) => decoded.set(c.field, { values: values[i]! }));
  }
  return columns.map((c) => decoded.get(c.field)!);
}

/**
 * A row group that does not decode (a damaged page, a page its writer got wrong) → a
 * LoadError naming the file, the row group and its rows; the load stops there, the chunks
 * committed before it stay. The mended file is another file to the ledger (a resume refuses
 * it), so, as for a framing error, the way on is loading it again with --truncate.
 * Errors that already say where (LoadError), a decoding thread's own failure and pgsurge's
 * own (`internal:`) pass as they are.
 */
export function undecodable(file: { readonly path: string }, slice: ParquetSlice, error: unknown): unknown {
  if (error instanceof LoadError || error instanceof DecodeThreadFailed || !(error instanceof Error) || error.message.startsWith('internal:')) return error;
  return new LoadError('bad-input', `${file.path}: row group ${slice.rowGroup} (rows ${slice.firstRow + 1}–${slice.firstRow + slice.rows}) does not decode: ${error.message}`, {
    hint: `the file is damaged or written in a way pgsurge cannot read; ${START_OVER_HINT}`,
    startOver: true,
    cause: error,
  });
}

/** Rows [from, to) of a slice's cells as COPY text (see `copyTextRows`), until `out` holds `limit` bytes or more; returns the row it stopped before. */
export function copyTextCells(cells: readonly TextCell[], from: number, to: number, out: WireBuffer, limit = Infinity): number {
  const n = cells.length;
  let r = from;
  while (r < to && out.pos < limit) {
    for (let c = 0; c < n; c++) {
      if (c > 0) putByte(out, TAB);
      cells[c]!(r, out);
    }
    putByte(out, NEWLINE);
    r++;
  }
  return r;
}

/** A slice's rows [from, to) as binary COPY tuples until `out` reaches `limit`; the row it stopped before, or the first value it cannot encode. */
export function binaryTupleRows(cells: readonly BinaryCell[], from: number, to: number, out: WireBuffer, limit: number): number | { row: number; column: number } {
  const n = cells.length;
  let r = from;
  while (r < to && out.pos < limit) {
    writeTupleStart(out, n);
    for (let c = 0; c < n; c++) if (!cells[c]!(r, out)) return { row: r, column: c };
    r++;
  }
  return r;
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

/** Gives back the arrays and plans of rows collected without their last release. */
const ABANDONED = new FinalizationRegistry<() => void>((giveBack) => {
  try {
    giveBack();
  } catch {
    // (a decoding thread already closed: its arrays go with it)
  }
});

/**
 * A decoded slice's rows, as COPY text cells and, per column types, binary tuples (planned
 * once, kept). The chunks cut from it hold it (`hold`) until each is committed and lets go
 * (`release`); when the last has, the flat columns' arrays go back to be decoded into again
 * (`recycle`: the reader's pool, or its decoding thread), and these rows are not to be read.
 */
export class SliceRows {
  private readonly cells: readonly TextCell[];
  /** Bytes of COPY text a row takes, as sampled (`textBytesPerRow`). */
  rowBytes = 64;
  private tuples: { key: string; plan: TuplePlan | string } | undefined;
  /** Every plan made for these rows (a chunk may still write by an earlier one when the key changes): released with the rows. */
  private readonly plans: TuplePlan[] = [];
  private holders = 0;
  private recycled = false;
  /** The flat columns, each once (two table columns may read one field). */
  private readonly flats: FlatColumn[];

  constructor(
    private readonly decoded: readonly DecodedColumn[],
    private readonly columns: readonly ParquetColumn[],
    writers: readonly FieldWriter[],
    private readonly recycle?: (columns: FlatColumn[]) => void,
    /** The kernels that write the binary tuples (`tuplePlan`), none when null. */
    private readonly kernels: ParquetKernels | null = ParquetKernels.get(),
  ) {
    this.cells = decoded.map((d, i) => textCell(d, columns[i]!, writers[i]!));
    this.flats = [...new Set(decoded.flatMap((d) => ('flat' in d ? [d.flat] : [])))];
    // Rows dropped without their last release (a stopped load, a reader closed early) still give their arrays and plans back, when collected.
    if (recycle !== undefined) {
      const { flats, plans } = this;
      ABANDONED.register(this, () => {
        for (const p of plans) p.release();
        recycle(flats);
      }, this);
    }
  }

  /** The rows' COPY text cells. */
  get text(): readonly TextCell[] {
    this.check();
    return this.cells;
  }

  /** `chunks` more chunks read these rows until each is released. */
  hold(chunks: number): void {
    this.check();
    this.holders += chunks;
  }

  /** A chunk that held these rows is committed: the last one sends the arrays back. */
  release(): void {
    if (this.holders <= 0) throw new Error('internal: Parquet rows released more often than held');
    if (--this.holders > 0) return;
    for (const p of this.plans.splice(0)) p.release();
    this.tuples = undefined;
    if (this.recycle === undefined) return;
    this.recycled = true;
    ABANDONED.unregister(this);
    this.recycle(this.flats);
  }

  private check(): void {
    if (this.recycled) throw new Error('internal: Parquet rows read after every chunk of them was released');
  }

  /** Bytes of COPY text a row of the first `rows` rows takes, on average. */
  textBytesPerRow(rows: number): number {
    if (rows === 0) return 1;
    const out = new WireBuffer(256 * rows);
    copyTextCells(this.text, 0, rows, out);
    return Math.max(1, out.pos / rows);
  }

  /** The tuples of rows [from, from + rows) for the table's COPY columns, or why they go as text. */
  binary(wire: readonly WireColumn[], from: number, rows: number): TypedTuples | string {
    this.check();
    const key = wire.map((w) => w.typname).join(',');
    if (this.tuples?.key !== key) {
      const plan = tuplePlan(this.decoded, this.columns, wire, this.kernels);
      if (typeof plan === 'object') this.plans.push(plan);
      this.tuples = { key, plan };
    }
    return sliceTuples(this.tuples.plan, this.columns, wire, from, rows);
  }
}

/** How a slice's rows are written as binary tuples: per column, and the room a row takes. */
export interface TuplePlan {
  readonly columns: readonly ColumnTuples[];
  readonly room: number;
  /** `writeFlatTuples` of these columns: by the kernels (`wasmFlatTuples`), else compiled for their kinds (`compileFlatTuples`). */
  readonly write: FlatTuplesWriter;
  /** The plan is done with: the kernels' copy of its columns is given back (`write` then refuses). */
  release(): void;
}

/** The tuple plan of decoded columns for the table's COPY columns, or why they go as text (a pair without an exact binary form). */
export function tuplePlan(decoded: readonly DecodedColumn[], columns: readonly ParquetColumn[], wire: readonly WireColumn[], kernels: ParquetKernels | null = ParquetKernels.get()): TuplePlan | string {
  if (wire.length !== columns.length) return `the COPY has ${wire.length} columns, the Parquet plan ${columns.length}`;
  const plan: ColumnTuples[] = [];
  for (const [i, c] of columns.entries()) {
    const d = decoded[i]!;
    const why = `column ${c.column} is ${wire[i]!.declared}, field ${c.field} is ${c.shape.label}: no exact binary form`;
    if ('flat' in d) {
      const writer = flatColumnWriter(d.flat, c, wire[i]!);
      if (writer === undefined) return why;
      plan.push(ColumnTuples.ofFlat(d.flat, d.base, writer));
    } else {
      const cell = binaryCell(d, c, wire[i]!);
      if (cell === undefined) return why;
      plan.push(ColumnTuples.ofCell(cell));
    }
  }
  const room = tupleRoom(plan);
  const js = compileFlatTuples(plan, room);
  const wasm = wasmFlatTuples(plan, room, js, kernels);
  return { columns: plan, room, write: wasm?.write ?? js, release: () => wasm?.release() };
}

/** Rows [from, from + rows) of a planned slice as the wire's typed tuples. */
export function sliceTuples(plan: TuplePlan | string, columns: readonly ParquetColumn[], wire: readonly WireColumn[], from: number, rows: number): TypedTuples | string {
  if (typeof plan === 'string') return plan;
  return {
    rows,
    write(at, out, limit) {
      const r = plan.write(from + at, from + rows, out, limit);
      if (typeof r === 'number') return r - from;
      const c = columns[r.column]!;
      return { row: r.row - from, column: r.column, why: `field ${c.field}'s value does not fit column ${c.column} (${wire[r.column]!.declared}): the server decides, as text` };
    },
  };
}

/** Rows of a file's first run whose COPY text is made to measure a row's width (and so the rows a chunk takes): 500 gives the mean width within a few percent for narrow rows, and its text, made cold, cost a cold SF 0.1 load ~0.15 µs a row at 2,000. */
export const ROW_WIDTH_SAMPLE = 500;

export interface ParquetOpenOptions {
  readonly workers: number;
  readonly chunkBytes: number;
  /** Row ranges an earlier run of the load committed. */
  readonly covered?: readonly ByteRange[];
  /**
   * Decode the flat columns in a thread per reader (`decode-thread.ts`), not on the load's
   * event loop: true or false decides (a file of one row group is decoded on the loop
   * always); default `decodeThreadsByDefault`.
   */
  readonly decodeThreads?: boolean | undefined;
  /** false: no WebAssembly kernels (decoding, Snappy, tuples in JavaScript only); default: the kernels where WebAssembly runs. */
  readonly wasm?: boolean | undefined;
}

/**
 * Whether a load's readers decode in threads of their own, unless told: when the machine
 * has a core to spare for them beyond one per worker and one for the load's loop
 * (`workers + 1 < cores`). A thread takes the decoding off the event loop, but costs the
 * client CPU (its arrays are handed over, then copied into the kernels' memory for the
 * tuples, and the thread starts up). On 2 cores at -w1 decoding on the loop into the
 * kernels' memory measured faster (threads on / off 0.95–0.97 in three runs,
 * bench/results/parquet.md; at -w2 the rule leaves them off). `decodeThreads` decides instead
 * (the CLI sets it from PGSURGE_PARQUET_DECODE_THREADS=1 or 0, for measuring both).
 */
export function decodeThreadsByDefault(workers: number, cores: number): boolean {
  return workers + 1 < cores;
}

/**
 * A Parquet input as chunk sources: one per worker, all taking the file's runs (row
 * groups) from one cursor, so the workers read different row groups at once. A reader
 * decodes its row group once (memory: one decoded row group per reader, and each chunk in
 * flight holds its own until committed), then cuts it into chunks of about `chunkBytes`
 * of COPY text by rows. A chunk holds references into the decoded rows: the binary wire
 * has them write binary tuples (`typed`), and its COPY text (`data`) is made only when
 * asked for. A chunk's rows as JSON lines are made again from the file only if the
 * server refuses one of them.
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
  const chunkOf = (slice: ParquetSlice, rows: SliceRows, from: number): Chunk => {
    // Read again from a file opened anew: the readers may be done and their file closed by the time a chunk is refused.
    const readSource = async (): Promise<Buffer> => {
      const again = await openParquet(target.file);
      try {
        return jsonLinesOf(await readSlice(again, slice, columns), slice, columns, target.file);
      } finally {
        await again.close();
      }
    };
    let text: Buffer | undefined;
    let held: SliceRows | undefined = rows;
    const chunk: Chunk = {
      location: { file: target.file, byteOffset: slice.firstRow, byteLength: slice.rows, firstLine: slice.firstRow + 1, rowGroup: slice.rowGroup, sourceBytes: slice.bytes },
      // COPY text, made the first time the text wire (or a refused chunk's isolation) asks for it.
      get data(): Buffer {
        if (text === undefined) {
          const out = new WireBuffer(Math.ceil(1.1 * heldRows().rowBytes * slice.rows) + 64 * 1024);
          copyTextCells(heldRows().text, from, from + slice.rows, out);
          text = written(out);
        }
        return text;
      },
      readSource,
      records: slice.rows,
      lines: slice.rows,
      target,
      splitRecords: async () => new ParquetRowRecords(chunk, await readSource()),
      typed: { binary: (wire, _session) => heldRows().binary(wire, from, slice.rows) },
      // Committed: the decoded row group is needed no more by this chunk (its text, if made, is its own).
      release: () => {
        if (held === undefined) return;
        held = undefined;
        rows.release();
      },
    };
    const heldRows = (): SliceRows => {
      if (held === undefined) throw new Error(`internal: the Parquet chunk of rows ${slice.firstRow + 1}… was released and asked for its rows`);
      return held;
    };
    return chunk;
  };
  // The kernels on the load's loop (decoding where no thread does, the tuples always), none when told so.
  const loopKernels = options.wasm === false ? null : ParquetKernels.get();
  const decodeRun = async (run: ParquetSlice, flat: FlatDecode, recycle: (columns: FlatColumn[]) => void): Promise<SliceRows> =>
    new SliceRows(
      await decodeSlice(file, run, columns, cursor.span(run.rowGroup).firstRow, flat, recycle).catch((error: unknown) => {
        throw undecodable(file, run, error);
      }),
      columns,
      writers,
      recycle,
      loopKernels,
    );
  // A row's COPY text width, sampled once a file (on the first run a reader decodes): sampling every row group
  // made 500 rows of text each time, a block of the load's loop of 1–3 ms (SF 1 lineitem: 49 of them, ~60 ms of CPU).
  let rowBytes: number | undefined;
  function* chunksOf(run: ParquetSlice, rows: SliceRows): Generator<Chunk> {
    const span = cursor.span(run.rowGroup);
    // Rows a chunk: as many as about `chunkBytes` of COPY text hold, the text's width sampled on the file's first run's first rows.
    rows.rowBytes = rowBytes ??= rows.textBytesPerRow(Math.min(run.rows, ROW_WIDTH_SAMPLE));
    const step = Math.max(1, Math.floor(options.chunkBytes / rows.rowBytes));
    rows.hold(Math.ceil(run.rows / step));
    for (let r = 0; r < run.rows; r += step) {
      const n = Math.min(step, run.rows - r);
      const firstRow = run.firstRow + r;
      yield chunkOf({ rowGroup: run.rowGroup, firstRow, rows: n, bytes: groupShare(span, firstRow - span.firstRow, n) }, rows, r);
    }
  }
  // A file of one row group has nothing to decode ahead, and a thread's start-up (~0.1 s of CPU) would be most of its decoding.
  const threads = groups.length > 1 && (options.decodeThreads ?? decodeThreadsByDefault(options.workers, os.availableParallelism()));
  const sources = Array.from({ length: parts }, () =>
    (async function* (): AsyncGenerator<Chunk> {
      // A decoding thread (started at the reader's first row group, ended with the reader) decodes the reader's next
      // run while this one's chunks are sent; without one, each run is decoded here when its first chunk is asked for.
      const thread = threads ? new DecodeThread(target.file, options.wasm !== false) : undefined;
      // A committed run's arrays are decoded into again: by this reader's thread (handed back to it), or here.
      // Decoding here: into the kernels' memory where there are kernels (their tuples then copy nothing in), else a pool of arrays.
      const kernels = thread === undefined ? loopKernels : null;
      const pool: ColumnPool | undefined = thread !== undefined ? undefined : kernels !== null ? new KernelPool(kernels) : new BufferPool();
      const flat = thread?.decode ?? flatDecodeHere(file, pool, DECODE_SLICE_MS, loopKernels);
      const recycle = (columns: FlatColumn[]): void => {
        if (thread === undefined) for (const c of columns) dropColumn(pool!, c);
        else {
          const buffers = columns.flatMap(ownedBuffers);
          thread.recycle(buffers.filter((b, i) => buffers.indexOf(b) === i));
        }
      };
      const ahead = (run: ParquetSlice | undefined): Promise<SliceRows> | undefined => {
        if (run === undefined) return undefined;
        const p = decodeRun(run, flat, recycle);
        // Awaited when its turn comes; until then a failure must not count as unhandled.
        p.catch(() => undefined);
        return p;
      };
      try {
        let run = cursor.take();
        let next = thread ? ahead(run) : undefined;
        while (run !== undefined) {
          const rows = await (next ?? decodeRun(run, flat, recycle));
          const after = cursor.take();
          next = thread ? ahead(after) : undefined;
          yield* chunksOf(run, rows);
          run = after;
        }
      } finally {
        await thread?.close();
        if (--open === 0) await file.close();
      }
    })(),
  );
  return { sources, size: file.size };
}
