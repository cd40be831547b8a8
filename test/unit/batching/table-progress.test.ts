import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Chunk } from '../../../src/core/chunk.js';
import { ChunkQueue } from '../../../src/input/chunk-queue.js';
import { TableProgress } from '../../../src/input/table-progress.js';

function chunk(table: string, n: number): Chunk {
  return {
    location: { file: `${table}.tbl`, byteOffset: n, byteLength: 1, firstLine: n + 1 },
    data: Buffer.from(`${n}\n`),
    source: Buffer.from(`${n}\n`),
    records: 1,
    lines: 1,
    target: { table, schema: undefined, format: 'text', file: `${table}.tbl` },
  };
}

async function* chunks(table: string, n: number): AsyncGenerator<Chunk> {
  for (let i = 0; i < n; i++) yield chunk(table, i);
}

describe('TableProgress', () => {
  it('announces a table once all its sources have ended and every chunk they gave is counted, each table once', async () => {
    const loaded: string[] = [];
    const progress = new TableProgress((t) => loaded.push(t));
    // lineitem in two sources (two byte ranges), orders in one: read through the queue as a load does.
    const queue = new ChunkQueue([progress.track('lineitem', chunks('lineitem', 3)), progress.track('lineitem', chunks('lineitem', 2)), progress.track('orders', chunks('orders', 2))], 2);
    const taken: Chunk[] = [];
    for (let c = await queue.take(); c !== undefined; c = await queue.take()) taken.push(c);
    assert.deepEqual(loaded, [], 'nothing is in before its chunks are counted');
    const lineitem = taken.filter((c) => c.target.table === 'lineitem');
    for (const c of lineitem.slice(0, -1)) progress.counted(c.target.table);
    assert.deepEqual(loaded, [], 'lineitem has a chunk not counted yet');
    progress.counted('lineitem');
    assert.deepEqual(loaded, ['lineitem']);
    progress.counted('orders');
    progress.counted('orders');
    assert.deepEqual(loaded, ['lineitem', 'orders']);
  });

  it('a table with no source, or whose sources give nothing (a resume found it all loaded), is in once they are opened or end; one closed early never is', async () => {
    const loaded: string[] = [];
    const progress = new TableProgress((t) => loaded.push(t));
    progress.expect('supplier');
    const empty = progress.track('region', chunks('region', 0));
    progress.opened();
    assert.deepEqual(loaded, ['supplier'], 'no source at all: in as soon as every source is opened');
    assert.equal((await empty.next()).done, true);
    assert.deepEqual(loaded, ['supplier', 'region']);
    const stopped = progress.track('nation', chunks('nation', 3));
    await stopped.next();
    progress.counted('nation');
    await stopped.return?.(undefined);
    assert.deepEqual(loaded, ['supplier', 'region'], 'a load that stopped has not loaded nation');
  });
});
