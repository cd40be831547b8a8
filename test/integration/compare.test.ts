import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import type { CompareResult } from '../../src/compare/run-compare.js';
import { reportProblem, type LoadReport } from '../../src/report/report-data.js';
import { closeTestSchema, digest, freshSchema, runCli, tableRecords, tblRecords, testClient, testUrl, openTestSchema } from '../helpers/test-db.js';

const SCHEMA = 'it_compare';
let client: pg.Client;
let dir: string;
let file: string;
let content: string;

function orders(n: number): string {
  const out: string[] = [];
  for (let i = 1; i <= n; i++) out.push(`${i}|${i % 97}|${'OFP'[i % 3]}|${(i * 3.17).toFixed(2)}|1996-01-${String((i % 28) + 1).padStart(2, '0')}|${i % 5}-LOW|Clerk#${i % 1000}|0|${i % 4 === 0 ? 'ünïcødé ' : ''}comment ${i}|`);
  return out.join('\n') + '\n';
}

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-compare-'));
  content = orders(700);
  file = path.join(dir, 'orders.tbl');
  await fs.writeFile(file, content);
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

const db = (): string[] => ['--db', testUrl(), '--schema', SCHEMA];

async function tablesLike(pattern: string): Promise<string[]> {
  const r = await client.query<{ t: string }>(`SELECT relname AS t FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE nspname = $1 AND relname LIKE $2 ORDER BY 1`, [SCHEMA, pattern]);
  return r.rows.map((x) => x.t);
}

describe('pgsurge compare', () => {
  it('runs every variant on the same rows, interleaved, reports medians as JSON, drops its tables', async () => {
    const out = path.join(dir, 'result.json');
    const r = await runCli(['compare', file, '--create', '--variants', 'copy:w1,copy:w2,insert:unnest:b50,insert:values:b64,insert:row:c0', '--rows', '300', '--repeat', '2', '--chunk-size', '4KB', '-w', '2', '--json', '--out', out, ...db()]);
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout) as CompareResult;
    assert.deepEqual(JSON.parse(await fs.readFile(out, 'utf8')), result);
    const labels = ['copy:w1', 'copy:w2', 'insert:unnest:b50', 'insert:values:b64', 'insert:row:c0'];
    assert.deepEqual(result.order, [...labels, ...labels]);
    assert.deepEqual(result.results.map((x) => x.variant.label), labels);
    assert.deepEqual(result.results.map((x) => x.workers), [1, 2, 2, 2, 2]); // the variant's own, else -w
    for (const v of result.results) {
      assert.equal(v.runs.length, 2);
      for (const run of v.runs) {
        assert.equal(run.rows, 300);
        assert.equal(run.skipped, 0);
        assert.ok(run.seconds > 0 && run.rowsPerSecond > 0);
        assert.ok(run.walBytes > 0, `${v.variant.label} wrote WAL`);
        assert.ok(run.tableBytes > 0);
        assert.ok(run.clientCpuSeconds >= 0);
      }
      assert.ok(v.ratioToFastest > 0 && v.ratioToFastest <= 1);
    }
    assert.equal(Math.max(...result.results.map((x) => x.ratioToFastest)), 1);
    assert.equal(result.results[0]!.pairedRatioToFirst, 1);
    assert.match(result.serverVersion, /^PostgreSQL \d+/);
    assert.doesNotMatch(r.stdout, /password/);
    assert.deepEqual(await tablesLike('orders_cmp%'), []);
    assert.match(r.stderr, /\[10\/10\] insert:row:c0: 300 rows/);
  });

  it('--keep leaves each variant\'s table holding exactly the first --rows rows; the text table names every column', async () => {
    const r = await runCli(['compare', file, '--variants', 'copy,insert:values', '--rows', '250', '--repeat', '1', '--keep', '-w', '2', ...db()]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /variant\s+workers\s+rows\/s\s+min–max rows\/s\s+MB\/s\s+× fastest\s+× copy \(paired\)\s+WAL B\/row\s+client CPU s\s+table size/);
    assert.match(r.stdout, /^copy\s+2\s/m);
    assert.match(r.stdout, /^insert:values\s+2\s/m);
    assert.match(r.stdout, /250 rows from .*orders\.tbl \(first 250 rows\), 1 run each/);
    assert.deepEqual(await tablesLike('orders_cmp%'), ['orders_cmp1', 'orders_cmp2']);
    const expected = tblRecords(content).slice(0, 250);
    for (const t of ['orders_cmp1', 'orders_cmp2']) assert.equal(digest(await tableRecords(client, `${SCHEMA}.${t}`)), digest(expected), t);
    // A second run refuses to drop tables it did not create.
    const again = await runCli(['compare', file, '--variants', 'copy', '--repeat', '1', ...db()]);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /table "it_compare"\."orders_cmp1" already exists/);
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.orders_cmp1`)), digest(expected));
    await client.query(`DROP TABLE ${SCHEMA}.orders_cmp1, ${SCHEMA}.orders_cmp2`);
  });

  it('--report: one series per variant, its median run, sampled from start to end', async () => {
    const report = path.join(dir, 'compare.json');
    const r = await runCli(['compare', file, '--variants', 'copy,insert:values', '--rows', '250', '--repeat', '3', '--keep', '-w', '2', '--report', report, '--json', ...db()]);
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout) as CompareResult;
    const written = JSON.parse(await fs.readFile(report, 'utf8')) as LoadReport;
    assert.equal(reportProblem(written), undefined);
    assert.deepEqual(written.series.map((s) => s.name), ['copy', 'insert:values']);
    for (const [k, s] of written.series.entries()) {
      const runs = [...result.results[k]!.runs].sort((a, b) => a.rowsPerSecond - b.rowsPerSecond);
      assert.equal(s.settings.round, runs[1]!.round, `${s.name}: the median run of 3`);
      assert.equal(s.samples[0]!.rowsLoaded, 0);
      assert.equal(s.samples.at(-1)!.rowsLoaded, 250, `${s.name}: the last sample holds every row`);
      assert.equal(s.spacing?.startMs, 125, `${s.name}: sampled on a timer, as a load is`);
    }
    const expected = tblRecords(content).slice(0, 250);
    for (const t of ['orders_cmp1', 'orders_cmp2']) assert.equal(digest(await tableRecords(client, `${SCHEMA}.${t}`)), digest(expected), t);
    await client.query(`DROP TABLE ${SCHEMA}.orders_cmp1, ${SCHEMA}.orders_cmp2`);
  });

  it('the fresh tables copy the base table\'s keys: --on-conflict skip counts duplicates in every variant', async () => {
    await client.query(`CREATE TABLE ${SCHEMA}.dup (id int PRIMARY KEY, v text)`);
    const dup = path.join(dir, 'dup.csv');
    await fs.writeFile(dup, '1,a\n2,b\n1,a\n3,\n2,b\n');
    const r = await runCli(['compare', dup, '--variants', 'copy,insert:unnest,insert:row', '--repeat', '1', '--on-conflict', 'skip', '--json', ...db()]);
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout) as CompareResult;
    for (const v of result.results) assert.deepEqual([v.runs[0]!.rows, v.runs[0]!.skipped], [3, 2], v.variant.label);
  });

  it('bad --variants exits 2 with the entry, the reason and the syntax', async () => {
    const r = await runCli(['compare', file, '--variants', 'copy,insert:fast', ...db()]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /Expected `--variants` to list load variants, got `insert:fast`: unknown part `fast`/);
    assert.match(r.stderr, /hint: write copy or insert/);
    assert.deepEqual(await tablesLike('orders_cmp%'), []);
  });
});
