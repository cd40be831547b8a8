/**
 * The record splitter's fast records in WebAssembly (src/wire/wasm/fast-records.c): whole
 * COPY text records whose every field is in its column's fast form, encoded at about half
 * the JavaScript fast paths' cost per row (bench/wire-encode.ts, DBT-3 lineitem encoded
 * and sent: 0.452 → 0.252 µs/row, the copies in and out included). The kernel stops
 * before the first record it cannot encode whole and the splitter encodes that one in
 * JavaScript, so what the two write is the same by construction, and
 * test/unit/wire/wasm-records.test.ts checks it.
 *
 * Used when every column of the COPY has a fast kind (otherwise each record would come
 * back to JavaScript), for COPY text input (not CSV). `PGSURGE_WIRE_WASM=0` turns it off
 * (the benches measure it against the JavaScript that way). Where WebAssembly cannot run
 * (`node --jitless`, an address-space limit the memory's reservation exceeds) the
 * JavaScript does the work.
 */
import { FAST_RECORDS_WASM_BASE64 } from './wasm/fast-records-wasm.js';
import type { WireBuffer } from '../codecs/field-encoder.js';

const PAGE = 65536;
const STOP_ROOM = 2;
/** The output region's first size: a 64 KB text piece is ~110 KB of lineitem tuples. */
const FIRST_OUT = 256 * 1024;

interface Exports {
  encode_records(d: number, len: number, kinds: number, ncols: number, delim: number, stops: number, nul: number, nulLen: number, out: number, outCap: number): number;
  r_consumed: WebAssembly.Global;
  r_produced: WebAssembly.Global;
  r_stop: WebAssembly.Global;
  __heap_base: WebAssembly.Global;
}

/**
 * One instance and memory for the process: every splitter runs on the one event loop and
 * `encode` is synchronous, so a splitter writes its settings and its input into the memory
 * at the start of each `load`, and nothing else runs before its `run`s are done. (A memory
 * per splitter reserved ~10 GB of address space each, which `ulimit -v` may refuse.)
 */
interface Kernel {
  readonly x: Exports;
  readonly memory: WebAssembly.Memory;
  readonly base: number;
  /** The results' words: `r_consumed`, `r_produced`, `r_stop` (globals holding their addresses). */
  readonly consumedAt: number;
  readonly producedAt: number;
  readonly stopAt: number;
  bytes: Uint8Array;
  words: Int32Array;
}

/** The kernel, made on first use; null where WebAssembly is missing or refused. */
let kernel: Kernel | null | undefined;

function kernelOrNull(): Kernel | null {
  if (kernel !== undefined) return kernel;
  try {
    const memory = new WebAssembly.Memory({ initial: 8 });
    const module = new WebAssembly.Module(Buffer.from(FAST_RECORDS_WASM_BASE64, 'base64'));
    const x = new WebAssembly.Instance(module, { env: { memory } }).exports as unknown as Exports;
    const word = (g: WebAssembly.Global): number => (g.value as number) >> 2;
    kernel = {
      x,
      memory,
      base: x.__heap_base.value as number,
      consumedAt: word(x.r_consumed),
      producedAt: word(x.r_produced),
      stopAt: word(x.r_stop),
      bytes: new Uint8Array(memory.buffer),
      words: new Int32Array(memory.buffer),
    };
  } catch {
    kernel = null;
  }
  return kernel;
}

/**
 * One splitter's use of the kernel. At each `load` the memory gets, from `__heap_base`:
 * the kinds, the text stops, the NULL string, the input, then the output region; it grows
 * to fit.
 */
export class WasmRecords {
  private readonly stops: Uint8Array;
  private readonly kindsAt: number;
  private readonly stopsAt: number;
  private readonly nulAt: number;
  private readonly inAt: number;
  private outAt = 0;
  private outCap = FIRST_OUT;
  private loaded = 0;
  /** After `run`: the index after the last record it encoded. */
  consumed = 0;

  /** A splitter's use of the kernel, or undefined where WebAssembly cannot run here. */
  static create(kinds: Int8Array, ncols: number, delimiter: number, textStops: Uint8Array, nul: Uint8Array): WasmRecords | undefined {
    const k = kernelOrNull();
    return k === null ? undefined : new WasmRecords(k, kinds, ncols, delimiter, textStops, nul);
  }

  private constructor(
    private readonly k: Kernel,
    private readonly kinds: Int8Array,
    private readonly ncols: number,
    private readonly delimiter: number,
    textStops: Uint8Array,
    private readonly nul: Uint8Array,
  ) {
    this.stops = textStops.subarray(0, 256);
    this.kindsAt = k.base;
    this.stopsAt = align(this.kindsAt + kinds.length);
    this.nulAt = this.stopsAt + 256;
    this.inAt = align(this.nulAt + nul.length);
  }

  /** Writes this splitter's settings and the input into the memory (once per splitter `encode`, before the `run`s on it). */
  load(d: Uint8Array): void {
    this.loaded = d.length;
    this.ensure();
    const bytes = this.k.bytes;
    bytes.set(this.kinds, this.kindsAt);
    bytes.set(this.stops, this.stopsAt);
    bytes.set(this.nul, this.nulAt);
    bytes.set(d, this.inAt);
  }

  /**
   * Encodes whole fast records of the loaded input from `p` to `len`, appending them to
   * `out`; returns how many, with `consumed` the index after the last one. It stops at the
   * end, or before a record the JavaScript must encode (then `consumed` is that record's
   * start). `len`: at most the loaded input's length; no other splitter's `load` between.
   */
  run(p: number, len: number, out: WireBuffer): number {
    const k = this.k;
    let records = 0;
    for (;;) {
      const n = k.x.encode_records(this.inAt + p, len - p, this.kindsAt, this.ncols, this.delimiter, this.stopsAt, this.nulAt, this.nul.length, this.outAt, this.outCap);
      // Read after the call: a memory grown since `load` has new views.
      const consumed = k.words[k.consumedAt]!;
      const produced = k.words[k.producedAt]!;
      const stop = k.words[k.stopAt]!;
      if (produced > 0) {
        out.reserve(produced);
        out.bytes.set(k.bytes.subarray(this.outAt, this.outAt + produced), out.pos);
        out.pos += produced;
      }
      records += n;
      p += consumed;
      if (stop !== STOP_ROOM) break;
      // The output region is full: go on into it again, or make it bigger for a record that does not fit at all.
      if (n === 0) {
        this.outCap *= 2;
        this.ensure();
      }
    }
    this.consumed = p;
    return records;
  }

  /** Room for the loaded input and the output region after it. */
  private ensure(): void {
    const k = this.k;
    this.outAt = align(this.inAt + this.loaded);
    const need = this.outAt + this.outCap;
    if (need > k.memory.buffer.byteLength) {
      k.memory.grow(Math.ceil((need - k.memory.buffer.byteLength) / PAGE));
      k.bytes = new Uint8Array(k.memory.buffer);
      k.words = new Int32Array(k.memory.buffer);
    }
  }
}

function align(n: number): number {
  return (n + 15) & ~15;
}
