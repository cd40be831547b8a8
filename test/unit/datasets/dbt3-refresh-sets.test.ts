import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { dbt3Counts, partSupplier, retailPriceCents } from '../../../src/datasets/dbt3/scale.js';
import { makeRefreshSets, refreshSetRows, type RefreshSet } from '../../../src/datasets/dbt3/refresh/update-sets.js';
import { generateTo, readTbl, removeDir } from './dbt3-fixture.js';

const SCALE = 0.01;

/**
 * sha256 of the files `dbgen -s 0.01 -U 2` writes (TPC-H dbgen 2.14.0, built from
 * github.com/electrum/tpch-dbgen; bench/dbgen-refresh.ts builds it and compares live).
 */
const DBGEN_SF001: Record<string, string> = {
  'orders.tbl.u1': 'eb9134d683b291367d5fb16fb8abb8a363ed77366a6813658aeab9a8920219dd',
  'lineitem.tbl.u1': 'b05bdc0089ae2c14d1923f5f491a3f8017686bc7842053d39799c45026e19acf',
  'delete.1': '4ce4ed89cd87c533647c12b92147da06e7d264184b7d57b1b7488794eb7bb9f3',
  'orders.tbl.u2': '7096dacb79e9f582308b4fab750e45989be392b4f4231aa2a41f998f30334027',
  'lineitem.tbl.u2': 'f4f380631028d2b529e69c5f19597f15dfab136c295098f54fa1518a517f1bb0',
  'delete.2': 'fc3a9c71ed3b6719cc168e6acafcaf92aaa1625065d6c3a55d4f4f179aeb08dd',
};

function rows(buf: Buffer): string[][] {
  return buf.toString('latin1').split('\n').filter((l) => l !== '').map((l) => {
    assert.ok(l.endsWith('|'), `a trailing | on ${l}`);
    return l.slice(0, -1).split('|');
  });
}

const sha = (buf: Buffer): string => createHash('sha256').update(buf).digest('hex');

describe('dbt3 refresh sets', () => {
  let sets: RefreshSet[];
  let baseKeys: number[];
  let dir: string;

  before(async () => {
    sets = makeRefreshSets(SCALE, 2);
    const gen = await generateTo('refresh', { scale: SCALE, tables: ['orders'] });
    dir = gen.dir;
    baseKeys = (await readTbl(gen.files.get('orders')!.path)).map((r) => Number(r[0]));
  });
  after(async () => removeDir(dir));

  it('are the bytes dbgen -U 2 writes at SF 0.01', () => {
    for (const s of sets) {
      assert.equal(sha(s.orders), DBGEN_SF001[`orders.tbl.u${s.set}`], `orders.tbl.u${s.set}`);
      assert.equal(sha(s.lineitem), DBGEN_SF001[`lineitem.tbl.u${s.set}`], `lineitem.tbl.u${s.set}`);
      assert.equal(sha(s.deletes), DBGEN_SF001[`delete.${s.set}`], `delete.${s.set}`);
    }
  });

  it('hold 0.1 % of the orders per set, as dbgen counts them', () => {
    assert.equal(refreshSetRows(0.01), 10);
    assert.equal(refreshSetRows(1), 1500);
    assert.equal(refreshSetRows(0.1), 150);
    for (const s of sets) {
      assert.equal(s.orderRows, 10);
      assert.equal(rows(s.orders).length, 10);
      assert.equal(s.deleteRows, 10);
      assert.equal(rows(s.lineitem).length, s.lineitemRows);
    }
  });

  it('insert orders whose keys sit in the gaps of the loaded keys, new in every set', () => {
    const loaded = new Set(baseKeys);
    assert.equal(loaded.size, dbt3Counts(SCALE).orders);
    const seen = new Set<number>();
    for (const s of sets) {
      for (const [key] of rows(s.orders)) {
        const k = Number(key);
        assert.ok(!loaded.has(k), `new order ${k} is not a loaded key`);
        assert.equal(Math.floor(k / 8) % 4, 1, `new order ${k} uses the first gap sequence`);
        assert.ok(k > 0 && k < Math.max(...baseKeys), `new order ${k} lies inside the loaded key range`);
        assert.ok(!seen.has(k), `order ${k} in one set only`);
        seen.add(k);
      }
    }
  });

  it('delete loaded orders from the start of the key space, set after set', () => {
    const deleted = sets.flatMap((s) => rows(s.deletes).map(([k]) => Number(k)));
    assert.deepEqual(deleted, baseKeys.slice(0, deleted.length));
  });

  it('give each new order its lines, with totals and statuses that agree', () => {
    const counts = dbt3Counts(SCALE);
    for (const s of sets) {
      const lines = rows(s.lineitem);
      for (const o of rows(s.orders)) {
        const mine = lines.filter((l) => l[0] === o[0]);
        assert.ok(mine.length >= 1 && mine.length <= 7);
        assert.deepEqual(mine.map((l) => Number(l[3])), mine.map((_, i) => i + 1), 'line numbers 1..n');
        let total = 0;
        for (const l of mine) {
          const [partkey, suppkey, quantity, discount, tax] = [Number(l[1]), Number(l[2]), Number(l[4]), Math.round(Number(l[6]) * 100), Math.round(Number(l[7]) * 100)];
          assert.ok([0, 1, 2, 3].some((i) => partSupplier(partkey, i, counts.supplier) === suppkey), 'a partsupp row');
          const extended = retailPriceCents(partkey) * quantity;
          assert.equal(Math.round(Number(l[5]) * 100), extended);
          total += Math.floor((Math.floor((extended * (100 - discount)) / 100) * (100 + tax)) / 100);
        }
        assert.equal(Math.round(Number(o[3]) * 100), total, `o_totalprice of ${o[0]}`);
        const shipped = mine.filter((l) => l[9] === 'F').length;
        assert.equal(o[2], shipped === mine.length ? 'F' : shipped === 0 ? 'O' : 'P');
        assert.ok(Number(o[1]) % 3 !== 0, 'customers whose key is a multiple of 3 never order');
      }
      assert.equal(new Set(lines.map((l) => l[0])).size, s.orderRows, 'every line belongs to an order of the set');
    }
  });
});
