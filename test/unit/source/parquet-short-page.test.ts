import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ColumnChunk, SchemaElement } from 'hyparquet';
import { BufferPool, decodeFlatColumn, ownedBuffers } from '../../../src/input/parquet/flat-decoder.js';
import { dataPageV1 } from '../../helpers/data-page.js';

const plainInt32Page = (numValues: number, values: Int32Array): Uint8Array => dataPageV1(numValues, new Uint8Array(values.buffer, values.byteOffset, values.byteLength));
const chunkOf = (bytes: Uint8Array, rows: number): ColumnChunk =>
  ({ file_offset: 0n, meta_data: { type: 'INT32', encodings: ['PLAIN'], path_in_schema: ['x'], codec: 'UNCOMPRESSED', num_values: BigInt(rows), total_uncompressed_size: BigInt(bytes.length), total_compressed_size: BigInt(bytes.length), data_page_offset: 0n } }) as unknown as ColumnChunk;
const element = { name: 'x', type: 'INT32', repetition_type: 'REQUIRED' } as SchemaElement;

describe('a PLAIN page shorter than its values', () => {
  it('is an error naming the column, not the values an earlier row group left in a reused buffer (found by review)', () => {
    const rows = 8192;
    const pool = new BufferPool();
    // Row group 1: values 1000000 + r.
    const first = plainInt32Page(rows, Int32Array.from({ length: rows }, (_, r) => 1_000_000 + r));
    const a = decodeFlatColumn(first, chunkOf(first, rows), element, rows, pool);
    assert.equal(a.i32[a.index[5]!], 1_000_005);
    pool.give(ownedBuffers(a)); // every chunk of row group 1 committed
    // Row group 2: a page that says 8192 values but holds 4 (a truncated or corrupt file).
    const bad = plainInt32Page(rows, Int32Array.from([7, 7, 7, 7]));
    assert.throws(() => decodeFlatColumn(bad, chunkOf(bad, rows), element, rows, pool), /a PLAIN page of x holds 16 bytes of values, 8192 values need 32768/);
    // The same page whole decodes (the check is not off by one).
    const good = plainInt32Page(4, Int32Array.from([7, 8, 9, 10]));
    const d = decodeFlatColumn(good, chunkOf(good, 4), element, 4, pool);
    assert.deepEqual([...d.index].map((i) => d.i32[i]), [7, 8, 9, 10]);
  });
});
