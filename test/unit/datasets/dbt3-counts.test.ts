import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { DBT3_TABLES } from '../../../src/datasets/dbt3-schema.js';
import { dbt3Counts, partsuppKeysUnique, sliceRange, sparseOrderKey } from '../../../src/datasets/dbt3/scale.js';
import { generateTo, removeDir } from './dbt3-fixture.js';

const EXPECTED = [
  { scale: 0.01, region: 5, nation: 25, supplier: 100, customer: 1_500, part: 2_000, partsupp: 8_000, orders: 15_000 },
  { scale: 0.1, region: 5, nation: 25, supplier: 1_000, customer: 15_000, part: 20_000, partsupp: 80_000, orders: 150_000 },
  { scale: 1, region: 5, nation: 25, supplier: 10_000, customer: 150_000, part: 200_000, partsupp: 800_000, orders: 1_500_000 },
  { scale: 0.29, region: 5, nation: 25, supplier: 2_900, customer: 43_500, part: 58_000, partsupp: 232_000, orders: 435_000 },
] as const;

function countLines(buf: Buffer): number {
  let n = 0;
  for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, i + 1)) n++;
  return n;
}

describe('dbt3 row counts', () => {
  for (const expected of EXPECTED) {
    it(`follows the spec at SF ${expected.scale}`, () => {
      const counts = dbt3Counts(expected.scale);
      for (const [key, value] of Object.entries(expected)) assert.equal(counts[key as keyof typeof counts], value, key);
    });
  }

  for (const scale of [0.01, 0.1]) {
    describe(`generated files at SF ${scale}`, () => {
      let dir = '';
      let files: Awaited<ReturnType<typeof generateTo>>['files'] = new Map();
      before(async () => ({ dir, files } = await generateTo(`counts-${scale}`, { scale })));
      after(() => removeDir(dir));

      it('has exactly the spec row count for every fixed-size table', async () => {
        const expected = EXPECTED.find((e) => e.scale === scale)!;
        for (const table of DBT3_TABLES) {
          if (table === 'lineitem') continue;
          const file = files.get(table)!;
          assert.equal(file.rows, expected[table], table);
          assert.equal(countLines(await readFile(file.path)), expected[table], `${table} lines`);
        }
      });

      it('has lineitem within 1% of 4 per order', async () => {
        const lineitem = files.get('lineitem')!;
        const orders = dbt3Counts(scale).orders;
        assert.ok(Math.abs(lineitem.rows / (4 * orders) - 1) < 0.01, `${lineitem.rows} lineitems for ${orders} orders`);
        assert.equal(countLines(await readFile(lineitem.path)), lineitem.rows);
      });
    });
  }
});

describe('dbt3 key rules', () => {
  it('makes order keys sparse like dbgen: 8 of every 32', () => {
    const cases = [
      [1, 1], [7, 7], [8, 32], [9, 33], [15, 39], [16, 64], [1_500_000, 6_000_000],
    ] as const;
    for (const [i, key] of cases) assert.equal(sparseOrderKey(i), key, `row ${i}`);
  });

  it('knows which scale factors give every part four distinct suppliers', () => {
    for (const scale of [0.01, 0.1, 1, 10, 30, 100, 300, 1000]) assert.ok(partsuppKeysUnique(dbt3Counts(scale)), `SF ${scale}`);
    for (const scale of [0.001, 0.015]) assert.ok(!partsuppKeysUnique(dbt3Counts(scale)), `SF ${scale}`);
  });

  it('cuts slices that cover every row once', () => {
    for (const [total, parts] of [[10, 3], [1, 4], [15_000, 7], [0, 2]] as const) {
      let next = 0;
      for (let part = 1; part <= parts; part++) {
        const { start, end } = sliceRange(total, parts, part);
        assert.equal(start, next);
        assert.ok(end >= start);
        next = end;
      }
      assert.equal(next, total);
    }
  });
});
