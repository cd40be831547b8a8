import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { DBT3_TABLES } from '../../src/datasets/dbt3-schema.js';
import { generateDbt3 } from '../../src/datasets/dbt3/generate.js';
import { citusUrl, closeCitusSchema, openCitusSchema } from '../helpers/citus-db.js';
import { digest, runCli, tableRecords, tblRecords } from '../helpers/test-db.js';

const SCHEMA = 'ct_dbt3';
let client: pg.Client;
let dir: string;

before(async () => {
  ({ client, dir } = await openCitusSchema(SCHEMA, 'pgsurge-ct-dbt3-'));
  await generateDbt3({ scale: 0.01, outDir: dir });
});
after(async () => {
  await closeCitusSchema(SCHEMA, client, dir);
});

describe('pgsurge dbt3 load on Citus', () => {
  it('distributes lineitem and orders by order key (colocated), makes the rest reference tables, loads them exactly, builds every key and index', async () => {
    const r = await runCli(['dbt3', 'load', dir, '--db', citusUrl(), '--schema', SCHEMA, '-w', '2', '--chunk-size', '256KB', '-q']);
    assert.equal(r.code, 0, r.stderr);
    const layout = await client.query<{ t: string; method: string; col: string | null; colocation: number }>(
      `SELECT logicalrelid::regclass::text AS t, partmethod AS method, column_to_column_name(logicalrelid, partkey) AS col, colocationid AS colocation
         FROM pg_dist_partition WHERE logicalrelid::regclass::text LIKE '${SCHEMA}.%' ORDER BY 1`,
    );
    const by = new Map(layout.rows.map((row) => [row.t.replace(`${SCHEMA}.`, ''), row]));
    assert.equal(by.get('lineitem')?.col, 'l_orderkey');
    assert.equal(by.get('orders')?.col, 'o_orderkey');
    assert.equal(by.get('lineitem')?.colocation, by.get('orders')?.colocation, 'lineitem and orders colocated');
    for (const t of ['region', 'nation', 'supplier', 'customer', 'part', 'partsupp']) assert.equal(by.get(t)?.method, 'n', `${t} is a reference table`);
    for (const table of DBT3_TABLES) {
      const expected = tblRecords(await fs.readFile(path.join(dir, `${table}.tbl`), 'utf8'));
      assert.equal(digest(await tableRecords(client, `${SCHEMA}.${table}`)), digest(expected), `${table} digest`);
    }
    // (The coordinator also holds the reference tables' own shards, with their keys: counted on the tables only.)
    const fks = await client.query(`SELECT count(*)::int AS n FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid WHERE c.contype = 'f' AND c.connamespace = '${SCHEMA}'::regnamespace AND t.relname = ANY($1)`, [DBT3_TABLES]);
    assert.equal(fks.rows[0].n, 8);
    const idx = await client.query(`SELECT count(*)::int AS n FROM pg_indexes WHERE schemaname = '${SCHEMA}' AND tablename = ANY($1)`, [DBT3_TABLES]);
    assert.equal(idx.rows[0].n, 8 + 15);
  });
});
