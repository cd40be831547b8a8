import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Chunk } from '../../../src/core/chunk.js';
import { ChunkQueue } from '../../../src/input/chunk-queue.js';

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

  it('start() reads ahead up to its capacity before anyone takes', async () => {
    const read = { count: 0 };
    const q = new ChunkQueue([counting(100, read)], 3);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(read.count, 0, 'nothing is read before start() or a take');
    q.start();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(read.count, 3);
    assert.equal((await q.take())?.location.byteOffset, 0);
    await q.close();
  });

  it('close() while a read is in flight closes that source once the read settles', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let closed = false;
    const slow = (async function* (): AsyncGenerator<Chunk> {
      try {
        await gate;
        yield chunk(0);
        yield chunk(1);
      } finally {
        closed = true;
      }
    })();
    const q = new ChunkQueue([slow], 1);
    q.start();
    await q.close();
    assert.equal(closed, false, 'the source is still being read');
    release();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(closed, true, 'its finally ran: its file would be closed');
    assert.equal(await q.take(), undefined);
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
