import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dbt3TableBlocks } from '../../../src/datasets/dbt3/generate.js';
import { dbt3Counts, partSupplier, sparseOrderKey } from '../../../src/datasets/dbt3/scale.js';
import type { Dbt3Table } from '../../../src/datasets/dbt3-schema.js';

/** The last slice of a table at a scale far too big to generate whole. */
async function lastSlice(table: Dbt3Table, scale: number): Promise<string[][]> {
  const chunks: Buffer[] = [];
  for await (const block of dbt3TableBlocks(table, { scale, parts: 100_000_000, part: 100_000_000, workers: 0 })) chunks.push(block.buf);
  return Buffer.concat(chunks).toString('latin1').split('\n').slice(0, -1).map((l) => l.split('|').slice(0, -1));
}

describe('dbt3 at large scale factors', () => {
  for (const scale of [1000, 30000]) {
    it(`keeps lineitem keys exact past 2^31 at SF ${scale}`, async () => {
      const counts = dbt3Counts(scale);
      const rows = await lastSlice('lineitem', scale);
      assert.ok(rows.length > 0);
      for (const l of rows) {
        const partkey = Number(l[1]);
        assert.ok(partkey >= 1 && partkey <= counts.part, `partkey ${l[1]}`);
        const supp = [0, 1, 2, 3].map((i) => partSupplier(partkey, i, counts.supplier));
        assert.ok(supp.includes(Number(l[2])), `suppkey ${l[2]} of part ${l[1]}`);
      }
      assert.equal(Number(rows.at(-1)![0]), sparseOrderKey(counts.orders));
    });
  }

  it('prints names of keys past 9 digits in full, as %09d does', async () => {
    const rows = await lastSlice('customer', 100_000);
    assert.equal(rows.at(-1)![1], 'Customer#15000000000');
  });
});
