/**
 * The flat decoder's kernels in WebAssembly (src/input/parquet/wasm/parquet-kernels.c):
 * snappy pages decompressed into the module's memory and read there, dictionary indexes
 * unpacked and checked there, and binary tuples written from columns there
 * (wasm-tuples.ts). A reader decoding on the load's loop decodes its columns into the
 * memory (`KernelPool`), so the indexes are unpacked straight into them and the tuples read
 * them in place.
 *
 * One instance per thread, made on first use (the main thread's loop and each decoding
 * thread decode one column chunk at a time, synchronously). The memory is shared, so that
 * growing it detaches no view of it. Its regions (`alloc`, `release`) are the columns'
 * arrays, the plans' copies, a scratch for pages and an output for tuples. A page `snappy`
 * returns lives in the scratch and is good until the next call of these kernels: the
 * decoder reads it before it asks for anything else. Where the memory cannot grow
 * (`KernelMemoryFull`) or WebAssembly cannot run (`node --jitless`), and with
 * `PGSURGE_PARQUET_WASM=0`, hyparquet's decompressors, plain arrays and the JavaScript do the work.
 */
import { PARQUET_KERNELS_WASM_BASE64 } from './wasm/parquet-kernels-wasm.js';

interface Exports {
  snappy(input: number, inputLength: number, output: number, outputLength: number): number;
  snappy_step(input: number, inputLength: number, inputAt: number, output: number, outputLength: number, outputAt: number, stop: number): number;
  r_op: WebAssembly.Global;
  hybrid(page: number, length: number, width: number, out: number, count: number, limit: number): number;
  tuples(cols: number, ncols: number, from: number, to: number, out: number, limit: number): number;
  r_bad: WebAssembly.Global;
  r_row: WebAssembly.Global;
  r_bytes: WebAssembly.Global;
  r_column: WebAssembly.Global;
  __heap_base: WebAssembly.Global;
}

/** Why `tuples` stopped (parquet-kernels.c). */
const TUPLES_END = 0;
const TUPLES_FULL = 1;
export const TUPLES_OWN = 2;
export const TUPLES_UNFIT = 3;

/** A region of the kernels' memory: `at`, `size` bytes (SLACK after them included). */
export interface Region {
  readonly at: number;
  readonly size: number;
}

const WASM_PAGE = 65536;
/** The memory's most pages (4 GB, wasm32's all), as the module declares; only what is used is made. */
const MAX_PAGES = 65536;
/** Bytes after every region the kernels may read or write past a value's end (parquet-kernels.c). */
const SLACK = 16;

const SNAPPY_ERRORS: Record<number, string> = {
  [-1]: 'its length preamble is not a varint',
  [-2]: 'its length preamble is not the page header\'s size',
  [-3]: 'an element reaches past its end',
  [-4]: 'an element reaches past the page header\'s size',
  [-5]: 'a copy reaches before its start',
  [-6]: 'it ends before the page header\'s size',
};

/** Snappy's densest element (a 3-byte copy of 64) expands ~21 times: a page header claiming more is corrupt, refused before the memory grows for it. */
function refuseOversized(raw: Uint8Array, size: number, what: string): void {
  if (size > 22 * raw.length + 16) throw new Error(`a snappy page of ${what} does not decompress: its header says ${size} bytes from ${raw.length} compressed`);
}

/** The error of a snappy kernel's return `r` (negative) for a page of `what`. */
function snappyError(what: string, r: number): Error {
  return new Error(`a snappy page of ${what} does not decompress: ${SNAPPY_ERRORS[r] ?? `error ${r}`}`);
}

function align8(n: number): number {
  return (n + 7) & ~7;
}

function align16(n: number): number {
  return (n + 15) & ~15;
}

/** Bytes a region of `size` takes: with SLACK after it, 16-byte aligned (`alloc`; a plan's copies laid out in one region, wasm-tuples.ts). */
export function regionBytes(size: number): number {
  return align16(size + SLACK);
}

export class ParquetKernels {
  private bytes: Uint8Array;
  private words: Int32Array;
  private readonly badAt: number;
  private readonly opAt: number;
  private readonly resultsAt: readonly [number, number, number];
  /** Regions free below `top` (the memory's first byte no region holds), by address. */
  private readonly free: Region[] = [];
  private top: number;
  /** The scratch (a page in and out, its indexes) and the tuples' output: regions kept and grown. */
  private scratch: Region = { at: 0, size: 0 };
  private output: Region = { at: 0, size: 0 };

  private constructor(
    private readonly x: Exports,
    private readonly memory: WebAssembly.Memory,
  ) {
    this.top = align16(x.__heap_base.value as number);
    this.badAt = (x.r_bad.value as number) >> 2;
    this.opAt = (x.r_op.value as number) >> 2;
    this.resultsAt = [(x.r_row.value as number) >> 2, (x.r_bytes.value as number) >> 2, (x.r_column.value as number) >> 2];
    this.bytes = new Uint8Array(memory.buffer);
    this.words = new Int32Array(memory.buffer);
    this.buffers.add(memory.buffer);
  }

  /** The memory's buffers, one per size it has had (growing a shared memory gives a new one; the old ones' views stay good). */
  private readonly buffers = new Set<ArrayBufferLike>();

  /** Whether `view` is of this memory (its offset then an address the kernels read). */
  owns(view: ArrayBufferView): boolean {
    return this.buffers.has(view.buffer);
  }

  /** This thread's kernels; null where WebAssembly cannot run. (A load without them: `ParquetSettings.wasm: false`.) */
  static get(): ParquetKernels | null {
    if (made === undefined) {
      try {
        made = ParquetKernels.make(MAX_PAGES);
      } catch {
        made = null;
      }
    }
    return made;
  }

  /** New kernels whose memory grows to `maxPages` of 64 KB at most (tests make a small one to fill). */
  static make(maxPages: number): ParquetKernels {
    // Shared, so that growing it detaches no view: the decoded columns' arrays live in it.
    const memory = new WebAssembly.Memory({ initial: 16, maximum: maxPages, shared: true });
    const module = new WebAssembly.Module(Buffer.from(PARQUET_KERNELS_WASM_BASE64, 'base64'));
    return new ParquetKernels(new WebAssembly.Instance(module, { env: { memory } }).exports as unknown as Exports, memory);
  }

  /**
   * A region of at least `size` bytes and SLACK (first fit among the free ones, else at the
   * top, the memory grown; `KernelMemoryFull` when it cannot). Growing the (shared) memory
   * leaves every view of it good, the pages `snappy` returned among them.
   */
  alloc(size: number): Region {
    const want = regionBytes(size);
    for (let k = 0; k < this.free.length; k++) {
      const f = this.free[k]!;
      if (f.size < want) continue;
      if (f.size === want) this.free.splice(k, 1);
      else this.free[k] = { at: f.at + want, size: f.size - want };
      return { at: f.at, size: want };
    }
    const at = this.top;
    this.room(at + want);
    this.top = at + want;
    return { at, size: want };
  }

  /** A region given back: merged with its free neighbours, or with the top. */
  release(region: Region): void {
    if (region.size === 0) return;
    let k = 0;
    while (k < this.free.length && this.free[k]!.at < region.at) k++;
    let { at, size } = region;
    const before = this.free[k - 1];
    const next = this.free[k];
    // A region given back twice, or one this allocator did not make, would let two owners share memory.
    if ((before !== undefined && before.at + before.size > at) || (next !== undefined && at + size > next.at) || at + size > this.top) {
      throw new Error(`internal: a region of the Parquet kernels' memory (${at}, ${size} bytes) given back twice or never taken`);
    }
    if (before !== undefined && before.at + before.size === at) {
      at = before.at;
      size += before.size;
      this.free.splice(--k, 1);
    }
    const after = this.free[k];
    if (after !== undefined && at + size === after.at) {
      size += after.size;
      this.free.splice(k, 1);
    }
    if (at + size === this.top) this.top = at;
    else this.free.splice(k, 0, { at, size });
  }

  /** Bytes of the memory, for tests and the tuples' writer (a view made again when the memory grows). */
  get memoryBytes(): Uint8Array {
    return this.bytes;
  }

  /** Words of the memory (`memoryBytes` as int32). */
  get memoryWords(): Int32Array {
    return this.words;
  }

  /** Regions held (for tests): bytes below the top, less the free ones'. */
  get held(): number {
    return this.top - align16(this.x.__heap_base.value as number) - this.free.reduce((n, f) => n + f.size, 0) - this.scratch.size - this.output.size;
  }

  /** `scratch` or `output` grown to `size` bytes at least (its old contents not kept); the old region is given back only once the new one is had. */
  private sized(which: 'scratch' | 'output', size: number): number {
    const r = this[which];
    if (r.size >= size + SLACK) return r.at;
    const bigger = this.alloc(Math.max(size, 2 * r.size));
    this.release(r);
    this[which] = bigger;
    return bigger.at;
  }

  /**
   * Tuples of rows [from, to) of the columns described at `cols` (parquet-kernels.c) while
   * fewer than `limit` bytes are written at a row's start, each row `room` bytes at most:
   * copied to `out` (from `out.pos`). Returns why it stopped, and the row it stopped at (or
   * before), and for TUPLES_OWN and TUPLES_UNFIT the column.
   */
  tuples(cols: number, ncols: number, from: number, to: number, limit: number, room: number, out: { reserve(n: number): void; bytes: Uint8Array; pos: number }): { stop: number; row: number; column: number } {
    const at = this.sized('output', limit + room);
    const stop = this.x.tuples(cols, ncols, from, to, at, limit);
    const [rowAt, bytesAt, columnAt] = this.resultsAt;
    const n = this.words[bytesAt]!;
    out.reserve(n);
    out.bytes.set(this.bytes.subarray(at, at + n), out.pos);
    out.pos += n;
    return { stop, row: this.words[rowAt]!, column: this.words[columnAt]! };
  }

  /** Memory up to `end` (a byte address); the views made again when it grows. */
  private room(end: number): void {
    const have = this.memory.buffer.byteLength;
    if (end <= have) return;
    try {
      this.memory.grow(Math.ceil((end - have) / WASM_PAGE));
    } catch (error) {
      throw new KernelMemoryFull(`the Parquet kernels' memory cannot grow to ${end} bytes: ${(error as Error).message}`);
    }
    this.bytes = new Uint8Array(this.memory.buffer);
    this.words = new Int32Array(this.memory.buffer);
    this.buffers.add(this.memory.buffer);
  }

  /**
   * `raw` (a snappy block) decompressed into `size` bytes of the memory, with room after it
   * for `ints` dictionary indexes (`hybrid`'s output for this page): a view, valid until the
   * next call. A block that does not decompress to exactly `size` bytes is an error naming `what`.
   */
  snappy(raw: Uint8Array, size: number, ints: number, what: string): Uint8Array {
    refuseOversized(raw, size, what);
    const need = align8(raw.length + SLACK) + align8(size + SLACK) + 4 * ints + SLACK;
    const input = this.sized('scratch', need);
    const output = align8(input + raw.length + SLACK);
    this.bytes.set(raw, input);
    const r = this.x.snappy(input, raw.length, output, size);
    if (r !== 0) throw snappyError(what, r);
    return this.bytes.subarray(output, output + size);
  }

  /**
   * `snappy` a step at a time, for a big page (a 3.7 MB l_comment page takes ~3.7 ms, twice
   * what a Unix socket's bytes keep a backend busy): the input copied into a region of its
   * own and the page decompressed into another, so other decodes may use the kernels
   * between steps. The regions are given back by `SnappySteps.release`. `KernelMemoryFull`
   * when there is no room for them.
   */
  snappySteps(raw: Uint8Array, size: number, what: string): SnappySteps {
    refuseOversized(raw, size, what);
    const input = this.alloc(raw.length);
    let output: Region;
    try {
      output = this.alloc(size);
    } catch (error) {
      this.release(input);
      throw error;
    }
    return new SnappySteps(this, raw, input, output, size, what);
  }

  /** Copies `raw[from, to)` into the memory at `region`'s offset `from` (a step of `SnappySteps`' copy). */
  copyInto(region: Region, raw: Uint8Array, from: number, to: number): void {
    this.bytes.set(raw.subarray(from, to), region.at + from);
  }

  /** One step of `SnappySteps` (parquet-kernels.c's snappy_step): the input's offset after it and the output's. */
  snappyStep(input: Region, inputLength: number, inputAt: number, output: Region, outputLength: number, outputAt: number, stop: number, what: string): { inputAt: number; outputAt: number } {
    const r = this.x.snappy_step(input.at, inputLength, inputAt, output.at, outputLength, outputAt, stop);
    if (r < 0) throw snappyError(what, r);
    return { inputAt: r, outputAt: this.words[this.opAt]! };
  }

  /**
   * `count` values of the RLE/bit-packed hybrid (`width` 0–24 bits) from `page[at, end)` into
   * `out[to…]`, as `readHybrid`; returns the first k whose value is at or past `limit` (a
   * dictionary's size; -1: none checked), or -1. A run past `end` is an error naming `what`.
   * Undefined (the caller reads it in JavaScript) when a page of the memory leaves no room after it.
   */
  hybrid(page: Uint8Array, at: number, end: number, width: number, out: Int32Array, to: number, count: number, limit: number, what: string): number | undefined {
    let p: number;
    let ints: number;
    if (this.owns(page) && page.byteOffset >= this.scratch.at && page.byteOffset + page.length <= this.scratch.at + this.scratch.size) {
      // Decompressed into the scratch (`snappy`): the indexes go after the page (its room made there), the memory not grown.
      p = page.byteOffset + at;
      ints = align8(page.byteOffset + page.length + SLACK);
      if (ints + 4 * count + SLACK > this.scratch.at + this.scratch.size) return undefined;
    } else {
      p = this.sized('scratch', align8(end - at + SLACK) + 4 * count + SLACK);
      ints = align8(p + (end - at) + SLACK);
      this.bytes.set(page.subarray(at, end), p);
    }
    // Indexes into `out` itself when it is of the memory (a decoded column's), else after the page and copied.
    const direct = this.owns(out);
    const r = this.x.hybrid(p, end - at, width, direct ? out.byteOffset + 4 * to : ints, count, limit);
    if (r < 0) throw new Error(`an RLE/bit-packed run of ${what} ends past its page`);
    if (!direct) out.set(this.words.subarray(ints >> 2, (ints >> 2) + count), to);
    return this.words[this.badAt]!;
  }
}

/** Bytes of a stepped snappy page's compressed form copied into the memory a step (`SnappySteps`). */
export const SNAPPY_COPY_STEP_BYTES = 256 * 1024;

/** A snappy page decompressed a step at a time (`ParquetKernels.snappySteps`). */
export class SnappySteps {
  private inputAt = 0;
  private outputAt = 0;
  private done = false;
  private released = false;
  /** Bytes of `raw` copied into `input`. */
  private copied = 0;
  private readonly inputLength: number;

  /** `raw`: the compressed page, read until its copy into `input` is done (the first step of it made here), so left alone until then. */
  constructor(
    private readonly kernels: ParquetKernels,
    private readonly raw: Uint8Array,
    private readonly input: Region,
    private readonly output: Region,
    private readonly size: number,
    private readonly what: string,
  ) {
    this.inputLength = raw.length;
    this.copyStep();
  }

  /**
   * The compressed page's next SNAPPY_COPY_STEP_BYTES into the memory: a step at a time too,
   * as l_comment's 1.8 MB in one go was a block of ~0.85 ms.
   */
  private copyStep(): void {
    const to = Math.min(this.inputLength, this.copied + SNAPPY_COPY_STEP_BYTES);
    this.kernels.copyInto(this.input, this.raw, this.copied, to);
    this.copied = to;
  }

  /**
   * One step: the compressed page's next SNAPPY_COPY_STEP_BYTES into the memory while it is
   * not all there, then about `bytes` more of the page decompressed; true once the page is whole.
   */
  step(bytes: number): boolean {
    if (this.released) throw new Error(`internal: a snappy page of ${this.what} stepped after its release`);
    if (this.done) return true;
    if (this.copied < this.inputLength) {
      this.copyStep();
      return false;
    }
    const next = this.kernels.snappyStep(this.input, this.inputLength, this.inputAt, this.output, this.size, this.outputAt, this.outputAt + bytes, this.what);
    this.inputAt = next.inputAt;
    this.outputAt = next.outputAt;
    this.done = this.inputAt === this.inputLength;
    return this.done;
  }

  /** The whole page (after the last step): a view of the kernels' memory, good until `release`. */
  page(): Uint8Array {
    if (this.released || !this.done) throw new Error(`internal: a snappy page of ${this.what} read before it was whole`);
    return this.kernels.memoryBytes.subarray(this.output.at, this.output.at + this.size);
  }

  /** The page's regions given back (again: nothing). */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.kernels.release(this.input);
    this.kernels.release(this.output);
  }
}

/** The kernels' memory cannot grow (its 4 GB, or an address-space limit): the callers fall back to JavaScript and plain arrays. */
export class KernelMemoryFull extends Error {}

/** This thread's kernels, once made (null: they cannot be). */
let made: ParquetKernels | null | undefined;

/**
 * Where a decode's arrays come from (`bytes`: `size` bytes, 8-byte aligned) and go back to
 * (`drop`: an array from `bytes`, or a view of it from its start, that nothing reads any more).
 */
export interface ColumnPool {
  bytes(size: number): Uint8Array;
  drop(view: ArrayBufferView): void;
}

/**
 * Decoded columns' arrays in the kernels' memory (a reader decoding on this thread): the
 * kernels then unpack dictionary indexes straight into them and write tuples from them with
 * no copy. Each array is a region, given back when its column is dropped.
 */
export class KernelPool implements ColumnPool {
  private readonly regions = new Map<number, Region>();

  constructor(private readonly kernels: ParquetKernels) {}

  /** A region; a plain array when the memory cannot grow (the kernels then copy it, or leave the work to JavaScript). */
  bytes(size: number): Uint8Array {
    let r: Region;
    try {
      r = this.kernels.alloc(size);
    } catch (error) {
      if (error instanceof KernelMemoryFull) return new Uint8Array(size);
      throw error;
    }
    this.regions.set(r.at, r);
    return new Uint8Array(this.kernels.memoryBytes.buffer, r.at, size);
  }

  drop(view: ArrayBufferView): void {
    if (!this.kernels.owns(view)) return; // a plain array (the memory was full): the collector's
    const r = this.regions.get(view.byteOffset);
    if (r === undefined) throw new Error('internal: an array of the Parquet kernels\' memory given back twice, or to a pool it is not from');
    this.regions.delete(view.byteOffset);
    this.kernels.release(r);
  }

  /** Arrays taken and not given back, for tests. */
  get size(): number {
    return this.regions.size;
  }
}
