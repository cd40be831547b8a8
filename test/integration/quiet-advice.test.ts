import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { reportFromHtml } from '../../src/report/report-html.js';
import type { LoadReport } from '../../src/report/report-data.js';
import { closeTestSchema, digest, openTestSchema, runCli, tableRecords, testUrl } from '../helpers/test-db.js';

const SCHEMA = 'it_quiet';
let client: pg.Client;
let dir: string;

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-quiet-'));
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

const target = (): string[] => ['--db', testUrl(), '--schema', SCHEMA];
const lines = (text: string): string[] => text.split('\n').filter((l) => l !== '');

/** A table of bigint, integer and text, and a text file of its rows (`bad` lines have a key that is no number). */
async function input(table: string, rows: number, bad: readonly number[] = []): Promise<{ file: string; good: string[] }> {
  await client.query(`CREATE TABLE ${SCHEMA}.${table} (id bigint, n integer, note text)`);
  const all = Array.from({ length: rows }, (_, i) => (bad.includes(i) ? `x${i}\t${i}\tnote ${i}` : `${i}\t${i * 7}\tnote ${i}`));
  const file = path.join(dir, `${table}.txt`);
  await fs.writeFile(file, all.join('\n') + '\n');
  return { file, good: all.filter((_, i) => !bad.includes(i)) };
}

describe('-q: the one summary line, and what went wrong', () => {
  it('a successful load under -q prints exactly one line in all, the totals with the load id', async () => {
    const { file, good } = await input('q_ok', 5);
    const r = await runCli(['load', file, '-t', 'q_ok', '-f', 'text', '-q', ...target()]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.equal(lines(r.stdout).length, 1, r.stdout);
    assert.match(r.stdout, /^loaded 5 of 5 rows read in [\d.]+ s with \d+ workers? into .*; load id q_ok-\w+\n$/);
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.q_ok`, '(FORMAT text)')), digest(good));
  });

  it('a load with rejects under -q prints that line, and where the rejects are', async () => {
    const { file, good } = await input('q_rej', 50, [7, 30]);
    const r = await runCli(['load', file, '-t', 'q_rej', '-f', 'text', '-q', ...target()]);
    assert.equal(r.code, 3, r.stderr);
    assert.deepEqual(lines(r.stdout).length, 1, r.stdout);
    assert.match(r.stdout, /^loaded 48 of 50 rows read \(read 50 = loaded 48 \+ rejected 2 \+ skipped 0\)/);
    assert.deepEqual(lines(r.stderr).length, 1, r.stderr);
    const reject = /see (\S+\.rejects) and its \.log/.exec(r.stderr)?.[1];
    assert.ok(reject, r.stderr);
    assert.equal(lines(await fs.readFile(reject, 'utf8')).length, 2);
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.q_rej`, '(FORMAT text)')), digest(good));
  });
});

describe('--report once per kind', () => {
  it('--report a.json --report b.html --report c.csv writes all three, of the one load', async () => {
    const { file } = await input('r_three', 3000);
    const [json, html, csv] = ['a.json', 'b.html', 'c.csv'].map((f) => path.join(dir, f));
    const r = await runCli(['load', file, '-t', 'r_three', '-f', 'text', '--sample-every', '1k', '--chunk-size', '16KB', '--report', json!, '--report', html!, '--report', csv!, ...target()]);
    assert.equal(r.code, 0, r.stderr);
    const fromJson = JSON.parse(await fs.readFile(json!, 'utf8')) as LoadReport;
    const fromHtml = reportFromHtml(await fs.readFile(html!, 'utf8')) as LoadReport;
    assert.deepEqual(fromHtml, fromJson);
    assert.equal(fromJson.series[0]!.samples.at(-1)!.rowsLoaded, 3000);
    assert.ok(lines(await fs.readFile(csv!, 'utf8')).length > 1);
    assert.match(r.stderr, new RegExp(`report: ${json}, ${html}, ${csv}`));
  });

  it('a second --report of the same kind is refused at the start, naming both, exit 2, nothing loaded', async () => {
    await client.query(`CREATE TABLE ${SCHEMA}.r_twice (id bigint, n integer, note text)`);
    const r = await runCli(['load', path.join(dir, 'r_three.txt'), '-t', 'r_twice', '-f', 'text', '--report', 'one.html', '--report', 'x.csv', '--report', 'two.htm', ...target()]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--report one\.html.*--report two\.htm.*both HTML/);
    assert.equal((await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.r_twice`)).rows[0].n, 0);
  });
});
