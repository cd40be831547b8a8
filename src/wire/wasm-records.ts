/**
 * The record splitter's fast records in WebAssembly (src/wire/wasm/fast-records.c): whole
 * COPY text records whose every field is in its column's fast form, encoded at about half
 * the JavaScript fast paths' cost per row (bench/wire-encode.ts: DBT-3 lineitem ~0.40 →
 * ~0.21 µs/row, the copies in and out included). The kernel stops before the first record
 * it cannot encode whole and the splitter encodes that one in JavaScript, so what the two
 * write is the same by construction, and test/unit/wire/wasm-records.test.ts checks it.
 *
 * Used when every column of the COPY has a fast kind (otherwise each record would come
 * back to JavaScript), for COPY text input (not CSV). `PGSURGE_WIRE_WASM=0` turns it off
 * (the benches measure it against the JavaScript that way).
 */
import { FAST_RECORDS_WASM_BASE64 } from './wasm/fast-records-wasm.js';
import type { WireBuffer } from './field-encoder.js';

const PAGE = 65536;
const STOP_ROOM = 2;
/** The output region's first size: a 64 KB text piece is ~110 KB of lineitem tuples. */
const FIRST_OUT = 256 * 1024;

let compiled: WebAssembly.Module | undefined;

interface Exports {
  encode_records(d: number, len: number, kinds: number, ncols: number, delim: number, stops: number, nul: number, nulLen: number, out: number, outCap: number): number;
  r_consumed: WebAssembly.Global;
  r_produced: WebAssembly.Global;
  r_stop: WebAssembly.Global;
  __heap_base: WebAssembly.Global;
}

/** Whether the WebAssembly fast records are on (`PGSURGE_WIRE_WASM=0` turns them off). */
export function wasmRecordsEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.PGSURGE_WIRE_WASM !== '0';
}

/**
 * One splitter's kernel and memory. The memory holds, from `__heap_base`: the kinds, the
 * text stops, the NULL string, then the input (a piece, copied in once per `load`) and the
 * output region; it grows to fit the input.
 */
export class WasmRecords {
  private readonly memory = new WebAssembly.Memory({ initial: 8 });
  private readonly x: Exports;
  private readonly kindsAt: number;
  private readonly stopsAt: number;
  private readonly nulAt: number;
  private readonly inAt: number;
  private bytes: Uint8Array;
  private words: Int32Array;
  private outAt = 0;
  private outCap = FIRST_OUT;
  private loaded = 0;
  /** After `run`: the index after the last record it encoded. */
  consumed = 0;

  constructor(
    private readonly kinds: Int8Array,
    private readonly ncols: number,
    private readonly delimiter: number,
    textStops: Uint8Array,
    private readonly nul: Uint8Array,
  ) {
    compiled ??= new WebAssembly.Module(Buffer.from(FAST_RECORDS_WASM_BASE64, 'base64'));
    this.x = new WebAssembly.Instance(compiled, { env: { memory: this.memory } }).exports as unknown as Exports;
    const base = this.x.__heap_base.value as number;
    this.kindsAt = base;
    this.stopsAt = align(this.kindsAt + kinds.length);
    this.nulAt = this.stopsAt + 256;
    this.inAt = align(this.nulAt + nul.length);
    this.bytes = new Uint8Array(this.memory.buffer);
    this.words = new Int32Array(this.memory.buffer);
    this.ensure(0);
    this.bytes.set(kinds, this.kindsAt);
    this.bytes.set(textStops.subarray(0, 256), this.stopsAt);
    this.bytes.set(nul, this.nulAt);
  }

  /** Copies the input into the memory (once per splitter `encode`, before the `run`s on it). */
  load(d: Uint8Array): void {
    this.ensure(d.length);
    this.bytes.set(d, this.inAt);
    this.loaded = d.length;
  }

  /**
   * Encodes whole fast records of the loaded input from `p` to `len`, appending them to
   * `out`; returns how many, with `consumed` the index after the last one. It stops at the
   * end, or before a record the JavaScript must encode (then `consumed` is that record's
   * start). `len`: at most the loaded input's length.
   */
  run(p: number, len: number, out: WireBuffer): number {
    let records = 0;
    for (;;) {
      const n = this.x.encode_records(this.inAt + p, len - p, this.kindsAt, this.ncols, this.delimiter, this.stopsAt, this.nulAt, this.nul.length, this.outAt, this.outCap);
      const consumed = this.words[(this.x.r_consumed.value as number) >> 2]!;
      const produced = this.words[(this.x.r_produced.value as number) >> 2]!;
      const stop = this.words[(this.x.r_stop.value as number) >> 2]!;
      if (produced > 0) {
        out.reserve(produced);
        out.bytes.set(this.bytes.subarray(this.outAt, this.outAt + produced), out.pos);
        out.pos += produced;
      }
      records += n;
      p += consumed;
      if (stop !== STOP_ROOM) break;
      // The output region is full: go on into it again, or make it bigger for a record that does not fit at all.
      if (n === 0) {
        this.outCap *= 2;
        this.ensure(this.loaded);
      }
    }
    this.consumed = p;
    return records;
  }

  /** Room for an input of `inputBytes` and the output region after it. */
  private ensure(inputBytes: number): void {
    const outAt = align(this.inAt + inputBytes);
    const need = outAt + this.outCap;
    if (need > this.memory.buffer.byteLength) {
      this.memory.grow(Math.ceil((need - this.memory.buffer.byteLength) / PAGE));
      this.bytes = new Uint8Array(this.memory.buffer);
      this.words = new Int32Array(this.memory.buffer);
    }
    this.outAt = outAt;
  }
}

function align(n: number): number {
  return (n + 15) & ~15;
}
