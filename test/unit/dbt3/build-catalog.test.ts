import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dbt3Builds } from '../../../src/dbt3/build-keys.js';
import { buildsToDo, type CatalogBuild } from '../../../src/dbt3/build-catalog.js';
import { mergeSummaries } from '../../../src/dbt3/merge-summaries.js';
import type { LoadSummary } from '../../../src/metrics/load-counters.js';

const all = dbt3Builds('s');
/** The catalog as it is after a complete load. */
const complete = (): CatalogBuild[] =>
  all.map((b) =>
    b.kind === 'index'
      ? { kind: b.kind, table: b.table, columns: b.columns, name: b.name, valid: true }
      : b.kind === 'foreign key'
        ? { kind: b.kind, table: b.table, columns: b.columns, references: b.references, referencedColumns: b.referencedColumns, valid: true }
        : { kind: b.kind, table: b.table, columns: b.columns, valid: true },
  );

describe('what a resumed dbt3 load still builds', () => {
  it('nothing when the catalog holds all 31; everything when it holds none', () => {
    assert.deepEqual(buildsToDo(all, complete(), 's').missing, []);
    assert.equal(buildsToDo(all, complete(), 's').present.length, 31);
    assert.equal(buildsToDo(all, [], 's').missing.length, 31);
  });

  it('an invalid index is dropped and built again; the rest is left alone', () => {
    const catalog = complete().map((c) => (c.name === 'i_l_shipdate' ? { ...c, valid: false } : c));
    const todo = buildsToDo(all, catalog, 's');
    assert.deepEqual(todo.missing.map((b) => b.id), ['index i_l_shipdate']);
    assert.deepEqual(todo.drops, ['DROP INDEX "s"."i_l_shipdate"']);
  });

  it('a primary key missing with its unique index in place (stopped between the two steps): only the constraint; on other columns, it stops the load', () => {
    const catalog = complete().map((c): CatalogBuild => (c.kind === 'primary key' && c.table === 'lineitem' ? { kind: 'index', table: 'lineitem', columns: c.columns, name: 'lineitem_pkey', valid: true } : c));
    const todo = buildsToDo(all, catalog, 's');
    assert.deepEqual(todo.missing.map((b) => [b.id, b.kind === 'primary key' && b.indexBuilt === true]), [['primary key lineitem', true]]);
    assert.deepEqual(todo.drops, []);
    const elsewhere = catalog.map((c) => (c.name === 'lineitem_pkey' ? { ...c, columns: ['l_orderkey'] } : c));
    assert.throws(() => buildsToDo(all, elsewhere, 's'), /index lineitem_pkey exists on lineitem \(l_orderkey\), not on lineitem \(l_orderkey, l_linenumber\) as the DBT-3 kit's primary key/);
  });

  it('a foreign key is found by its columns and its referenced table, whatever its name', () => {
    const catalog = complete().filter((c) => !(c.kind === 'foreign key' && c.table === 'lineitem' && c.columns.length === 2));
    assert.deepEqual(buildsToDo(all, catalog, 's').missing.map((b) => b.id), ['foreign key lineitem (l_partkey, l_suppkey) → partsupp']);
  });

  it('a kit-named index on other columns, or an unvalidated foreign key, stops the load', () => {
    const moved = complete().map((c) => (c.name === 'i_o_custkey' ? { ...c, columns: ['o_orderdate'] } : c));
    assert.throws(() => buildsToDo(all, moved, 's'), /index i_o_custkey exists on orders \(o_orderdate\), not on orders \(o_custkey\)/);
    const notValid = complete().map((c) => (c.kind === 'foreign key' && c.table === 'orders' ? { ...c, valid: false } : c));
    assert.throws(() => buildsToDo(all, notValid, 's'), /the foreign key orders \(o_custkey\) → customer exists but is not valid/);
  });
});

describe('one summary of the per-table loads', () => {
  const one = (table: string, read: number, loaded: number, rejected: number, seconds: number): LoadSummary => ({
    tables: [{ table, files: [`${table}.tbl`], read, loaded, rejected, skipped: 0, rows: loaded, bytes: loaded * 100, chunks: 1, seconds, rowsPerSecond: loaded / seconds, mbPerSecond: 0 }],
    files: [{ table, file: `${table}.tbl`, read, loaded, rejected, skipped: 0, earlier: { loaded: 0, rejected: 0, skipped: 0 } }],
    total: { read, loaded, rejected, skipped: 0, rows: loaded, bytes: loaded * 100, chunks: 1, seconds, rowsPerSecond: loaded / seconds, mbPerSecond: 0, elapsedSeconds: seconds },
    loadId: `${table}-1`,
    workers: 2,
    target: 't',
  });
  it('sums the accounting, keeps every table and file, and rates over the span given', () => {
    const m = mergeSummaries([one('orders', 10, 9, 1, 2), one('lineitem', 40, 40, 0, 4)], 2, 't', 5);
    assert.deepEqual([m.total.read, m.total.loaded, m.total.rejected, m.total.skipped], [50, 49, 1, 0]);
    assert.equal(m.total.read, m.total.loaded + m.total.rejected + m.total.skipped);
    assert.deepEqual(m.tables.map((t) => t.table), ['orders', 'lineitem']);
    assert.equal(m.files.length, 2);
    assert.equal(m.total.seconds, 5);
    assert.equal(m.total.rowsPerSecond, 49 / 5);
    assert.equal(m.loadId, 'orders-1,lineitem-1');
  });
  it('one load of all tables keeps its own summary, fields and all', () => {
    const single = { ...one('orders', 10, 10, 0, 2), extra: 'kept' } as LoadSummary;
    assert.equal(mergeSummaries([single], 2, 't', 9), single);
  });
});
