import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ColumnChunk, SchemaElement } from 'hyparquet';
import { snappyCompress } from 'hyparquet-writer/src/snappy.js';
import { decodeFlatColumn, dropColumn, flatColumnPages, PLAIN_STEP_BYTES, SNAPPY_STEP_BYTES, STEPPED_PAGE_BYTES } from '../../../src/input/parquet/flat-decoder.js';
import { KernelPool, ParquetKernels, SNAPPY_COPY_STEP_BYTES } from '../../../src/input/parquet/parquet-kernels.js';
import { dataPageV1 } from '../../helpers/data-page.js';

const snappyPage = (numValues: number, body: Uint8Array): Uint8Array => dataPageV1(numValues, body, snappyCompress(body));
const concat = (parts: Uint8Array[]): Uint8Array => Uint8Array.from(parts.flatMap((p) => [...p]));
const chunkOf = (bytes: Uint8Array, rows: number, uncompressed: number): ColumnChunk =>
  ({ file_offset: 0n, meta_data: { type: 'INT32', encodings: ['PLAIN'], path_in_schema: ['x'], codec: 'SNAPPY', num_values: BigInt(rows), total_uncompressed_size: BigInt(uncompressed), total_compressed_size: BigInt(bytes.length), data_page_offset: 0n } }) as unknown as ColumnChunk;
const element = { name: 'x', type: 'INT32', repetition_type: 'REQUIRED' } as SchemaElement;

describe('a column chunk decoded a page, or a big page\'s step, at a time (flatColumnPages)', () => {
  const kernels = ParquetKernels.get()!;
  // A big page (1.6 MB of INT32, stepped) then a small one (not stepped).
  // Compressible (many short elements): a random one would be one literal, a single step.
  const big = Int32Array.from({ length: 400_000 }, (_, r) => (r % 977) * (r % 13));
  const small = Int32Array.from({ length: 1000 }, (_, r) => -r);
  const bytesOf = (a: Int32Array): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const rows = big.length + small.length;
  const chunkBytes = concat([snappyPage(big.length, bytesOf(big)), snappyPage(small.length, bytesOf(small))]);
  const chunk = chunkOf(chunkBytes, rows, big.byteLength + small.byteLength);
  const expected = [...big, ...small];

  it('stops inside the big page and between pages, and gives the column decodeFlatColumn gives', () => {
    assert.ok(big.byteLength >= STEPPED_PAGE_BYTES);
    const pool = new KernelPool(kernels);
    const held = kernels.held;
    const pages = flatColumnPages(chunkBytes, chunk, element, rows, pool);
    let stops = 0;
    let step = pages.next();
    for (; !step.done; step = pages.next()) {
      stops++;
      // Other decodes between stops use the same kernels (another reader on the loop).
      const other = decodeFlatColumn(chunkBytes, chunk, element, rows, pool);
      dropColumn(pool, other);
    }
    const c = step.value;
    // The big page: one stop after the first step of its copy into the memory, one after each further copy step,
    // one after each snappy step but the last, one after each step of its values' copy into the column but the
    // last; then one before the second page (small: no stops).
    assert.ok(small.byteLength < STEPPED_PAGE_BYTES && small.byteLength < PLAIN_STEP_BYTES);
    const copySteps = Math.ceil(snappyCompress(bytesOf(big)).length / SNAPPY_COPY_STEP_BYTES);
    assert.equal(stops, 1 + (copySteps - 1) + (Math.ceil(big.byteLength / SNAPPY_STEP_BYTES) - 1) + (Math.ceil(big.byteLength / PLAIN_STEP_BYTES) - 1) + 1);
    assert.deepEqual(Array.from(c.index, (i) => c.i32[i]), expected);
    assert.deepEqual(Array.from(decodeFlatColumn(chunkBytes, chunk, element, rows).i32), expected);
    dropColumn(pool, c);
    assert.equal(kernels.held, held, 'the column\'s and the page\'s regions are back');
  });

  it('left at a stop inside the big page (return()), gives back the page\'s regions and the column\'s', () => {
    const pool = new KernelPool(kernels);
    const held = kernels.held;
    const pages = flatColumnPages(chunkBytes, chunk, element, rows, pool);
    assert.equal(pages.next().done, false);
    assert.ok(kernels.held > held);
    pages.return(undefined as never);
    assert.equal(kernels.held, held);
  });

  it('a big page that does not decompress is an error naming the column, and nothing is kept', () => {
    const pool = new KernelPool(kernels);
    const held = kernels.held;
    const bad = snappyPage(big.length, bytesOf(big));
    // Cut inside the compressed block: the page header still says its full size.
    const cut = bad.subarray(0, bad.length - 1000);
    const pages = flatColumnPages(cut, chunkOf(cut, big.length, big.byteLength), element, big.length, pool);
    assert.throws(() => {
      while (!pages.next().done);
    }, /x/);
    assert.equal(kernels.held, held);
  });
});
