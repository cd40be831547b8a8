import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Chunk } from '../../../src/batching/chunk.js';
import { ChunkQueue } from '../../../src/batching/chunk-queue.js';

function chunk(n: number): Chunk {
  return {
    location: { file: 'f', byteOffset: n, byteLength: 1, firstLine: n + 1 },
    data: Buffer.from(`${n}\n`),
    source: Buffer.from(`${n}\n`),
    records: 1,
    lines: 1,
    target: { table: 't', schema: undefined, format: 'text', file: 'f' },
  };
}

/** A source that counts how far it has been read. */
function counting(n: number, read: { count: number }, failAt?: number): AsyncGenerator<Chunk> {
  return (async function* () {
    for (let i = 0; i < n; i++) {
      if (i === failAt) throw new Error(`read failed at ${i}`);
      read.count++;
      yield chunk(i);
    }
  })();
}

describe('ChunkQueue', () => {
  it('delivers every chunk of every source once', async () => {
    const reads = [{ count: 0 }, { count: 0 }, { count: 0 }];
    const q = new ChunkQueue([counting(5, reads[0]!), counting(0, reads[1]!), counting(7, reads[2]!)], 3);
    const got: number[] = [];
    for (let c = await q.take(); c; c = await q.take()) got.push(c.location.byteOffset);
    assert.equal(got.length, 12);
    assert.equal(await q.take(), undefined);
  });

  it('reads ahead no more than its capacity while nobody takes', async () => {
    const read = { count: 0 };
    const q = new ChunkQueue([counting(100, read)], 4);
    await q.take();
    await new Promise((r) => setTimeout(r, 20));
    assert.ok(read.count <= 1 + 4, `read ${read.count} chunks ahead`);
    await q.close();
  });

  it('rejects takers with the first read error', async () => {
    const q = new ChunkQueue([counting(10, { count: 0 }, 3)], 2);
    await assert.rejects(async () => {
      for (let c = await q.take(); c; c = await q.take());
    }, /read failed at 3/);
  });

  it('close() ends waiting takers', async () => {
    const never = (async function* (): AsyncGenerator<Chunk> {
      await new Promise(() => {});
    })();
    const q = new ChunkQueue([never], 1);
    const waiting = q.take();
    await q.close();
    assert.equal(await waiting, undefined);
  });
});
