import type { ColumnChunk, ColumnMetaData, CompressionCodec, SchemaElement } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { parquetHeader } from 'hyparquet/src/column.js';
import { decompressPage } from 'hyparquet/src/datapage.js';
import { readRleBitPackedHybrid } from 'hyparquet/src/encoding.js';
import { KernelMemoryFull, ParquetKernels, type ColumnPool, type SnappySteps } from './parquet-kernels.js';
import type { RawValue } from './parquet-text.js';

/*
 * A decoder of our own for the common column: a top-level leaf (REQUIRED or OPTIONAL, no
 * repetition), PLAIN or dictionary-encoded values, data pages v1 or v2. hyparquet decodes
 * such a column into a JavaScript array through its level assembly (`assembleLists`, run
 * for every optional column) and a value object per row; here a column chunk becomes one
 * typed array of value indexes (a row's value, -1 for NULL) and its values as bytes, with
 * nothing made per row, so the writers read them straight into COPY text or binary.
 * hyparquet still reads the footer, the page headers (thrift) and decompresses the pages;
 * anything else (nested fields, DELTA_*, BYTE_STREAM_SPLIT, INT96) is left to its general path.
 */

/** The physical types this decoder reads. */
type FlatType = 'BOOLEAN' | 'INT32' | 'INT64' | 'FLOAT' | 'DOUBLE' | 'BYTE_ARRAY' | 'FIXED_LEN_BYTE_ARRAY';

/** The encodings a column chunk may list for this decoder (RLE and BIT_PACKED being the levels', or RLE booleans). */
const FLAT_ENCODINGS = new Set(['PLAIN', 'PLAIN_DICTIONARY', 'RLE_DICTIONARY', 'RLE', 'BIT_PACKED']);

/**
 * A column chunk decoded: per row the index of its value (-1 for NULL), the values in the
 * order of the dictionary page then of the plain pages. Fixed-width values (every type but
 * BYTE_ARRAY; BOOLEAN one byte 0/1) are `width` bytes each in `bytes`, little-endian as in
 * the file; BYTE_ARRAY values are `bytes[span[2i], span[2i + 1])`.
 */
export interface FlatColumn {
  readonly type: FlatType;
  readonly rows: number;
  readonly index: Int32Array;
  /** Bytes a value takes, for fixed-width types; 0 for BYTE_ARRAY. */
  readonly width: number;
  readonly bytes: Uint8Array;
  /** BYTE_ARRAY only: value i is `bytes[span[2i], span[2i + 1])`. */
  readonly span: Int32Array | undefined;
  /** Views of `bytes` (8-byte aligned) for the numeric types. */
  readonly i32: Int32Array;
  readonly f32: Float32Array;
  readonly f64: Float64Array;
}

/** Whether this decoder reads a top-level field's column chunk (else hyparquet's general path does). */
export function isFlatColumn(element: SchemaElement, meta: ColumnMetaData | undefined): boolean {
  if (meta === undefined || element.repetition_type === 'REPEATED') return false;
  if (meta.path_in_schema.length !== 1) return false;
  const t = meta.type;
  if (t === 'INT96' || (t === 'FIXED_LEN_BYTE_ARRAY' && !element.type_length)) return false;
  return meta.encodings.every((e) => FLAT_ENCODINGS.has(e));
}

/** Gives a decoded column's arrays back to the pool they came from. */
export function dropColumn(pool: ColumnPool, c: FlatColumn): void {
  pool.drop(c.index);
  pool.drop(c.bytes);
  if (c.span !== undefined) pool.drop(c.span);
}

/**
 * The big arrays of decoded row groups, given back once every chunk cut from them is
 * committed (`SliceRows`) and taken again by the next row groups' columns, which want the
 * same sizes row group after row group. Fresh arrays each row group (~16 MB for one of
 * lineitem's 122,880 rows) cost the load's collector and its page faults: the main thread
 * ran a full collection every other row group (`node --trace-gc`), pausing the writes the
 * backends wait on.
 */
export class BufferPool implements ColumnPool {
  private readonly free: ArrayBuffer[] = [];
  private held = 0;
  /** `minPooled`: smaller buffers are left to the allocator (16 KB: a row group of 4,096 rows has its index arrays pooled; tests pool every size). */
  constructor(
    private readonly maxBytes = 192 * 1024 * 1024,
    private readonly minPooled = 16 * 1024,
  ) {}

  /** A buffer of at least `size` bytes: the smallest free one that fits, if it is not more than twice the size; else a new one. */
  take(size: number): ArrayBuffer {
    if (size >= this.minPooled) {
      let best = -1;
      for (let i = 0; i < this.free.length; i++) {
        const n = this.free[i]!.byteLength;
        if (n >= size && n <= 2 * size && (best < 0 || n < this.free[best]!.byteLength)) best = i;
      }
      if (best >= 0) {
        const b = this.free[best]!;
        this.free[best] = this.free[this.free.length - 1]!;
        this.free.pop();
        this.held -= b.byteLength;
        return b;
      }
    }
    return new ArrayBuffer(size);
  }

  /** Buffers nothing reads any more (those detached by a transfer, or too small, are passed over); past `maxBytes` they are let go. */
  give(buffers: readonly ArrayBuffer[]): void {
    for (const b of buffers) {
      if (b.byteLength < this.minPooled || this.held + b.byteLength > this.maxBytes || this.free.includes(b)) continue;
      this.free.push(b);
      this.held += b.byteLength;
    }
  }

  bytes(size: number): Uint8Array {
    return new Uint8Array(this.take(size), 0, size);
  }

  drop(view: ArrayBufferView): void {
    this.give([view.buffer as ArrayBuffer]);
  }

  /** Buffers held, for tests. */
  get size(): number {
    return this.free.length;
  }
}

/** The buffers a decoded column owns (its typed views share them): what goes back to a pool, or across a thread. */
export function ownedBuffers(c: FlatColumn): ArrayBuffer[] {
  const owned = [c.index.buffer, c.bytes.buffer, ...(c.span ? [c.span.buffer] : [])] as ArrayBuffer[];
  return owned.filter((b, i) => owned.indexOf(b) === i);
}

/** A pool that keeps nothing: every buffer taken is new, every one given is let go (a decode without a pool). */
const UNPOOLED = new BufferPool(0);

/** `n` int32 of the pool's. */
function ints(pool: ColumnPool, n: number): Int32Array {
  const b = pool.bytes(4 * n);
  return new Int32Array(b.buffer, b.byteOffset, n);
}

/** Growable pairs of int32 (a BYTE_ARRAY value's start and end in the store). */
class Spans {
  values: Int32Array;
  n = 0;
  /** `pairs`: the spans expected (a plain chunk's rows; a dictionary's values are few). */
  constructor(private readonly pool: ColumnPool, pairs: number) {
    this.values = ints(pool, Math.max(1024, 2 * pairs));
  }
  reserve(pairs: number): void {
    if (this.n + 2 * pairs <= this.values.length) return;
    let size = this.values.length * 2;
    while (size < this.n + 2 * pairs) size *= 2;
    const bigger = ints(this.pool, size);
    bigger.set(this.values.subarray(0, this.n));
    this.pool.drop(this.values);
    this.values = bigger;
  }
}

/** A growable byte store, 8-byte aligned (so typed views of it need no copy). */
class ByteStore {
  bytes: Uint8Array;
  pos = 0;
  constructor(initial: number, private readonly pool: ColumnPool) {
    this.bytes = pool.bytes(Math.max(1024, (initial + 7) & ~7));
  }
  reserve(n: number): void {
    if (this.pos + n <= this.bytes.length) return;
    let size = this.bytes.length * 2;
    while (size < this.pos + n) size *= 2;
    const bigger = this.pool.bytes(size);
    bigger.set(this.bytes.subarray(0, this.pos));
    this.pool.drop(this.bytes);
    this.bytes = bigger;
  }
  append(src: Uint8Array, from: number, n: number): void {
    if (from + n > src.length) throw new Error('internal: a Parquet value store appended past the end of its page');
    this.reserve(n);
    this.bytes.set(src.subarray(from, from + n), this.pos);
    this.pos += n;
  }
}

function widthOf(type: FlatType, element: SchemaElement): number {
  switch (type) {
    case 'BOOLEAN':
      return 1;
    case 'INT32':
    case 'FLOAT':
      return 4;
    case 'INT64':
    case 'DOUBLE':
      return 8;
    case 'FIXED_LEN_BYTE_ARRAY':
      return element.type_length!;
    case 'BYTE_ARRAY':
      return 0;
  }
}

/** Thrown on a page this decoder does not read after all (an encoding the footer did not list): the caller uses hyparquet. */
export class NotFlat extends Error {}

/**
 * Decodes a column chunk (`bytes`: the chunk as stored, from its first page) of a top-level
 * field with `rows` rows. `optional`: the field has definition levels (max level 1).
 */
export function decodeFlatColumn(bytes: Uint8Array, chunk: ColumnChunk, element: SchemaElement, rows: number, pool: ColumnPool = UNPOOLED): FlatColumn {
  const pages = flatColumnPages(bytes, chunk, element, rows, pool);
  for (;;) {
    const step = pages.next();
    if (step.done) return step.value;
  }
}

/**
 * `decodeFlatColumn` a page at a time: the generator stops after each page but the last
 * (nothing of a page, in the kernels' memory or elsewhere, is held across a stop), and
 * returns the column. Left unfinished (`return()`), it gives its arrays back to `pool`.
 */
export function* flatColumnPages(bytes: Uint8Array, chunk: ColumnChunk, element: SchemaElement, rows: number, pool: ColumnPool = UNPOOLED, kernels: ParquetKernels | null = ParquetKernels.get()): Generator<void, FlatColumn, void> {
  const meta = chunk.meta_data!;
  const type = meta.type as FlatType;
  const codec: CompressionCodec = meta.codec;
  const width = widthOf(type, element);
  const optional = element.repetition_type === 'OPTIONAL';
  // Every row's index is written below (or the chunk is refused), so a pooled buffer's old contents are never read.
  const index = ints(pool, rows);
  // A plain chunk's values are about its uncompressed size: room made once, not by doubling (a dictionary's are few); a footer claiming far more than its bytes could hold is not believed.
  const plainSize = meta.dictionary_page_offset === undefined && type !== 'BOOLEAN' ? Math.min(Number(meta.total_uncompressed_size), 32 * bytes.length + (1 << 20)) : 0;
  let store: ByteStore | undefined;
  let spans: Spans | undefined;
  /** The arrays back to the pool, when the chunk cannot be read (an error, or a page this decoder does not read). */
  const dropArrays = (): void => {
    pool.drop(index);
    if (store !== undefined) pool.drop(store.bytes);
    if (spans !== undefined) pool.drop(spans.values);
  };
  try {
    store = new ByteStore(plainSize, pool);
    spans = new Spans(pool, type === 'BYTE_ARRAY' && meta.dictionary_page_offset === undefined ? rows : 0);
  } catch (error) {
    dropArrays();
    throw error;
  }
  let values = 0; // values in the store
  let dictionary = -1; // values of the dictionary page (at the store's start), -1 before one
  let row = 0;
  const reader = { view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: 0 };
  const name = meta.path_in_schema.join('.');
  // Snappy pages into the kernels' memory (read there, not copied out); room after each for `ints` indexes.
  const pages = new PageInflater(codec, name, meta.path_in_schema, kernels);
  /** A data page's row count, refused before its page is decompressed (and room made for its indexes) when it passes the row group's. */
  const pageRows = (count: number): number => {
    if (row + count > rows) throw new Error(`a column chunk of ${name} holds more than the row group's ${rows} rows`);
    return count;
  };
  // The definition levels of a page, made when a page has NULLs (a writer marks a page without any by one run, read without them).
  let defLevels: Int32Array | undefined;

  /** Appends `n` PLAIN values from `page` at `at` (see `plainValues`); returns the offset after them. */
  const plain = function* (page: Uint8Array, at: number, n: number): Generator<void, number, void> {
    const end = yield* plainValues({ type, width, name, store: store!, spans: spans! }, page, at, n, pages.inScratch);
    values += n;
    return end;
  };

  let done = false;
  try {
    for (let firstPage = true; row < rows && reader.offset < bytes.length; firstPage = false) {
      pages.unstep();
      if (!firstPage) yield;
      const header = parquetHeader(reader);
      const size = header.compressed_page_size;
      const raw = bytes.subarray(reader.offset, reader.offset + size);
      reader.offset += size;
      if (header.type === 'DICTIONARY_PAGE') {
        const page = pages.decompress(raw, header.uncompressed_page_size, 0);
        if (dictionary >= 0 || values > 0) throw new NotFlat('a dictionary page after data');
        yield* plain(page, 0, header.dictionary_page_header!.num_values);
        dictionary = values;
        continue;
      }
      const data = yield* readDataPage(header, raw, optional, pages, pageRows);
      if (data === undefined) continue; // an index page: nothing of the rows
      const { page, at, count, encoding, levelsAt, levelsLength } = data;

      // Definition levels: a row is present when its level is 1.
      let present = count;
      // Writers mark an optional column without NULLs by one RLE run of level 1: then no level is read.
      const allPresent = optional && isOneRun(page, levelsAt, count);
      if (optional && !allPresent) {
        if (defLevels === undefined || defLevels.length < count) defLevels = new Int32Array(count);
        const levels = defLevels!.subarray(0, count);
        pages.hybrid(page, levelsAt, levelsAt + levelsLength!, 1, levels, 0, count, -1);
        present = sum(levels);
      }

      // The page's values: PLAIN into the store, or dictionary indexes.
      const first = values; // store index of the page's first plain value
      let ids: Int32Array | undefined;
      if (encoding === 'PLAIN') {
        yield* plain(page, at, present);
      } else if (encoding === 'PLAIN_DICTIONARY' || encoding === 'RLE_DICTIONARY') {
        if (dictionary < 0) throw new Error(`a dictionary-encoded page of ${name} without a dictionary`);
        const bitWidth = present > 0 ? page[at]! : 0;
        const direct = !(optional && !allPresent);
        if (bitWidth > MAX_HYBRID_WIDTH) {
          ids = new Int32Array(present);
          readRleBitPackedHybrid({ view: new DataView(page.buffer, page.byteOffset, page.byteLength), offset: at + 1 }, bitWidth, ids, page.length - at - 1);
        } else if (direct) {
          // No NULLs: the indexes are the rows' value indexes, read straight into place, then checked.
          const bad = pages.hybrid(page, at + 1, page.length, bitWidth, index, row, count, dictionary);
          if (bad >= 0) throw new Error(`a dictionary index ${index[row + bad]} past the dictionary's ${dictionary} values in ${name}`);
          row += count;
          continue;
        } else {
          ids = new Int32Array(present);
          pages.hybrid(page, at + 1, page.length, bitWidth, ids, 0, present, -1);
        }
      } else if (encoding === 'RLE' && type === 'BOOLEAN') {
        const bits = new Int32Array(present);
        readRleBitPackedHybrid({ view: new DataView(page.buffer, page.byteOffset, page.byteLength), offset: at }, 1, bits);
        store.reserve(present);
        for (let k = 0; k < present; k++) store.bytes[store.pos + k] = bits[k]!;
        store.pos += present;
        values += present;
      } else throw new NotFlat(`values in ${encoding}`);

      // Rows → value indexes.
      const levels = optional && !allPresent ? defLevels! : undefined;
      if (levels === undefined && ids === undefined) countUp(index, row, count, first);
      else {
        const bad = levels === undefined ? copyIndexes(ids!, index, row, count, dictionary) : indexesWithNulls(levels, ids, first, index, row, count, dictionary);
        if (bad >= 0) throw new Error(`a dictionary index ${bad} past the dictionary's ${dictionary} values in ${name}`);
      }
      row += count;
    }
    if (row !== rows) throw new Error(`the column chunk of ${name} holds ${row} rows, its row group ${rows}`);
    done = true;
  } finally {
    pages.unstep();
    // An error, or the caller's return() at a stop.
    if (!done) dropArrays();
  }
  if (type !== 'BYTE_ARRAY') pool.drop(spans.values);
  return flatColumnOf(type, rows, index, width, store, spans);
}

/** A column chunk's pages decompressed: into the kernels' memory where they can, else by hyparquet's decompressors. */
class PageInflater {
  /** Whether the page last decompressed is in the kernels' scratch (good only until their next call): its values are then read without a stop. */
  inScratch = false;
  // A big snappy page: decompressed a step at a time, the generator stopping between steps; its regions given back when the next page begins, or the chunk ends.
  private stepped: SnappySteps | undefined;

  constructor(
    private readonly codec: CompressionCodec,
    private readonly name: string,
    private readonly path: string[],
    private readonly kernels: ParquetKernels | null,
  ) {}

  decompress(raw: Uint8Array, size: number, ints: number): Uint8Array {
    this.inScratch = false;
    if (this.kernels !== null && this.codec === 'SNAPPY') {
      try {
        const page = this.kernels.snappy(raw, size, ints, this.name);
        this.inScratch = true;
        return page;
      } catch (error) {
        if (!(error instanceof KernelMemoryFull)) throw error; // no room for the page: hyparquet's decompressor
      }
    }
    return decompressPage(raw, size, this.codec, compressors);
  }

  unstep(): void {
    this.stepped?.release();
    this.stepped = undefined;
  }

  *inflate(raw: Uint8Array, size: number, ints: number): Generator<void, Uint8Array, void> {
    if (this.kernels !== null && this.codec === 'SNAPPY' && size >= STEPPED_PAGE_BYTES) {
      try {
        this.stepped = this.kernels.snappySteps(raw, size, this.name);
      } catch (error) {
        if (!(error instanceof KernelMemoryFull)) throw error; // no room for its regions: in one go
      }
      const stepped = this.stepped;
      if (stepped !== undefined) {
        yield; // after the first step of the compressed page's copy into the memory (SNAPPY_COPY_STEP_BYTES of l_comment's 1.8 MB)
        while (!stepped.step(SNAPPY_STEP_BYTES)) yield;
        this.inScratch = false; // in regions of its own, kept until the next page
        return stepped.page();
      }
    }
    return this.decompress(raw, size, ints);
  }

  /** `readHybrid` into `out[to…]` by the kernels where they can, else in JavaScript; returns the first k at or past `limit` (-1: none checked), or -1. */
  hybrid(page: Uint8Array, at: number, end: number, width: number, out: Int32Array, to: number, count: number, limit: number): number {
    let bad: number | undefined;
    try {
      bad = this.kernels?.hybrid(page, at, end, width, out, to, count, limit, this.name);
    } catch (error) {
      if (!(error instanceof KernelMemoryFull)) throw error; // no room to copy the page in: the JavaScript reader
    }
    if (bad !== undefined) return bad;
    readHybrid(page, at, end, width, out, to, count, this.path);
    if (limit < 0) return -1;
    const k = firstAtOrPast(out, to, to + count, limit);
    return k < 0 ? -1 : k - to;
  }
}

/** A data page (v1 or v2) decompressed, with where its levels and values are. */
interface DataPage {
  readonly page: Uint8Array;
  /** Where its values start. */
  readonly at: number;
  /** Levels (= rows, no repetition) in the page. */
  readonly count: number;
  readonly encoding: string;
  readonly levelsAt: number;
  readonly levelsLength: number | undefined;
}

/** A data page's bytes (v2: its levels put before its values, as in a v1 page); undefined for a page that holds no rows (an index page). */
function* readDataPage(header: ReturnType<typeof parquetHeader>, raw: Uint8Array, optional: boolean, pages: PageInflater, pageRows: (count: number) => number): Generator<void, DataPage | undefined, void> {
  let page: Uint8Array;
  let at = 0;
  let count: number; // levels (= rows, no repetition) in the page
  let encoding: string;
  let levelsAt = 0;
  let levelsLength: number | undefined;
  if (header.type === 'DATA_PAGE') {
    const h = header.data_page_header!;
    count = pageRows(h.num_values);
    encoding = h.encoding;
    page = yield* pages.inflate(raw, header.uncompressed_page_size, count);
    if (optional) {
      if (h.definition_level_encoding !== 'RLE') throw new NotFlat(`definition levels in ${h.definition_level_encoding}`);
      levelsLength = new DataView(page.buffer, page.byteOffset, page.byteLength).getUint32(0, true);
      levelsAt = 4;
      at = 4 + levelsLength;
    }
  } else if (header.type === 'DATA_PAGE_V2') {
    const h = header.data_page_header_v2!;
    count = pageRows(h.num_values);
    encoding = h.encoding;
    if (h.repetition_levels_byte_length !== 0) throw new NotFlat('repetition levels');
    const levels = h.definition_levels_byte_length;
    const body = raw.subarray(levels);
    const bodySize = header.uncompressed_page_size - levels;
    const values = h.is_compressed === false || bodySize === 0 ? body : yield* pages.inflate(body, bodySize, count);
    if (optional) {
      // The levels are not compressed; put them before the values as in a v1 page.
      page = new Uint8Array(levels + values.length);
      page.set(raw.subarray(0, levels));
      page.set(values, levels);
      levelsLength = levels;
      at = levels;
    } else page = values;
  } else return undefined; // an index page: nothing of the rows
  return { page, at, count, encoding, levelsAt, levelsLength };
}

/** Where PLAIN values go. */
interface PlainTarget {
  readonly type: FlatType;
  readonly width: number;
  readonly name: string;
  readonly store: ByteStore;
  readonly spans: Spans;
}

/**
 * Appends `n` PLAIN values from `page` at `at`; returns the offset after them. Stops after
 * each PLAIN_STEP_BYTES of values (a 3.7 MB page of l_comment was one 1–2 ms step), unless
 * `page` is in the kernels' scratch (`inScratch`), which another decode between stops would overwrite.
 */
function* plainValues(into: PlainTarget, page: Uint8Array, at: number, n: number, inScratch: boolean): Generator<void, number, void> {
  const { type, width, name, store, spans } = into;
  if (type === 'BYTE_ARRAY') {
    // The page's values as they are (each after its 4-byte length), copied a step at a time; a value's span is found from the lengths.
    spans.reserve(n);
    // Values a step: PLAIN_STEP_BYTES at the page's average value size.
    const step = inScratch ? n : Math.max(1, Math.floor((PLAIN_STEP_BYTES * n) / Math.max(1, page.length - at)));
    for (let done = 0; done < n; ) {
      if (done > 0) yield;
      const k = Math.min(step, n - done);
      const end = plainSpans(page, at, k, store.pos - at, spans.values, spans.n);
      spans.n += 2 * k;
      if (end > page.length) throw new Error(`a PLAIN page of ${name} ends inside a value`);
      store.append(page, at, end - at);
      at = end;
      done += k;
    }
  } else {
    // A page shorter than its values (a truncated or corrupt file) is an error: the bytes past it would be a reused buffer's old ones.
    const size = type === 'BOOLEAN' ? (n + 7) >> 3 : n * width;
    if (at + size > page.length) throw new Error(`a PLAIN page of ${name} holds ${page.length - at} bytes of values, ${n} values need ${size}`);
    if (type === 'BOOLEAN') {
      store.reserve(n);
      unpackBits(page, at, n, store.bytes, store.pos);
      store.pos += n;
    } else {
      const step = inScratch ? size : PLAIN_STEP_BYTES - (PLAIN_STEP_BYTES % width);
      for (let done = 0; done < size; done += step) {
        if (done > 0) yield;
        store.append(page, at + done, Math.min(step, size - done));
      }
    }
    at += size;
  }
  return at;
}

/** The column, its arrays as the pages filled them. */
function flatColumnOf(type: FlatType, rows: number, index: Int32Array, width: number, store: ByteStore, spans: Spans): FlatColumn {
  const { buffer, byteOffset } = store.bytes;
  const numeric = width === 4 || width === 8;
  return {
    type,
    rows,
    index,
    width,
    bytes: store.bytes.subarray(0, store.pos),
    span: type === 'BYTE_ARRAY' ? spans.values.subarray(0, spans.n) : undefined,
    i32: numeric ? new Int32Array(buffer, byteOffset, store.pos >> 2) : EMPTY_I32,
    f32: width === 4 ? new Float32Array(buffer, byteOffset, store.pos >> 2) : EMPTY_F32,
    f64: width === 8 ? new Float64Array(buffer, byteOffset, store.pos >> 3) : EMPTY_F64,
  };
}

/*
 * The per-value loops, each a small function of its own: the page loop above takes new
 * branches as it meets new column types and pages, and each costs it its optimized code;
 * these stay optimized (a cold load spent most of its decoding in them, deoptimized).
 */

/** The spans of `n` PLAIN BYTE_ARRAY values at `page[at…]` (each after its 4-byte length), offset by `base`, into `spans[to…]`; returns the offset after them. */
function plainSpans(page: Uint8Array, at: number, n: number, base: number, spans: Int32Array, to: number): number {
  let end = at;
  for (let k = 0; k < n; k++) {
    const len = page[end]! | (page[end + 1]! << 8) | (page[end + 2]! << 16) | (page[end + 3]! << 24);
    spans[to + 2 * k] = base + end + 4;
    spans[to + 2 * k + 1] = base + end + 4 + len;
    end += 4 + len;
  }
  return end;
}

/** `n` PLAIN booleans (bits, least significant first) at `page[at…]` as bytes 0/1 into `out[to…]`. */
function unpackBits(page: Uint8Array, at: number, n: number, out: Uint8Array, to: number): void {
  for (let k = 0; k < n; k++) out[to + k] = (page[at + (k >> 3)]! >> (k & 7)) & 1;
}

/** The first k in [from, to) with `a[k] >= limit`, or -1. */
function firstAtOrPast(a: Int32Array, from: number, to: number, limit: number): number {
  for (let k = from; k < to; k++) if (a[k]! >= limit) return k;
  return -1;
}

function sum(a: Int32Array): number {
  let n = 0;
  for (let k = 0; k < a.length; k++) n += a[k]!;
  return n;
}

/** `index[row + k] = first + k` for k < count (a plain page without NULLs). */
function countUp(index: Int32Array, row: number, count: number, first: number): void {
  for (let k = 0; k < count; k++) index[row + k] = first + k;
}

/** Dictionary indexes of a page without NULLs into `index[row…]`; returns an index past the dictionary, or -1. */
function copyIndexes(ids: Int32Array, index: Int32Array, row: number, count: number, dictionary: number): number {
  for (let k = 0; k < count; k++) {
    const i = ids[k]!;
    if (i >= dictionary) return i;
    index[row + k] = i;
  }
  return -1;
}

/** A page with NULLs (level 0): -1, else its next value (`ids`' next, or the next plain value from `first`); returns an index past the dictionary, or -1. */
function indexesWithNulls(levels: Int32Array, ids: Int32Array | undefined, first: number, index: Int32Array, row: number, count: number, dictionary: number): number {
  let v = 0;
  for (let k = 0; k < count; k++) {
    if (levels[k] === 0) index[row + k] = -1;
    else {
      const i = ids !== undefined ? ids[v]! : first + v;
      if (ids !== undefined && i >= dictionary) return i;
      index[row + k] = i;
      v++;
    }
  }
  return -1;
}

/** The widest values `readHybrid` reads (its 32-bit accumulator); wider ones (dictionaries of 2^24 values and more) are read by hyparquet's reader. */
const MAX_HYBRID_WIDTH = 24;

/** A snappy page of this many bytes or more is decompressed a step at a time (`flatColumnPages` stops between steps): DuckDB writes a row group's l_comment as one page of ~3.7 MB. */
export const STEPPED_PAGE_BYTES = 128 * 1024;
/** Bytes of such a page a step decompresses. */
export const SNAPPY_STEP_BYTES = 64 * 1024;
/** Bytes of PLAIN values a step copies into the column (`plain`), with the spans of its strings: a 3.7 MB page of l_comment in one step took 1–2 ms. */
export const PLAIN_STEP_BYTES = 256 * 1024;

/**
 * Reads `count` values of the RLE/bit-packed hybrid encoding (bit width 0–24) from
 * `page[at, end)` into `out[to…]`, as hyparquet's `readRleBitPackedHybrid` does, with a
 * 32-bit accumulator instead of its byte-by-byte state machine; the padding of a last
 * bit-packed group is skipped. A run that reaches past `end` is an error. Returns the
 * offset after the runs read.
 */
export function readHybrid(page: Uint8Array, at: number, end: number, width: number, out: Int32Array, to: number, count: number, path: readonly string[] = []): number {
  const mask = width === 0 ? 0 : width === 32 ? -1 : (1 << width) - 1;
  const rleBytes = (width + 7) >> 3;
  let p = at;
  let n = 0;
  while (n < count) {
    let header = 0;
    let shift = 0;
    for (;;) {
      if (p >= end || shift > 28) throw new Error(`an RLE/bit-packed run of ${path.join('.')} ends past its page`);
      const b = page[p++]!;
      header |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) break;
      shift += 7;
    }
    header >>>= 0;
    if (header & 1) {
      const groups = header >>> 1;
      const bytes = groups * width;
      if (p + bytes > end) throw new Error(`an RLE/bit-packed run of ${path.join('.')} ends past its page`);
      const take = Math.min(groups * 8, count - n);
      unpackValues(page, p, width, mask, out, to + n, take);
      n += take;
      p += bytes;
    } else {
      const run = header >>> 1;
      if (p + rleBytes > end) throw new Error(`an RLE/bit-packed run of ${path.join('.')} ends past its page`);
      let v = 0;
      for (let k = 0; k < rleBytes; k++) v |= page[p + k]! << (8 * k);
      p += rleBytes;
      const take = Math.min(run, count - n);
      if (take < 16) for (let k = 0; k < take; k++) out[to + n + k] = v;
      else out.fill(v, to + n, to + n + take);
      n += take;
    }
  }
  return p;
}

/** `take` bit-packed values of `width` bits (least significant first) from `page[q…]` into `out[to…]`. */
function unpackValues(page: Uint8Array, q: number, width: number, mask: number, out: Int32Array, to: number, take: number): void {
  let acc = 0;
  let bits = 0;
  for (let k = 0; k < take; k++) {
    while (bits < width) {
      acc |= page[q++]! << bits;
      bits += 8;
    }
    out[to + k] = acc & mask;
    acc >>>= width;
    bits -= width;
  }
}

/** Whether the RLE/bit-packed hybrid of 1-bit levels at `at` starts with one RLE run of 1 covering `count` levels. */
function isOneRun(page: Uint8Array, at: number, count: number): boolean {
  let header = 0;
  let shift = 0;
  let p = at;
  for (;;) {
    const b = page[p++];
    if (b === undefined || shift > 28) return false;
    header |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) break;
    shift += 7;
  }
  return (header & 1) === 0 && header >>> 1 >= count && page[p] === 1;
}

const EMPTY_I32 = new Int32Array(0);
const EMPTY_F32 = new Float32Array(0);
const EMPTY_F64 = new Float64Array(0);

/** INT64 value i as a number when it is a safe integer, else NaN (the caller takes the bigint). */
export function int64Number(c: FlatColumn, i: number): number {
  const lo = c.i32[2 * i]! >>> 0;
  const hi = c.i32[2 * i + 1]!;
  // |v| < 2^53 exactly when hi is in [-2^21, 2^21).
  return hi >= -2097152 && hi < 2097152 ? hi * 4294967296 + lo : NaN;
}

export function int64BigInt(c: FlatColumn, i: number): bigint {
  return (BigInt(c.i32[2 * i + 1]!) << 32n) | BigInt(c.i32[2 * i]! >>> 0);
}

/** Value i as hyparquet hands the physical value (annotations off): number, bigint, boolean or bytes. */
export function rawValueOf(c: FlatColumn, i: number): RawValue {
  switch (c.type) {
    case 'BOOLEAN':
      return c.bytes[i] === 1;
    case 'INT32':
      return c.i32[i]!;
    case 'INT64':
      return int64BigInt(c, i);
    case 'FLOAT':
      return c.f32[i]!;
    case 'DOUBLE':
      return c.f64[i]!;
    case 'BYTE_ARRAY':
      return c.bytes.subarray(c.span![2 * i]!, c.span![2 * i + 1]!);
    case 'FIXED_LEN_BYTE_ARRAY':
      return c.bytes.subarray(i * c.width, (i + 1) * c.width);
  }
}

/** Decodes a row group's flat column chunks for `fields`: undefined for a field the flat decoder does not read (see `decodeSlice`). */
export type FlatDecode = (rowGroup: number, fields: readonly string[]) => Promise<(FlatColumn | undefined)[]>;
