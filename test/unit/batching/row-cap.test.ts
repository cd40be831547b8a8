import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Chunk, LoadTarget } from '../../../src/batching/chunk.js';
import { chunkRecords } from '../../../src/batching/chunker.js';
import type { Format } from '../../../src/framing/formats.js';
import { framerFor } from '../../../src/framing/framer-for.js';

async function* blocksOf(data: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let at = 0; at < data.length; at += size) yield data.subarray(at, at + size);
}

async function capped(format: Format, input: string, maxRecords: number, chunkBytes: number, blockSize: number) {
  const target: LoadTarget = { table: 't', schema: undefined, format, file: 'x' };
  const chunks: Chunk[] = [];
  for await (const c of chunkRecords(blocksOf(Buffer.from(input), blockSize), { target, framer: framerFor(format), chunkBytes, startOffset: 0, startLine: 1, maxRecords })) chunks.push(c);
  return {
    out: Buffer.concat(chunks.map((c) => c.data)).toString(),
    records: chunks.reduce((s, c) => s + c.records, 0),
    consumed: chunks.reduce((s, c) => s + c.location.byteLength, 0),
    contiguous: chunks.every((c, i) => i === 0 || c.location.byteOffset === chunks[i - 1]!.location.byteOffset + chunks[i - 1]!.location.byteLength),
  };
}

describe('--rows: the chunker stops after n records, cut at a record boundary', () => {
  const tbl = Array.from({ length: 50 }, (_, i) => `${i}|row ${i}|`).join('\n') + '\n';
  const csvRecords = Array.from({ length: 50 }, (_, i) => (i % 3 === 0 ? `${i},"two\nlines, ""q"""` : `${i},plain`));
  const csv = csvRecords.join('\n') + '\n';
  for (const n of [1, 7, 49, 50, 80]) {
    for (const [chunkBytes, blockSize] of [[64, 64], [1000, 13], [17, 5], [1 << 20, 1 << 20]] as const) {
      it(`tbl: first ${n} rows with chunks of ${chunkBytes} bytes, blocks of ${blockSize}`, async () => {
        const got = await capped('tbl', tbl, n, chunkBytes, blockSize);
        const want = Math.min(n, 50);
        assert.equal(got.records, want);
        assert.equal(got.out, Array.from({ length: want }, (_, i) => `${i}|row ${i}\n`).join(''));
        assert.equal(got.consumed, tbl.split('\n').slice(0, want).join('\n').length + 1);
        assert.ok(got.contiguous);
      });
      it(`csv with quoted newlines: first ${n} rows with chunks of ${chunkBytes}, blocks of ${blockSize}`, async () => {
        const got = await capped('csv', csv, n, chunkBytes, blockSize);
        const want = Math.min(n, 50);
        assert.equal(got.records, want);
        assert.equal(got.out, csvRecords.slice(0, want).join('\n') + '\n');
        assert.ok(got.contiguous);
      });
    }
  }
  it('a last record without a newline counts', async () => {
    const got = await capped('text', 'a\nb\nc', 3, 1 << 20, 1 << 20);
    assert.equal(got.out, 'a\nb\nc\n');
    const two = await capped('text', 'a\nb\nc', 2, 1 << 20, 1 << 20);
    assert.equal(two.out, 'a\nb\n');
  });
});
