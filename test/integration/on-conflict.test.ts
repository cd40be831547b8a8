import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { closeTestSchema, digest, freshSchema, openTestSchema, rejectFileOf, runCli, tableRecords, testClient, testUrl } from '../helpers/test-db.js';

/** `--on-conflict skip`: duplicates inside a batch, across batches and chunks, and against rows already there. */
const SCHEMA = 'it_on_conflict';
let client: pg.Client;
let dir: string;
let file: string;

const EXISTING = [3, 40, 77]; // already in the table, with v = 'old'
const FILE_IDS: number[] = [];
// 1..100, then duplicates: right after the first (same batch of 4), far later (another batch, another chunk),
// and of the existing rows; a duplicate carries the same v as its first occurrence, so the result does not
// depend on which copy wins.
for (let id = 1; id <= 100; id++) {
  FILE_IDS.push(id);
  if (id % 10 === 1) FILE_IDS.push(id); // inside one batch
}
for (let id = 5; id <= 100; id += 15) FILE_IDS.push(id); // across batches and chunks
FILE_IDS.push(3, 77); // again, also in the table already

const value = (id: number): string => `v${id} ${'x'.repeat(id % 13)}`;
const fileContent = FILE_IDS.map((id) => `${id}|${value(id)}|`).join('\n') + '\n';
const distinctInFile = new Set(FILE_IDS);
const expectedRecords = [...new Set([...distinctInFile, ...EXISTING])].map((id) => `${id}|${EXISTING.includes(id) ? 'old' : value(id)}`);
const read = FILE_IDS.length;
const loaded = [...distinctInFile].filter((id) => !EXISTING.includes(id)).length;
const skipped = read - loaded;

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-conflict-'));
  file = path.join(dir, 'uk.tbl');
  await fs.writeFile(file, fileContent);
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

async function freshTable(): Promise<void> {
  await client.query(`DROP TABLE IF EXISTS ${SCHEMA}.uk`);
  await client.query(`CREATE TABLE ${SCHEMA}.uk (id int PRIMARY KEY, v text NOT NULL)`);
  for (const id of EXISTING) await client.query(`INSERT INTO ${SCHEMA}.uk VALUES ($1, 'old')`, [id]);
}

const MODES: [string, string[]][] = [
  ['copy', ['--mode', 'copy']],
  ['insert:unnest', ['--mode', 'insert', '--batch-rows', '4']],
  ['insert:values', ['--mode', 'insert', '--insert-style', 'values', '--batch-rows', '4']],
  ['insert:row', ['--mode', 'insert', '--insert-style', 'row', '--batch-rows', '4']],
];

describe('--on-conflict skip', () => {
  it(`the file has ${read} rows: ${loaded} new, ${skipped} duplicates (the test's own arithmetic)`, () => {
    assert.equal(read, 100 + 10 + 7 + 2);
    assert.equal(loaded, 97);
    assert.equal(skipped, 22);
  });

  for (const [name, args] of MODES) {
    for (const workers of ['1', '2']) {
      it(`${name}, ${workers} worker(s): read = loaded + skipped, and the table holds each key once, old rows untouched`, async () => {
        await freshTable();
        const r = await runCli(['load', file, '--schema', SCHEMA, '--db', testUrl(), '--chunk-size', '300', '-w', workers, '--on-conflict', 'skip', ...args]);
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, /table\s+read\s+loaded\s+rejected\s+skipped/);
        assert.match(r.stdout, new RegExp(`uk\\s+${read}\\s+${loaded}\\s+0\\s+${skipped}\\s`));
        assert.match(r.stdout, new RegExp(`loaded ${loaded} of ${read} rows read \\(read ${read} = loaded ${loaded} \\+ rejected 0 \\+ skipped ${skipped}\\)`));
        const rows = await tableRecords(client, `${SCHEMA}.uk`);
        assert.equal(rows.length, distinctInFile.size + EXISTING.filter((id) => !distinctInFile.has(id)).length);
        assert.equal(digest(rows), digest(expectedRecords));
      });
    }
  }

  for (const [name, args] of MODES) {
    it(`${name} without skip: each duplicate is rejected with the server's message, the rest loads`, async () => {
      await freshTable();
      const rejectDir = path.join(dir, `dup-${name.replace(/\W/g, '_')}`);
      const r = await runCli(['load', file, '--schema', SCHEMA, '--db', testUrl(), '-w', '1', '--reject-dir', rejectDir, ...args]);
      assert.equal(r.code, 3, r.stderr);
      // The same rows stay out as with --on-conflict skip, now counted as rejected: read = loaded + rejected.
      assert.match(r.stdout, new RegExp(`uk\\s+${read}\\s+${loaded}\\s+${skipped}\\s+0\\s`));
      const log = (await fs.readFile(`${rejectFileOf(r)}.log`, 'utf8')).trim().split('\n').slice(2);
      assert.equal(log.length, skipped);
      for (const line of log) assert.match(line, /\t23505\t.*duplicate key value violates unique constraint "uk_pkey"/);
      assert.equal(digest(await tableRecords(client, `${SCHEMA}.uk`)), digest(expectedRecords));
    });
  }

  for (const [name, args] of MODES.slice(0, 3)) {
    it(`${name}: two workers inserting the same keys in opposite orders (a deadlock for the server) still load each key once`, async () => {
      await client.query(`DROP TABLE IF EXISTS ${SCHEMA}.dl`);
      await client.query(`CREATE TABLE ${SCHEMA}.dl (id int PRIMARY KEY)`);
      const n = 3000;
      const up = Array.from({ length: n }, (_, i) => `${i + 1}`);
      const lines = [...up, ...[...up].reverse()];
      const dl = path.join(dir, 'dl.txt');
      await fs.writeFile(dl, lines.join('\n') + '\n');
      const size = Buffer.byteLength(up.join('\n') + '\n');
      const r = await runCli(['load', dl, '--schema', SCHEMA, '--db', testUrl(), '-q', '-w', '2', '--chunk-size', String(size), '--on-conflict', 'skip', ...args.filter((a) => a !== '4'), ...(args.includes('--batch-rows') ? ['100000'] : [])]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`read ${(2 * n).toLocaleString('en-US')} = loaded ${n.toLocaleString('en-US')} \\+ rejected 0 \\+ skipped ${n.toLocaleString('en-US')}`));
      const got = await client.query(`SELECT count(*)::int AS n, count(DISTINCT id)::int AS d, min(id) AS lo, max(id) AS hi FROM ${SCHEMA}.dl`);
      assert.deepEqual(got.rows[0], { n, d: n, lo: 1, hi: n });
    });
  }

  it('a bad --on-conflict value exits 2 naming the flag', async () => {
    const r = await runCli(['load', file, '--on-conflict', 'ignore']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /Expected `--on-conflict` to be one of error, reject, skip, update, got `ignore`/);
  });
});
