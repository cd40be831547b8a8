import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { createTableSql } from '../../src/datasets/table-ddl.js';
import { startCli, sleep } from '../helpers/cli-process.js';
import { damage, lineitemFields, tableRecord, tblLine } from '../helpers/lineitem-data.js';
import { duckRun, sqlString } from '../helpers/duckdb-parquet.js';
import { closeTestSchema, digest, openTestSchema, runCli, tableRecords, testUrl } from '../helpers/test-db.js';

const SCHEMA = 'it_parts';
let client: pg.Client;
let dir: string;

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-parts-'));
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

const target = (): string[] => ['--db', testUrl(), '--schema', SCHEMA];

/** 6000 lineitem rows, two bad: the file, and the digest the table must end with. */
async function input(name: string): Promise<{ file: string; size: number; expected: string; good: number }> {
  const rows = lineitemFields(6000);
  const bad = new Set([100, 4500]);
  const content = Buffer.concat(rows.map((f, i) => (bad.has(i) ? damage(f, 'bad date', tblLine) : tblLine(f))));
  const file = path.join(dir, name);
  await fs.writeFile(file, content);
  return { file, size: content.length, expected: digest(rows.filter((_, i) => !bad.has(i)).map(tableRecord)), good: rows.length - bad.size };
}

async function emptyTable(table: string): Promise<void> {
  await client.query(`DROP TABLE IF EXISTS ${SCHEMA}.${table}`);
  await client.query(createTableSql('lineitem', SCHEMA)!.replace(/\blineitem\b/, table));
}

async function tableDigest(table: string): Promise<{ count: number; digest: string }> {
  const count = (await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.${table}`)).rows[0].n as number;
  return { count, digest: digest(await tableRecords(client, `${SCHEMA}.${table}`)) };
}

/** The ledger's ranges of a load tile the file once: no gap, no overlap, whichever part wrote them. */
async function assertLedgerTiles(loadId: string, size: number): Promise<Set<string>> {
  const r = await client.query<{ s: string; e: string; part: string }>('SELECT byte_start AS s, byte_end AS e, part FROM pgsurge.chunks WHERE load_id = $1 ORDER BY byte_start', [loadId]);
  let at = 0;
  for (const row of r.rows) {
    assert.equal(Number(row.s), at, `ledger of ${loadId}: a gap or an overlap at byte ${at}`);
    at = Number(row.e);
  }
  assert.equal(at, size);
  return new Set(r.rows.map((row) => row.part));
}

interface StatusJson {
  parts: { part: string | undefined; state: string; running: boolean; rowsLoaded: number; rowsRejected: number; bytesDone: number; bytesTotal: number; lastCommit: string }[];
}

async function status(loadId: string): Promise<StatusJson> {
  const r = await runCli(['status', loadId, '--json', '--db', testUrl()]);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as StatusJson;
}

const partArgs = (file: string, table: string, loadId: string, k: number, workers = '2', chunk = '8KB'): string[] => [
  'load', file, '-t', table, '--part', `${k}/3`, '--load-id', loadId, '-w', workers, '--chunk-size', chunk, ...target(),
];

describe('--part K/N: one load split over several processes', () => {
  it('status says completed for a whole load that loaded all its input, and for each part that covered its share', async () => {
    const { file, size, good } = await input('whole.tbl');
    await emptyTable('whole');
    const r = await runCli(['load', file, '-t', 'whole', '--load-id', 'whole-a', '--chunk-size', '8KB', ...target()]);
    assert.ok(r.code === 0 || r.code === 3, r.stderr);
    const s = await status('whole-a');
    assert.equal(s.parts.length, 1);
    assert.deepEqual({ state: s.parts[0]!.state, loaded: s.parts[0]!.rowsLoaded, done: s.parts[0]!.bytesDone, total: s.parts[0]!.bytesTotal }, { state: 'completed', loaded: good, done: size, total: size });
    const text = await runCli(['status', 'whole-a', '--db', testUrl()]);
    assert.match(text.stdout, /^load whole-a: completed, 1 part, 0 running\n/);
    assert.match(text.stdout, /\nwhole\s+completed\s/);
  });

  it('three parts at once load the input exactly once under one load id; status shows each part done', async () => {
    const { file, size, expected, good } = await input('lineitem.tbl');
    await emptyTable('split');
    const runs = await Promise.all([1, 2, 3].map((k) => runCli(partArgs(file, 'split', 'split-a', k))));
    for (const r of runs) assert.ok(r.code === 0 || r.code === 3, r.stderr);
    assert.deepEqual(await tableDigest('split'), { count: good, digest: expected });
    assert.deepEqual(await assertLedgerTiles('split-a', size), new Set(['1/3', '2/3', '3/3']));
    // Each part rebuilt a reject file of its own from its own ledger rows: the two bad rows, once in all.
    const rejects = await Promise.all([1, 2, 3].map((k) => fs.readFile(path.join(dir, `split.split-a.part${k}of3.rejects`), 'utf8').catch(() => '')));
    assert.equal(rejects.join('').split('\n').filter((l) => l !== '').length, 2);
    const s = await status('split-a');
    assert.deepEqual(s.parts.map((p) => p.part), ['1/3', '2/3', '3/3']);
    assert.equal(s.parts.reduce((a, p) => a + p.rowsLoaded, 0), good);
    assert.equal(s.parts.reduce((a, p) => a + p.rowsRejected, 0), 2);
    assert.equal(s.parts.reduce((a, p) => a + p.bytesTotal, 0), size);
    for (const p of s.parts) {
      assert.equal(p.state, 'completed');
      assert.equal(p.running, false);
      assert.equal(p.bytesDone, p.bytesTotal, `part ${p.part} covered its share`);
      assert.ok(p.lastCommit);
    }
  });

  it('a part killed mid-load resumes on its own while the others finish; status shows it running, then done', async () => {
    const { file, size, expected, good } = await input('lineitem2.tbl');
    await emptyTable('killed');
    // Part 2 is slowed by one worker and small chunks, killed after its first commits.
    const victim = startCli(partArgs(file, 'killed', 'split-b', 2, '1', '300'));
    const others = Promise.all([1, 3].map((k) => runCli(partArgs(file, 'killed', 'split-b', k))));
    await victim.waitFor(/pgsurge: load split-b/);
    for (let i = 0; i < 50; i++) {
      const n = (await client.query("SELECT count(*)::int AS n FROM pgsurge.chunks WHERE load_id = 'split-b' AND part = '2/3'")).rows[0].n as number;
      if (n > 0) break;
      await sleep(20);
    }
    const during = await status('split-b');
    assert.equal(during.parts.find((p) => p.part === '2/3')?.running, true, 'the running part is shown running');
    victim.child.kill('SIGKILL');
    await victim.exited;
    for (const r of await others) assert.ok(r.code === 0 || r.code === 3, r.stderr);
    const stopped = (await status('split-b')).parts.find((p) => p.part === '2/3')!;
    assert.equal(stopped.running, false);
    assert.equal(stopped.state, 'stopped');
    assert.ok(stopped.bytesDone < stopped.bytesTotal, 'the killed part stopped short of its share');
    const resumed = await runCli([...partArgs(file, 'killed', 'split-b', 2), '--resume']);
    assert.ok(resumed.code === 0 || resumed.code === 3, resumed.stderr);
    assert.match(resumed.stderr, /resuming/);
    assert.deepEqual(await tableDigest('killed'), { count: good, digest: expected });
    await assertLedgerTiles('split-b', size);
    const done = await status('split-b');
    assert.equal(done.parts.reduce((a, p) => a + p.rowsLoaded, 0), good);
    for (const p of done.parts) assert.equal(p.bytesDone, p.bytesTotal);
  });

  it('a file that grew between the runs of its parts: a part is refused, not cut from the new size; a whole run then loads the rest once', async () => {
    await emptyTable('grew');
    const rows = lineitemFields(6000);
    const file = path.join(dir, 'grew.tbl');
    await fs.writeFile(file, Buffer.concat(rows.slice(0, 3000).map((f) => tblLine(f))));
    const args = ['load', file, '--table', 'grew', '--format', 'tbl', ...target()];
    assert.equal((await runCli([...args, '--part', '1/2'])).code, 0);
    await fs.appendFile(file, Buffer.concat(rows.slice(3000).map((f) => tblLine(f))));
    const r2 = await runCli([...args, '--part', '2/2']);
    assert.equal(r2.code, 2, r2.stderr);
    assert.match(r2.stderr, /grew since load \S+ began reading it: --part 2\/2 would cut its share from the new size/);
    const r3 = await runCli(args);
    assert.equal(r3.code, 0, r3.stderr);
    assert.deepEqual(await tableDigest('grew'), { count: 6000, digest: digest(rows.map(tableRecord)) });
  });

  it('refuses --part for an input it cannot cut into byte ranges, naming what the input is (Parquet, CSV, compressed, --skip), exit 2, nothing loaded', async () => {
    await client.query(`CREATE TABLE ${SCHEMA}.kinds (id int, v text)`);
    const parquet = path.join(dir, 'kinds.parquet');
    await duckRun(`COPY (SELECT i::INTEGER id, 'v' || i AS v FROM range(100) r(i)) TO ${sqlString(parquet)} (FORMAT parquet)`);
    const csv = path.join(dir, 'kinds.csv');
    await fs.writeFile(csv, '1,a\n2,b\n');
    const txt = path.join(dir, 'kinds.txt');
    await fs.writeFile(txt, '1\ta\n2\tb\n');
    const cases: [string[], RegExp][] = [
      [[parquet], /kinds\.parquet cannot be: it is Parquet, read by row group, not by byte range/],
      [[csv], /kinds\.csv cannot be: it is CSV, read from its start/],
      [[txt, '--skip', '1'], /kinds\.txt cannot be: --skip and --limit count records from the start/],
    ];
    for (const [args, reason] of cases) {
      const r = await runCli(['load', ...args, '-t', 'kinds', '--part', '1/2', ...target()]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /--part needs inputs that can be cut into byte ranges/);
      assert.match(r.stderr, reason);
    }
    assert.equal((await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.kinds`)).rows[0].n, 0);
  });

  it('refuses --part with --truncate, a whole run beside a running part, and a bad K/N (exit 2)', async () => {
    const { file } = await input('lineitem3.tbl');
    await emptyTable('refused');
    const bad = await runCli(['load', file, '-t', 'refused', '--part', '4/3', ...target()]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--part.*4\/3/);
    const truncate = await runCli(['load', file, '-t', 'refused', '--part', '1/3', '--truncate', ...target()]);
    assert.equal(truncate.code, 2);
    assert.match(truncate.stderr, /--truncate cannot be given with --part/);
    // Each COPY of the part waits 0.2 s, so it is surely still running (holding its locks) when the whole run starts.
    await client.query(`CREATE FUNCTION ${SCHEMA}.slow_copy() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN PERFORM pg_sleep(0.2); RETURN NULL; END$$`);
    await client.query(`CREATE TRIGGER slow BEFORE INSERT ON ${SCHEMA}.refused FOR EACH STATEMENT EXECUTE FUNCTION ${SCHEMA}.slow_copy()`);
    const slow = startCli(['load', file, '-t', 'refused', '--part', '1/2', '--load-id', 'split-c', '-w', '1', '--chunk-size', '1KB', ...target()]);
    await slow.waitFor(/pgsurge: load split-c/);
    const whole = await runCli(['load', file, '-t', 'refused', '--load-id', 'split-c', ...target()]);
    assert.equal(whole.code, 2, whole.stderr);
    assert.match(whole.stderr, /running in another pgsurge/);
    slow.child.kill('SIGKILL');
    await slow.exited;
  });
});
