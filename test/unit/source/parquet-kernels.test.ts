import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { compressors } from 'hyparquet-compressors';
import { snappyCompress } from 'hyparquet-writer/src/snappy.js';
import { readHybrid } from '../../../src/input/parquet/flat-decoder.js';
import { KernelMemoryFull, KernelPool, ParquetKernels, SNAPPY_COPY_STEP_BYTES } from '../../../src/input/parquet/parquet-kernels.js';
import { PARQUET_KERNELS_SOURCE_SHA256 } from '../../../src/input/parquet/wasm/parquet-kernels-wasm.js';
import { hybridStream } from '../../helpers/hybrid-stream.js';
import { committedModuleTests } from '../../helpers/wasm-module.js';
import { prng } from '../../helpers/lineitem-data.js';

/*
 * The Parquet kernels (src/input/parquet/wasm/parquet-kernels.c) against hysnappy and the
 * JavaScript hybrid reader (blocks made by the test's own encoder and by hyparquet-writer's): the same bytes for every element form snappy has, the same
 * values at every width, and bad input an error (never a trap, never values made up).
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const kernels = ParquetKernels.get()!;

/** A snappy block of random elements (literals of every length form, copies of each tag with offsets short and long) and what it decompresses to. */
function snappyBlock(seed: number, elements: number): { block: Uint8Array; data: Uint8Array } {
  const random = prng(seed);
  const pick = (n: number): number => Math.floor(random() * n);
  const data: number[] = [];
  const out: number[] = [];
  const literal = (n: number): void => {
    if (n <= 60) out.push((n - 1) << 2);
    else {
      const v = n - 1;
      const k = v < 0x100 ? 1 : v < 0x10000 ? 2 : v < 0x1000000 ? 3 : 4;
      out.push((59 + k) << 2);
      for (let j = 0; j < k; j++) out.push((v >>> (8 * j)) & 0xff);
    }
    for (let j = 0; j < n; j++) {
      const b = pick(4) === 0 ? pick(256) : 97 + pick(6);
      out.push(b);
      data.push(b);
    }
  };
  const copy = (off: number, n: number): void => {
    if (n >= 4 && n <= 11 && off < 2048 && pick(2) === 0) out.push(1 | ((n - 4) << 2) | ((off >> 8) << 5), off & 0xff);
    else if (off < 65536 && pick(3) > 0) out.push(2 | ((n - 1) << 2), off & 0xff, off >> 8);
    else out.push(3 | ((n - 1) << 2), off & 0xff, (off >> 8) & 0xff, (off >> 16) & 0xff, off >>> 24);
    for (let j = 0; j < n; j++) data.push(data[data.length - off]!);
  };
  literal(1 + pick(20));
  for (let e = 0; e < elements; e++) {
    const kind = pick(10);
    if (kind < 3) literal([1 + pick(16), 17 + pick(60), 61 + pick(400), 300 + pick(3000)][pick(4)]!);
    else {
      // Offsets below 8 (a repeating pattern), 8–15, and far; lengths 1–64 (a 1-byte offset's 4–11 among them).
      const far = Math.min(data.length, [1 + pick(7), 8 + pick(8), 1 + pick(data.length)][pick(3)]!);
      copy(far, 1 + pick(64));
    }
  }
  const head: number[] = [];
  for (let v = data.length; ; v >>>= 7) {
    if (v < 0x80) {
      head.push(v);
      break;
    }
    head.push((v & 0x7f) | 0x80);
  }
  return { block: Uint8Array.from([...head, ...out]), data: Uint8Array.from(data) };
}

describe('the Parquet kernels (WebAssembly)', () => {
  committedModuleTests('src/input/parquet/wasm/parquet-kernels.c', 'src/input/parquet/wasm/parquet-kernels-wasm.ts', PARQUET_KERNELS_SOURCE_SHA256);

  it('one set a thread, where WebAssembly runs', () => {
    assert.ok(kernels instanceof ParquetKernels);
    assert.equal(ParquetKernels.get(), kernels);
  });

  it('none where WebAssembly cannot run (node --jitless): the decoder\'s JavaScript does the work', () => {
    const module = pathToFileURL(path.join(root, 'dist/src/input/parquet/parquet-kernels.js')).href;
    const r = spawnSync(process.execPath, ['--jitless', '--input-type=module', '-e', `import { ParquetKernels } from ${JSON.stringify(module)}; console.log(ParquetKernels.get() === null)`], { encoding: 'utf8' });
    assert.equal(r.stdout.trim(), 'true', r.stderr);
  });

  it('snappy: every element form, the bytes hysnappy gives', () => {
    for (let seed = 1; seed <= 60; seed++) {
      const { block, data } = snappyBlock(seed, 20 + seed * 40);
      const ours = kernels.snappy(block, data.length, 0, 'l_x');
      assert.ok(Buffer.from(ours).equals(Buffer.from(data)), `seed ${seed}: ${data.length} bytes`);
      assert.ok(Buffer.from(compressors.SNAPPY!(block, data.length)).equals(Buffer.from(data)), `seed ${seed}: hyparquet-compressors' (hysnappy) agrees with the test's encoder`);
    }
  });

  it('snappy: blocks hyparquet-writer compresses (text, random bytes, runs, empty)', () => {
    const random = prng(7);
    const inputs = [
      new Uint8Array(0),
      Buffer.from('x'),
      Buffer.from('carefully final deposits detect slyly agai|'.repeat(3000)),
      Uint8Array.from({ length: 100_000 }, () => Math.floor(random() * 256)),
      new Uint8Array(70_000).fill(7),
      Uint8Array.from({ length: 50_000 }, (_, i) => (i % 3) + (i % 5)),
    ];
    for (const [k, input] of inputs.entries()) {
      const block = snappyCompress(input);
      assert.ok(Buffer.from(kernels.snappy(block, input.length, 0, 'l_x')).equals(Buffer.from(input)), `input ${k}`);
    }
  });

  it('snappy: a block that is cut, lies about its length or copies from before its start is an error naming the column', () => {
    const { block, data } = snappyBlock(3, 200);
    assert.throws(() => kernels.snappy(block, data.length + 1, 0, 'l_comment'), /a snappy page of l_comment does not decompress: its length preamble is not the page header's size/);
    assert.throws(() => kernels.snappy(block.subarray(0, block.length - 1), data.length, 0, 'l_comment'), /a snappy page of l_comment does not decompress: (an element reaches past its end|it ends before the page header's size)/);
    // A copy of 4 bytes from 9 back, as the first element.
    assert.throws(() => kernels.snappy(Uint8Array.from([4, 1, 9]), 4, 0, 'l_x'), /a copy reaches before its start/);
    assert.throws(() => kernels.snappy(Uint8Array.from([0x80]), 0, 0, 'l_x'), /its length preamble is not a varint/);
    // A literal longer than the preamble says.
    assert.throws(() => kernels.snappy(Uint8Array.from([2, 8, 1, 2, 3]), 2, 0, 'l_x'), /reaches past the page header's size/);
  });

  it('snappy: random bytes never trap (an error or some bytes, as hysnappy)', () => {
    const random = prng(11);
    for (let k = 0; k < 3000; k++) {
      const junk = Uint8Array.from({ length: 1 + Math.floor(random() * 64) }, () => Math.floor(random() * 256));
      const size = Math.floor(random() * 200);
      try {
        const ours = kernels.snappy(junk, size, 0, 'l_x');
        assert.equal(ours.length, size);
      } catch (e) {
        assert.match((e as Error).message, /^a snappy page of l_x does not decompress: /, `junk ${k}`);
      }
    }
  });

  it('snappy in steps: the same bytes as in one go, whatever the step, from regions of its own given back at the end', () => {
    const blocks = [snappyBlock(5, 3000), snappyBlock(9, 9000), { block: snappyCompress(Buffer.from('quickly regular pinto beans|'.repeat(40_000))), data: Buffer.from('quickly regular pinto beans|'.repeat(40_000)) }];
    for (const [k, { block, data }] of blocks.entries()) {
      for (const step of [1, 7, 64, 1000, 1 << 20]) {
        const held = kernels.held;
        const steps = kernels.snappySteps(block, data.length, 'l_comment');
        let n = 0;
        // Other calls of the kernels between steps (as another reader's decoding) leave the page alone.
        while (!steps.step(step)) {
          n++;
          const other = snappyBlock(100 + n, 30);
          kernels.snappy(other.block, other.data.length, 0, 'l_y');
          if (n > data.length) assert.fail('the steps never end');
        }
        assert.ok(Buffer.from(steps.page()).equals(Buffer.from(data)), `block ${k}, step ${step}`);
        // A step writes at least its bytes (to an element's end past them, at most 64 KB of a literal), after the
        // compressed page's copy into the memory (SNAPPY_COPY_STEP_BYTES a step, the first made by snappySteps).
        const copyStops = Math.ceil(block.length / SNAPPY_COPY_STEP_BYTES) - 1;
        assert.ok(n <= copyStops + Math.ceil(data.length / step), `block ${k}, step ${step}: ${n} stops for ${data.length} bytes`);
        if (data.length > step + 65536) assert.ok(n >= 1, `block ${k}, step ${step}: it stopped`);
        assert.equal(steps.step(step), true, 'a whole page steps no further');
        steps.release();
        steps.release();
        assert.equal(kernels.held, held, 'its regions are back');
        assert.throws(() => steps.page(), /read before it was whole|internal/);
      }
    }
  });

  it('snappy in steps: a compressed page past SNAPPY_COPY_STEP_BYTES goes into the memory a step at a time, then decompresses to the same bytes', () => {
    // Random bytes: one long literal, the compressed page a little longer than the page (~2.3 copy steps).
    const random = prng(11);
    const data = Buffer.from(Array.from({ length: 600_000 }, () => Math.floor(random() * 256)));
    const block = snappyCompress(data);
    assert.ok(block.length > 2 * SNAPPY_COPY_STEP_BYTES);
    const held = kernels.held;
    // A copy of the compressed bytes: changed after the steps began, they would show in the page if read late.
    const raw = Uint8Array.from(block);
    const steps = kernels.snappySteps(raw, data.length, 'l_comment');
    // The copy's steps after the first (made by snappySteps), then the page in one step of 1 MB, from the memory:
    // the compressed bytes zeroed once copied change nothing.
    const copySteps = Math.ceil(block.length / SNAPPY_COPY_STEP_BYTES);
    assert.equal(copySteps, 3);
    for (let k = 1; k < copySteps; k++) assert.equal(steps.step(1 << 20), false, `copy step ${k}`);
    raw.fill(0);
    assert.equal(steps.step(1 << 20), true);
    assert.ok(Buffer.from(steps.page()).equals(data));
    steps.release();
    assert.equal(kernels.held, held);
  });

  it('snappy in steps: a cut or lying block is an error naming the column, and its regions still go back', () => {
    const { block, data } = snappyBlock(3, 200);
    const held = kernels.held;
    const lying = kernels.snappySteps(block, data.length + 1, 'l_comment');
    assert.throws(() => lying.step(1 << 20), /a snappy page of l_comment does not decompress: its length preamble is not the page header's size/);
    lying.release();
    const cut = kernels.snappySteps(block.subarray(0, block.length - 1), data.length, 'l_comment');
    assert.throws(() => {
      while (!cut.step(16));
    }, /a snappy page of l_comment does not decompress: (an element reaches past its end|it ends before the page header's size)/);
    cut.release();
    assert.throws(() => kernels.snappySteps(Uint8Array.from([0x80, 0x80, 0x80, 0x01]), 1 << 24, 'l_x'), /its header says 16777216 bytes from 4 compressed/);
    assert.equal(kernels.held, held);
  });

  it('hybrid: the first value at or past the dictionary\'s size is found', () => {
    const { bytes, values } = hybridStream(6, 5);
    const all = new Int32Array(values);
    readHybrid(bytes, 0, bytes.length, 6, all, 0, values);
    const limit = Math.max(...all);
    const first = all.findIndex((v) => v >= limit);
    assert.equal(kernels.hybrid(bytes, 0, bytes.length, 6, new Int32Array(values), 0, values, limit, 'l_x'), first);
    assert.equal(kernels.hybrid(bytes, 0, bytes.length, 6, new Int32Array(values), 0, values, limit + 1, 'l_x'), -1);
    // A dictionary of no values: index 0 is past it.
    assert.equal(kernels.hybrid(Uint8Array.from([2, 0]), 0, 2, 1, new Int32Array(1), 0, 1, 0, 'l_x'), 0);
  });

  it('regions of the memory: first fit, given back and merged, the memory grown where none fits', () => {
    const held = kernels.held;
    const a = kernels.alloc(1000);
    const b = kernels.alloc(5000);
    const c = kernels.alloc(300);
    assert.ok(a.at % 16 === 0 && b.at >= a.at + 1000 + 16 && c.at >= b.at + 5000 + 16, 'apart, with slack after each');
    kernels.release(b);
    // Fits where b was.
    const d = kernels.alloc(2000);
    assert.equal(d.at, b.at);
    kernels.release(a);
    kernels.release(d);
    // a, d and the rest of b merged: 6,000 bytes fit at a's place.
    const e = kernels.alloc(6000);
    assert.equal(e.at, a.at);
    const bytes = kernels.memoryBytes.length;
    const big = kernels.alloc(bytes);
    assert.ok(kernels.memoryBytes.length > bytes, 'the memory grew');
    for (const r of [e, c, big]) kernels.release(r);
    assert.equal(kernels.held, held, 'every region given back');
  });

  it('a memory that cannot grow: the scratch keeps its region (nothing given out twice), a region given back twice is refused', () => {
    const k = ParquetKernels.make(48); // 3 MB
    const pool = new KernelPool(k);
    const page = (n: number, b: number) => {
      const d = new Uint8Array(n).fill(b);
      return { raw: snappyCompress(d), d };
    };
    let p = page(400_000, 1);
    k.snappy(p.raw, p.d.length, 0, 'l_x');
    const filler = pool.bytes(1_900_000);
    p = page(1_000_000, 2);
    assert.throws(() => k.snappy(p.raw, p.d.length, 0, 'l_x'), KernelMemoryFull);
    const column = pool.bytes(300_000).fill(0xaa);
    p = page(50_000, 7);
    assert.ok(Buffer.from(k.snappy(p.raw, p.d.length, 0, 'l_x')).equals(Buffer.from(p.d)));
    assert.ok(column.every((b) => b === 0xaa), 'a later page did not write over a column');
    const r = k.alloc(1000);
    k.release(r);
    assert.throws(() => k.release(r), /internal: a region of the Parquet kernels' memory .* given back twice or never taken/);
    pool.drop(column);
    pool.drop(filler);
  });

  it('snappy: a page header claiming more than its bytes could hold is refused before the memory grows for it', () => {
    const k = ParquetKernels.make(64);
    assert.throws(() => k.snappy(Uint8Array.from([0x80, 0x80, 0x80, 0x80, 0x08]), 2 ** 31 - 1, 0, 'l_x'), /a snappy page of l_x does not decompress: its header says 2147483647 bytes from 5 compressed/);
    assert.equal(k.memoryBytes.length, 16 * 65536, 'not grown');
  });

  it('hybrid: a run past the end of its page is an error, not values made up', () => {
    const { bytes, values } = hybridStream(5, 3);
    assert.throws(() => kernels.hybrid(bytes, 0, bytes.length - 1, 5, new Int32Array(values), 0, values, -1, 'l_x'), /an RLE\/bit-packed run of l_x ends past its page/);
    assert.throws(() => kernels.hybrid(Uint8Array.from([0x03]), 0, 1, 8, new Int32Array(8), 0, 8, -1, 'l_x'), /ends past its page/);
    assert.throws(() => kernels.hybrid(Uint8Array.from([0x80]), 0, 1, 8, new Int32Array(8), 0, 8, -1, 'l_x'), /ends past its page/);
  });
});
