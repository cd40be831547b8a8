import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DBT3_COLUMNS, DBT3_TABLES, type Dbt3Table } from '../../../src/datasets/dbt3-schema.js';
import { dbt3Counts, partSupplier, retailPriceCents } from '../../../src/datasets/dbt3/scale.js';
import { COLORS, CONTAINER_KINDS, CONTAINER_SIZES, INSTRUCTIONS, NATIONS, PRIORITIES, REGIONS, SEGMENTS, SHIP_MODES, TYPE_FINISHES, TYPE_METALS, TYPE_SIZES } from '../../../src/datasets/dbt3/vocabulary.js';
import { generateTo, readTbl, removeDir } from './dbt3-fixture.js';

/** dbgen's SF 1 files: [bytes, rows]. */
const DBGEN_SF1: Partial<Record<Dbt3Table, readonly [number, number]>> = {
  lineitem: [759_863_287, 6_001_215],
  orders: [171_952_161, 1_500_000],
  partsupp: [118_984_616, 800_000],
  customer: [24_346_144, 150_000],
  part: [24_135_125, 200_000],
  supplier: [1_409_184, 10_000],
};

const SCALE = 0.01;
const DATE = /^(199[2-8])-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;
const DECIMAL = /^-?\d+\.\d\d$/;
const INTEGER = /^-?\d+$/;

function cents(field: string): number {
  return Math.round(Number(field) * 100);
}

function days(date: string): number {
  return Math.round(Date.parse(`${date}T00:00:00Z`) / 86_400_000);
}

/** The width a char(n) / varchar(n) column allows, or undefined for other types. */
function textWidth(type: string): number | undefined {
  const m = /^(?:var)?char\((\d+)\)$/.exec(type);
  return m === null ? undefined : Number(m[1]);
}

describe('dbt3 shape', () => {
  let dir = '';
  let files: Awaited<ReturnType<typeof generateTo>>['files'] = new Map();
  const rows = new Map<Dbt3Table, string[][]>();
  before(async () => {
    ({ dir, files } = await generateTo('shape', { scale: SCALE }));
    for (const table of DBT3_TABLES) rows.set(table, await readTbl(files.get(table)!.path));
  });
  after(() => removeDir(dir));

  it('writes every column of the schema, typed as the schema says', () => {
    for (const table of DBT3_TABLES) {
      const columns = DBT3_COLUMNS[table];
      for (const row of rows.get(table)!) {
        assert.equal(row.length, columns.length, `${table}: ${row.join('|')}`);
        columns.forEach(([name, type], i) => {
          const value = row[i]!;
          if (type === 'integer' || type === 'bigint') assert.match(value, INTEGER, `${name}`);
          else if (type.startsWith('numeric')) assert.match(value, DECIMAL, `${name}`);
          else if (type === 'date') {
            assert.match(value, DATE, name);
            assert.equal(new Date(`${value}T00:00:00Z`).toISOString().slice(0, 10), value, `${name} is a real day`);
          } else {
            const width = textWidth(type);
            assert.ok(width !== undefined && value.length <= width, `${name} ${JSON.stringify(value)} fits ${type}`);
            assert.doesNotMatch(value, /[\\\t\n|]/, name);
          }
        });
      }
    }
  });

  it('has line widths within 10% of dbgen at SF 1', () => {
    for (const [table, [bytes, count]] of Object.entries(DBGEN_SF1) as [Dbt3Table, readonly [number, number]][]) {
      const file = files.get(table)!;
      const ours = file.bytes / file.rows;
      const theirs = bytes / count;
      assert.ok(Math.abs(ours / theirs - 1) < 0.1, `${table}: ${ours.toFixed(1)} bytes a line, dbgen ${theirs.toFixed(1)}`);
    }
  });

  it('uses the spec value domains', () => {
    const nationKeys = new Map(NATIONS.map(([name, region], key) => [key, { name, region }]));
    assert.deepEqual(rows.get('region')!.map((r) => r[1]), [...REGIONS]);
    for (const [key, name, region] of rows.get('nation')!) {
      assert.equal(nationKeys.get(Number(key))?.name, name);
      assert.equal(nationKeys.get(Number(key))?.region, Number(region));
    }
    const phone = (value: string, nation: string): void => {
      assert.match(value, /^\d\d-\d\d\d-\d\d\d-\d\d\d\d$/);
      assert.equal(Number(value.slice(0, 2)), Number(nation) + 10, `${value} for nation ${nation}`);
    };
    for (const [key, name, , nation, ph, bal] of rows.get('supplier')!) {
      assert.equal(name, `Supplier#${key!.padStart(9, '0')}`);
      phone(ph!, nation!);
      assert.ok(cents(bal!) >= -99999 && cents(bal!) <= 999999);
    }
    for (const [key, name, address, nation, ph, , segment] of rows.get('customer')!) {
      assert.equal(name, `Customer#${key!.padStart(9, '0')}`);
      assert.ok(address!.length >= 10 && address!.length <= 40);
      phone(ph!, nation!);
      assert.ok((SEGMENTS as readonly string[]).includes(segment!), segment);
    }
    const types = new Set(TYPE_SIZES.flatMap((s) => TYPE_FINISHES.flatMap((f) => TYPE_METALS.map((m) => `${s} ${f} ${m}`))));
    const containers = new Set(CONTAINER_SIZES.flatMap((s) => CONTAINER_KINDS.map((k) => `${s} ${k}`)));
    assert.equal(COLORS.length, 92);
    for (const [key, name, mfgr, brand, type, size, container, price] of rows.get('part')!) {
      const words = name!.split(' ');
      assert.equal(new Set(words).size, 5, name);
      for (const w of words) assert.ok(COLORS.includes(w), w);
      assert.match(mfgr!, /^Manufacturer#[1-5]$/);
      assert.match(brand!, /^Brand#[1-5][1-5]$/);
      assert.equal(brand![6], mfgr![13], 'brand starts with its manufacturer');
      assert.ok(types.has(type!), type);
      assert.ok(Number(size) >= 1 && Number(size) <= 50);
      assert.ok(containers.has(container!), container);
      assert.equal(cents(price!), retailPriceCents(Number(key)));
    }
    for (const [, , qty, cost] of rows.get('partsupp')!) {
      assert.ok(Number(qty) >= 1 && Number(qty) <= 9999);
      assert.ok(cents(cost!) >= 100 && cents(cost!) <= 100000);
    }
    for (const [, , , , , priority, clerk, ship] of rows.get('orders')!) {
      assert.ok((PRIORITIES as readonly string[]).includes(priority!));
      assert.match(clerk!, /^Clerk#\d{9}$/);
      assert.ok(Number(clerk!.slice(6)) >= 1 && Number(clerk!.slice(6)) <= 1000);
      assert.equal(ship, '0');
    }
    for (const l of rows.get('lineitem')!) {
      assert.ok((INSTRUCTIONS as readonly string[]).includes(l[13]!));
      assert.ok((SHIP_MODES as readonly string[]).includes(l[14]!));
      assert.ok(Number(l[4]) >= 1 && Number(l[4]) <= 50 && l[4]!.endsWith('.00'));
      assert.ok(cents(l[6]!) >= 0 && cents(l[6]!) <= 10);
      assert.ok(cents(l[7]!) >= 0 && cents(l[7]!) <= 8);
    }
  });

  it('derives prices, dates, flags and status as the spec does', () => {
    const current = days('1995-06-17');
    const orders = new Map(rows.get('orders')!.map((o) => [o[0]!, o]));
    const lines = new Map<string, string[][]>();
    for (const l of rows.get('lineitem')!) {
      const list = lines.get(l[0]!) ?? [];
      list.push(l);
      lines.set(l[0]!, list);
    }
    for (const [key, order] of orders) {
      const its = lines.get(key)!;
      assert.ok(its.length >= 1 && its.length <= 7);
      const orderDay = days(order[4]!);
      assert.ok(orderDay >= days('1992-01-01') && orderDay <= days('1998-12-31') - 151);
      let total = 0;
      let shipped = 0;
      its.forEach((l, i) => {
        assert.equal(l[3], String(i + 1), 'line numbers 1..n');
        const extended = cents(l[5]!);
        assert.equal(extended, Number(l[4]) * retailPriceCents(Number(l[1])));
        const ship = days(l[10]!);
        const commit = days(l[11]!);
        const receipt = days(l[12]!);
        assert.ok(ship - orderDay >= 1 && ship - orderDay <= 121);
        assert.ok(commit - orderDay >= 30 && commit - orderDay <= 90);
        assert.ok(receipt - ship >= 1 && receipt - ship <= 30);
        assert.equal(l[8], receipt <= current ? (l[8] === 'R' ? 'R' : 'A') : 'N');
        assert.equal(l[9], ship > current ? 'O' : 'F');
        if (l[9] === 'F') shipped++;
        total += Math.floor((Math.floor((extended * (100 - cents(l[6]!))) / 100) * (100 + cents(l[7]!))) / 100);
      });
      assert.equal(cents(order[3]!), total, `o_totalprice of ${key}`);
      assert.equal(order[2], shipped === its.length ? 'F' : shipped === 0 ? 'O' : 'P');
    }
    assert.equal(lines.size, orders.size, 'every lineitem belongs to an order');
  });

  it('resolves every foreign key and keeps every primary key unique', () => {
    const keys = (table: Dbt3Table, columns: number[]): string[] => rows.get(table)!.map((r) => columns.map((c) => r[c]).join('|'));
    const unique = (table: Dbt3Table, columns: number[]): Set<string> => {
      const list = keys(table, columns);
      const set = new Set(list);
      assert.equal(set.size, list.length, `${table} primary key is unique`);
      return set;
    };
    const region = unique('region', [0]);
    const nation = unique('nation', [0]);
    const supplier = unique('supplier', [0]);
    const customer = unique('customer', [0]);
    const part = unique('part', [0]);
    const partsupp = unique('partsupp', [0, 1]);
    const orders = unique('orders', [0]);
    unique('lineitem', [0, 3]);
    const resolves = (table: Dbt3Table, columns: number[], target: Set<string>, name: string): void => {
      for (const k of keys(table, columns)) assert.ok(target.has(k), `${name} ${k}`);
    };
    resolves('nation', [2], region, 'n_regionkey');
    resolves('supplier', [3], nation, 's_nationkey');
    resolves('customer', [3], nation, 'c_nationkey');
    resolves('partsupp', [0], part, 'ps_partkey');
    resolves('partsupp', [1], supplier, 'ps_suppkey');
    resolves('orders', [1], customer, 'o_custkey');
    resolves('lineitem', [0], orders, 'l_orderkey');
    resolves('lineitem', [1, 2], partsupp, 'l_partkey, l_suppkey');
    assert.equal(supplier.size, dbt3Counts(SCALE).supplier);
  });

  it('follows dbgen key rules: sparse order keys, no orders for every third customer, the partsupp formula', () => {
    for (const o of rows.get('orders')!) {
      assert.ok(Number(o[0]) % 32 < 8, `order key ${o[0]} is in the first 8 of its 32`);
      assert.notEqual(Number(o[1]) % 3, 0, `customer ${o[1]} should never order`);
    }
    const suppliers = dbt3Counts(SCALE).supplier;
    rows.get('partsupp')!.forEach((ps, i) => {
      assert.equal(Number(ps[1]), partSupplier(Number(ps[0]), i % 4, suppliers));
    });
  });
});
