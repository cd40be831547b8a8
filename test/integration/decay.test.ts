import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { narrowRows } from '../../src/decay/narrow-rows.js';
import { reportFromHtml } from '../../src/report/report-html.js';
import type { LoadReport } from '../../src/report/report-data.js';
import { intervalsOf } from '../../src/metrics/series.js';
import { closeTestSchema, digest, freshSchema, runCli, tableRecords, testClient, testUrl, openTestSchema } from '../helpers/test-db.js';

const SCHEMA = 'it_decay';
let client: pg.Client;
let dir: string;

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-decay-'));
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

async function expectedRecords(rows: number, keys: 'random' | 'sequential', seed = 1): Promise<string[]> {
  const parts: Buffer[] = [];
  for await (const b of narrowRows({ rows, keys, seed })) parts.push(b);
  return Buffer.concat(parts).toString().trimEnd().split('\n');
}

describe('pgsurge decay against a real server', () => {
  it('loads the rows, prints the curve and the knee verdict, writes a JSON report', async () => {
    const report = path.join(dir, 'decay.json');
    const r = await runCli(['decay', '--rows', '60k', '--bucket', '10k', '--chunk-size', '64KB', '--keys', 'random', '--db', testUrl(), '--schema', SCHEMA, '--report', report]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(Number((await client.query(`SELECT count(*) AS n FROM ${SCHEMA}.pgsurge_decay`)).rows[0].n), 60_000);
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.pgsurge_decay`, '(FORMAT text)')), digest(await expectedRecords(60_000, 'random')));
    const key = await client.query(`SELECT count(*)::int AS n FROM pg_index WHERE indrelid = '${SCHEMA}.pgsurge_decay'::regclass AND indisunique`);
    assert.equal(key.rows[0].n, 1, 'the unique key was there during the load');

    assert.match(r.stdout, /rows in table\s+rows\/s\s+MB\/s\s+WAL B\/row\s+table MB\s+index MB/);
    assert.match(r.stdout, /rows \| rows\/s \(full bar = [\d,]+\)/);
    assert.match(r.stdout, /^(knee at .* shared_buffers = \S+\.|no knee: .*shared_buffers = \S+\.)$/m);
    assert.match(r.stdout, /pgsurge_decay\s+60,000/);
    assert.match(r.stdout, new RegExp(`report: ${report.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    assert.match(r.stderr, /load …/);
    assert.match(r.stderr, /60,000 rows 100\.0%/, 'plain progress lines on stderr when not a terminal');
    assert.doesNotMatch(r.stdout + r.stderr, /\x1b\[/);

    const saved = JSON.parse(await fs.readFile(report, 'utf8')) as LoadReport;
    assert.equal(saved.format, 'pgsurge-report');
    assert.equal(saved.series.length, 1);
    const series = saved.series[0]!;
    assert.equal(series.samples[0]!.rowsLoaded, 0);
    assert.equal(series.samples.at(-1)!.rowsLoaded, 60_000);
    assert.ok(series.samples.length >= 6 && series.samples.length <= 8, `a sample per 10k rows: ${series.samples.length}`);
    assert.deepEqual(series.intervals, JSON.parse(JSON.stringify(intervalsOf(series.samples))));
    assert.deepEqual(Object.keys(saved.server.settings).sort(), ['checkpoint_timeout', 'fsync', 'full_page_writes', 'maintenance_work_mem', 'max_wal_size', 'shared_buffers', 'synchronous_commit', 'wal_buffers', 'wal_level']);
    assert.equal(saved.settings.keys, 'random');
    assert.ok('knee' in series);
    assert.deepEqual(series.phases?.map((p) => p.phase), ['generate rows', 'create table', 'load']);
    assert.ok(!saved.command.join(' ').includes('password'));

    // pgsurge report: the JSON back to HTML, with the same data inside
    const html = path.join(dir, 'again.html');
    const again = await runCli(['report', report, '--out', html]);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(reportFromHtml(await fs.readFile(html, 'utf8')), saved);
  });

  it('--index after builds the key after the load; --keys sequential; --json prints NDJSON only', async () => {
    const report = path.join(dir, 'after.csv');
    const r = await runCli(['decay', '--rows', '30k', '--bucket', '10k', '--chunk-size', '64KB', '--keys', 'sequential', '--index', 'after', '--json', '--db', testUrl(), '--schema', SCHEMA, '--table', 'after_t', '--report', report]);
    assert.equal(r.code, 0, r.stderr);
    const events = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const samples = events.filter((e) => e.event === 'sample');
    const summary = events.at(-1)!;
    assert.ok(samples.length >= 3);
    assert.equal(summary.event, 'summary');
    assert.equal((summary.total as { rows: number }).rows, 30_000);
    assert.deepEqual((summary.phases as { phase: string }[]).map((p) => p.phase), ['generate rows', 'create table', 'load', 'build unique key']);
    assert.ok((summary.finalSizes as { indexBytes: number }).indexBytes > 0);
    assert.equal(samples.at(-1)!.indexBytes, 0, 'no index while loading');
    assert.equal(r.stderr, '');
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.after_t`, '(FORMAT text)')), digest(await expectedRecords(30_000, 'sequential')));
    const csv = (await fs.readFile(report, 'utf8')).trimEnd().split('\n');
    assert.equal(csv.length, 1 + samples.length);
    assert.match(csv[0]!, /^series,seconds,rowsLoaded,/);
  });

  it('--mode insert grows the same table through batched INSERT', async () => {
    const r = await runCli(['decay', '--rows', '20000', '--bucket', '5000', '--mode', 'insert', '-w', '2', '--chunk-size', '64KB', '--db', testUrl(), '--schema', SCHEMA, '--table', 'ins_t', '--report', path.join(dir, 'ins.json'), '-q']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.ins_t`, '(FORMAT text)')), digest(await expectedRecords(20_000, 'random')));
    const report = JSON.parse(await fs.readFile(path.join(dir, 'ins.json'), 'utf8')) as { series: { samples: unknown[] }[] };
    assert.ok(report.series[0]!.samples.length >= 4, 'a sample at each 5,000-row bucket');
  });

  it('refuses what it cannot do, with a message that names the flag', async () => {
    const sb = await runCli(['decay', '--rows', '1000', '--shared-buffers', '16MB', '--db', testUrl(), '--schema', SCHEMA]);
    assert.equal(sb.code, 2);
    assert.match(sb.stderr, /--shared-buffers applies only to the managed cluster/);
    const bad = await runCli(['decay', '--keys', 'shuffled', '--db', testUrl()]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /Expected `--keys` to be one of sequential, random, got `shuffled`/);
    const rows = await runCli(['decay', '--rows', 'lots', '--db', testUrl()]);
    assert.match(rows.stderr, /Expected `--rows` to be a row count/);
    assert.equal((await client.query(`SELECT to_regclass('${SCHEMA}.never') AS t`)).rows[0].t, null, 'nothing created');
  });
});

describe('pgsurge load with samples', () => {
  it('--json: NDJSON sample events and a summary on stdout; --report html holds the same samples', async () => {
    const file = path.join(dir, 'narrow_load.txt');
    await fs.writeFile(file, (await expectedRecords(20_000, 'random', 5)).join('\n') + '\n');
    await client.query(`CREATE TABLE ${SCHEMA}.narrow_load (id bigint PRIMARY KEY, val integer, note text)`);
    const html = path.join(dir, 'load.html');
    const r = await runCli(['load', file, '-t', 'narrow_load', '-f', 'text', '--schema', SCHEMA, '--db', testUrl(), '--sample-every', '5k', '--chunk-size', '32KB', '--json', '--report', html]);
    assert.equal(r.code, 0, r.stderr);
    const events = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(events.at(-1)!.event, 'summary');
    assert.equal((events.at(-1)!.total as { rows: number }).rows, 20_000);
    const samples = events.filter((e) => e.event === 'sample');
    assert.equal(samples.at(-1)!.rowsLoaded, 20_000);
    const saved = reportFromHtml(await fs.readFile(html, 'utf8')) as LoadReport;
    assert.deepEqual(
      saved.series[0]!.samples.map((s) => s.rowsLoaded),
      samples.map((s) => s.rowsLoaded),
    );
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.narrow_load`, '(FORMAT text)')), digest(await expectedRecords(20_000, 'random', 5)));
  });

  it('--sample-every off with --report is refused', async () => {
    const r = await runCli(['load', 'nothing.txt', '-t', 'x', '-f', 'text', '--db', testUrl(), '--sample-every', 'off', '--report', 'x.json']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--report needs samples/);
  });
});
