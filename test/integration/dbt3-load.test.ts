import { gzipSync } from 'node:zlib';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { DBT3_TABLES } from '../../src/datasets/dbt3-schema.js';
import { generateDbt3 } from '../../src/datasets/dbt3/generate.js';
import { closeTestSchema, digest, freshSchema, runCli, tableRecords, tblRecords, testClient, testUrl, openTestSchema } from '../helpers/test-db.js';

const SCHEMA = 'it_dbt3';
let client: pg.Client;
let dir: string;

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-dbt3-'));
  await generateDbt3({ scale: 0.01, outDir: dir });
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

async function expectTablesEqualFiles(): Promise<void> {
  for (const table of DBT3_TABLES) {
    const expected = tblRecords(await fs.readFile(path.join(dir, `${table}.tbl`), 'utf8'));
    const n = await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.${table}`);
    assert.equal(n.rows[0].n, expected.length, `${table} row count`);
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.${table}`)), digest(expected), `${table} digest`);
  }
}

describe('pgsurge dbt3 load', () => {
  it('loads the eight generated tables, builds the kit\'s keys (every foreign key checked by PostgreSQL), and ANALYZEs', async () => {
    const r = await runCli(['dbt3', 'load', dir, '--db', testUrl(), '--schema', SCHEMA, '-w', '2', '--chunk-size', '256KB', '-q']);
    assert.equal(r.code, 0, r.stderr);
    for (const phase of ['create tables', 'load', 'primary keys', 'foreign keys and indexes', 'analyze']) assert.match(r.stdout, new RegExp(phase));
    await expectTablesEqualFiles();
    const fks = await client.query(`SELECT count(*)::int AS n FROM pg_constraint WHERE contype = 'f' AND connamespace = '${SCHEMA}'::regnamespace`);
    assert.equal(fks.rows[0].n, 8);
    const idx = await client.query(`SELECT count(*)::int AS n FROM pg_indexes WHERE schemaname = '${SCHEMA}'`);
    assert.equal(idx.rows[0].n, 8 + 15);
  });

  it('refuses tables that already hold rows without --replace, then replaces them', async () => {
    const refused = await runCli(['dbt3', 'load', dir, '--db', testUrl(), '--schema', SCHEMA, '-q']);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /already holds rows/);
    assert.match(refused.stderr, /--replace/);
    const r = await runCli(['dbt3', 'load', dir, '--db', testUrl(), '--schema', SCHEMA, '--replace', '--no-keys', '-w', '3', '-q']);
    assert.equal(r.code, 0, r.stderr);
    await expectTablesEqualFiles();
  });

  it('loads split files lineitem.tbl.1 … .3, gzipped or not; the same part both ways is refused', async () => {
    const splitDir = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-it-dbt3-split-'));
    try {
      for (const part of [1, 2, 3]) await generateDbt3({ scale: 0.01, outDir: splitDir, tables: ['lineitem'], parts: 3, part });
      const names = (await fs.readdir(splitDir)).sort();
      assert.deepEqual(names, ['lineitem.tbl.1', 'lineitem.tbl.2', 'lineitem.tbl.3']);
      const part2 = await fs.readFile(path.join(splitDir, 'lineitem.tbl.2'));
      await fs.writeFile(path.join(splitDir, 'lineitem.tbl.2.gz'), gzipSync(part2));
      const both = await runCli(['dbt3', 'load', splitDir, '--db', testUrl(), '--schema', SCHEMA, '--replace', '--no-keys', '-q']);
      assert.equal(both.code, 2, both.stderr);
      assert.match(both.stderr, /holds both lineitem\.tbl\.2 and lineitem\.tbl\.2\.gz: loading both would load lineitem\.tbl\.2's rows twice/);
      await fs.rm(path.join(splitDir, 'lineitem.tbl.2'));
      const r = await runCli(['dbt3', 'load', splitDir, '--db', testUrl(), '--schema', SCHEMA, '--replace', '--no-keys', '-q']);
      assert.equal(r.code, 0, r.stderr);
      const expected = tblRecords(await fs.readFile(path.join(dir, 'lineitem.tbl'), 'utf8'));
      assert.equal(digest(await tableRecords(client, `${SCHEMA}.lineitem`)), digest(expected));
    } finally {
      await fs.rm(splitDir, { recursive: true, force: true });
    }
  });

  it('an empty folder says what it expected', async () => {
    const empty = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-it-empty-'));
    const r = await runCli(['dbt3', 'load', empty, '--db', testUrl(), '-q']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /no DBT-3 \.tbl files/);
    await fs.rm(empty, { recursive: true });
  });

  it('pipes the generator into load on stdin', async () => {
    const gen = await runCli(['dbt3', 'gen', '--scale', '0.01', '--tables', 'orders', '--out', '-']);
    assert.equal(gen.code, 0, gen.stderr);
    const r = await runCli(['load', '-', '-t', 'orders', '-f', 'tbl', '--truncate', '--db', testUrl(), '--schema', SCHEMA, '-q'], { stdin: gen.stdout });
    assert.equal(r.code, 0, r.stderr);
    const expected = tblRecords(await fs.readFile(path.join(dir, 'orders.tbl'), 'utf8'));
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.orders`)), digest(expected));
  });
});
