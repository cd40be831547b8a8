/**
 * The flat decoder's page kernels in WebAssembly (src/source/parquet/wasm/page-kernels.c):
 * snappy pages decompressed into the module's memory and read there, and dictionary
 * indexes unpacked and checked there. On SF 1 lineitem (-w2, decoding on the loop) they
 * take the place of hysnappy's copy in and fresh copy out of every page, and of the
 * JavaScript hybrid reader and its check.
 *
 * One instance per thread, made on first use (the main thread's loop and each decoding
 * thread decode one column chunk at a time, synchronously). A page `snappy` returns is a
 * view of the memory, valid until the next call: the decoder reads it before it asks for the
 * next page. The memory only grows while no page of it is being read (a `snappy` call, or a
 * `hybrid` on a page from elsewhere), so no view the decoder holds is ever detached.
 * `PGSURGE_PARQUET_WASM=0` turns the kernels off (hyparquet's decompressors and the
 * JavaScript reader do the work, as where WebAssembly cannot run: `node --jitless`).
 */
import { PAGE_KERNELS_WASM_BASE64 } from './wasm/page-kernels-wasm.js';

interface Exports {
  snappy(input: number, inputLength: number, output: number, outputLength: number): number;
  hybrid(page: number, length: number, width: number, out: number, count: number, limit: number): number;
  r_bad: WebAssembly.Global;
  __heap_base: WebAssembly.Global;
}

const WASM_PAGE = 65536;
/** Bytes after every region the kernels may read or write past a value's end (page-kernels.c). */
const SLACK = 16;

const SNAPPY_ERRORS: Record<number, string> = {
  [-1]: 'its length preamble is not a varint',
  [-2]: 'its length preamble is not the page header\'s size',
  [-3]: 'an element reaches past its end',
  [-4]: 'an element reaches past the page header\'s size',
  [-5]: 'a copy reaches before its start',
  [-6]: 'it ends before the page header\'s size',
};

function align8(n: number): number {
  return (n + 7) & ~7;
}

export class PageKernels {
  private bytes: Uint8Array;
  private words: Int32Array;
  private readonly base: number;
  private readonly badAt: number;

  private constructor(
    private readonly x: Exports,
    private readonly memory: WebAssembly.Memory,
  ) {
    this.base = align8(x.__heap_base.value as number);
    this.badAt = (x.r_bad.value as number) >> 2;
    this.bytes = new Uint8Array(memory.buffer);
    this.words = new Int32Array(memory.buffer);
  }

  /** This thread's kernels; null where WebAssembly cannot run, or `PGSURGE_PARQUET_WASM=0`. */
  static get(env: NodeJS.ProcessEnv = process.env): PageKernels | null {
    if (env.PGSURGE_PARQUET_WASM === '0') return null;
    if (made === undefined) {
      try {
        const memory = new WebAssembly.Memory({ initial: 16 });
        const module = new WebAssembly.Module(Buffer.from(PAGE_KERNELS_WASM_BASE64, 'base64'));
        made = new PageKernels(new WebAssembly.Instance(module, { env: { memory } }).exports as unknown as Exports, memory);
      } catch {
        made = null;
      }
    }
    return made;
  }

  /** Memory up to `end` (a byte address); the views made again when it grows. */
  private room(end: number): void {
    const have = this.memory.buffer.byteLength;
    if (end <= have) return;
    this.memory.grow(Math.ceil((end - have) / WASM_PAGE));
    this.bytes = new Uint8Array(this.memory.buffer);
    this.words = new Int32Array(this.memory.buffer);
  }

  /**
   * `raw` (a snappy block) decompressed into `size` bytes of the memory, with room after it
   * for `ints` dictionary indexes (`hybrid`'s output for this page): a view, valid until the
   * next call. A block that does not decompress to exactly `size` bytes is an error naming `what`.
   */
  snappy(raw: Uint8Array, size: number, ints: number, what: string): Uint8Array {
    const input = this.base;
    const output = align8(input + raw.length + SLACK);
    this.room(align8(output + size + SLACK) + 4 * ints + SLACK);
    this.bytes.set(raw, input);
    const r = this.x.snappy(input, raw.length, output, size);
    if (r !== 0) throw new Error(`a snappy page of ${what} does not decompress: ${SNAPPY_ERRORS[r] ?? `error ${r}`}`);
    return this.bytes.subarray(output, output + size);
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
    if (page.buffer === this.memory.buffer) {
      // Decompressed here: the indexes go after the page (its room made by `snappy`), the memory not grown.
      p = page.byteOffset + at;
      ints = align8(page.byteOffset + page.length + SLACK);
      if (ints + 4 * count + SLACK > this.memory.buffer.byteLength) return undefined;
    } else {
      p = this.base;
      ints = align8(p + (end - at) + SLACK);
      this.room(ints + 4 * count + SLACK);
      this.bytes.set(page.subarray(at, end), p);
    }
    const r = this.x.hybrid(p, end - at, width, ints, count, limit);
    if (r < 0) throw new Error(`an RLE/bit-packed run of ${what} ends past its page`);
    out.set(this.words.subarray(ints >> 2, (ints >> 2) + count), to);
    return this.words[this.badAt]!;
  }
}

/** This thread's kernels, once made (null: they cannot be). */
let made: PageKernels | null | undefined;
