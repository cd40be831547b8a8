import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { DBT3_COLUMNS, DBT3_TABLES } from '../../src/datasets/dbt3-schema.js';
import { duckRows, sqlString } from '../helpers/duckdb-parquet.js';
import { closeTestSchema, digest, openTestSchema, runCli, tableRecords, tblRecords, testUrl } from '../helpers/test-db.js';

/*
 * `dbt3 gen --format parquet`: the files read by an independent reader (DuckDB) hold the
 * rows of the .tbl files, typed as the kit's schema; `dbt3 load` of a Parquet folder and
 * of a .tbl folder of the same scale end with the same eight tables.
 */

const SCHEMA = 'it_gen_parquet';
let client: pg.Client;
let dir: string;
const tblDir = (): string => path.join(dir, 'tbl');
const want = new Map<string, { rows: number; digest: string }>();

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-gen-parquet-'));
  const r = await runCli(['dbt3', 'gen', '--scale', '0.01', '--out', tblDir()]);
  assert.equal(r.code, 0, r.stderr);
  for (const table of DBT3_TABLES) {
    const records = tblRecords(await fs.readFile(path.join(tblDir(), `${table}.tbl`), 'utf8'));
    want.set(table, { rows: records.length, digest: digest(records) });
  }
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

/** DuckDB's type names for the kit's PostgreSQL types. */
function duckType(pg: string): string {
  if (pg === 'integer') return 'INTEGER';
  if (pg === 'bigint') return 'BIGINT';
  if (pg === 'date') return 'DATE';
  if (pg.startsWith('numeric')) return pg.replace('numeric', 'DECIMAL');
  return 'VARCHAR';
}

describe('dbt3 gen --format parquet', () => {
  for (const compression of ['snappy', 'gzip', 'none'] as const) {
    it(`${compression}: DuckDB reads every table as the .tbl rows, with the schema's types and the row groups asked for`, async () => {
      const out = path.join(dir, `pq-${compression}`);
      const r = await runCli(['dbt3', 'gen', '--scale', '0.01', '--format', 'parquet', '--compression', compression, '--row-group-size', '5000', '--out', out]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /lineitem\.parquet: 59,877 rows/);
      for (const table of DBT3_TABLES) {
        const file = sqlString(path.join(out, `${table}.parquet`));
        const columns = DBT3_COLUMNS[table];
        const types = await duckRows(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet(${file}))`);
        assert.deepEqual(types.map((t) => [t[0], t[1]]), columns.map(([name, pg]) => [name, duckType(pg)]), table);
        // DuckDB prints DECIMAL(15,2) with two places and DATE as YYYY-MM-DD, as the .tbl has them
        const rows = await duckRows(`SELECT concat_ws('|', ${columns.map(([n]) => `"${n}"::VARCHAR`).join(', ')}) FROM read_parquet(${file})`);
        const records = rows.map((row) => String(row[0]));
        assert.deepEqual({ rows: records.length, digest: digest(records) }, want.get(table), table);
        const groups = await duckRows(`SELECT DISTINCT row_group_id, row_group_num_rows, compression FROM parquet_metadata(${file}) ORDER BY 1`);
        const rowsOf = want.get(table)!.rows;
        assert.equal(groups.length, Math.ceil(rowsOf / 5000), table);
        assert.ok(groups.every((g, i) => Number(g[1]) === Math.min(5000, rowsOf - i * 5000)), table);
        assert.ok(groups.every((g) => g[2] === { snappy: 'SNAPPY', gzip: 'GZIP', none: 'UNCOMPRESSED' }[compression]), `${table}: ${groups.map((g) => g[2]).join(',')}`);
      }
    });
  }

  it('dbt3 load of a Parquet folder (split in two parts) and of the .tbl folder end with the same eight tables', async () => {
    const out = path.join(dir, 'pq-parts');
    for (const part of ['1', '2']) {
      const r = await runCli(['dbt3', 'gen', '--scale', '0.01', '--format', 'parquet', '--parts', '2', '--part', part, '--row-group-size', '3000', '--out', out]);
      assert.equal(r.code, 0, r.stderr);
    }
    assert.deepEqual((await fs.readdir(out)).filter((f) => f.startsWith('lineitem')).sort(), ['lineitem.1.parquet', 'lineitem.2.parquet']);
    const loaded = new Map<string, Map<string, string>>();
    for (const [name, folder] of [['tbl', tblDir()], ['parquet', out]] as const) {
      const schema = `${SCHEMA}_${name}`;
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
      const r = await runCli(['dbt3', 'load', folder, '--db', testUrl(), '--schema', schema, '-w', '2', '--chunk-size', '128KB', '--json']);
      assert.equal(r.code, 0, r.stderr);
      const summary = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { total: { read: number; loaded: number; rejected: number; skipped: number } };
      const total = summary.total;
      const rows = [...want.values()].reduce((n, w) => n + w.rows, 0);
      assert.deepEqual([total.read, total.loaded, total.rejected, total.skipped], [rows, rows, 0, 0], name);
      const digests = new Map<string, string>();
      for (const table of DBT3_TABLES) digests.set(table, digest(await tableRecords(client, `${schema}.${table}`)));
      loaded.set(name, digests);
      // the kit's keys were built on both (the foreign keys hold on the Parquet rows too)
      const fks = await client.query(`SELECT count(*)::int AS n FROM pg_constraint WHERE contype = 'f' AND connamespace = '${schema}'::regnamespace`);
      assert.equal(fks.rows[0].n, 8, name);
    }
    for (const table of DBT3_TABLES) {
      assert.equal(loaded.get('parquet')!.get(table), loaded.get('tbl')!.get(table), table);
      assert.equal(loaded.get('tbl')!.get(table), want.get(table)!.digest, table);
    }
    for (const name of ['tbl', 'parquet']) await client.query(`DROP SCHEMA ${SCHEMA}_${name} CASCADE`);
  });

  it('--help documents --format, --compression and --row-group-size; a bad value is a usage error (exit 2) naming the flag', async () => {
    const help = await runCli(['dbt3', 'gen', '--help']);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /--format <format>\s+tbl \(dbgen's \| text\) or parquet/);
    assert.match(help.stdout, /--compression <codec>\s+parquet only: snappy, gzip or none/);
    assert.match(help.stdout, /--row-group-size <rows>\s+parquet only: rows per row group \(default: 122,880/);
    const out = path.join(dir, 'never');
    const bad = await runCli(['dbt3', 'gen', '--scale', '0.01', '--format', 'csv', '--out', out]);
    assert.equal(bad.code, 2, bad.stderr);
    assert.equal(bad.stderr, 'pgsurge: Expected `--format` to be tbl or parquet, got `csv`\n');
    const codec = await runCli(['dbt3', 'gen', '--scale', '0.01', '--format', 'parquet', '--compression', 'zstd', '--out', out]);
    assert.equal(codec.code, 2, codec.stderr);
    assert.match(codec.stderr, /Expected `--compression` to be snappy, gzip, none .*got `zstd`/);
    await assert.rejects(fs.stat(out), { code: 'ENOENT' });
  });
});
