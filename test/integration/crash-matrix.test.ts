/**
 * The crash matrix: for each writer mode, wire, worker count and table kind, a load is
 * killed at a seeded random moment (kill -9 of pgsurge, or kill -9 of the postmaster),
 * then run again until it ends: the table must equal the input, exactly once, every time.
 * On a cluster of its own (killing the postmaster must not touch the shared test server).
 * Also: a kill -9 during `--durability unsafe` leaves the cluster's settings to the next
 * command, which restores them, loudly.
 */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import type { ManagedCluster } from '../../src/cluster/managed-cluster.js';
import { startCli, sleep } from '../helpers/cli-process.js';
import { prng } from '../helpers/lineitem-data.js';
import { digest, runCli, tableRecords } from '../helpers/test-db.js';
import { clusterTempDir, FIRST_SERVER, openCluster, removeClusterDir, TEST_PG_BIN } from '../helpers/temp-cluster.js';

/** Each dimension of the matrix; the wire is a dimension of COPY only (INSERT binds parameters). */
const MODES = ['copy', 'insert'] as const;
const WIRES: readonly (readonly string[])[] = [['--wire', 'text'], ['--wire', 'binary']];
const WORKERS = [1, 3] as const;
const KINDS = ['regular', 'unlogged'] as const;
const ROWS = 1500;
/**
 * On the other PostgreSQL versions (the runner's later phases) half the matrix: each mode and
 * wire on both table kinds (crash recovery, and its reset of unlogged tables, is the server's),
 * with one worker count, alternating. The first phase runs every cell.
 */
const ON_EVERY_VERSION = (trial: number, workers: number): boolean => FIRST_SERVER || workers === WORKERS[Math.floor(trial / KINDS.length / WORKERS.length) % WORKERS.length];
/** The whole matrix must stay well inside the suite's budget. */
const MATRIX_BUDGET_MS = 150_000;

let tmp: string;
let cluster: ManagedCluster;
let file: string;
let expected: string;

async function withDb<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client(cluster.connection());
  c.on('error', () => {});
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end().catch(() => undefined);
  }
}

/**
 * Up again after a kill of the postmaster: once it is gone (or a zombie: in a container
 * nobody may reap it, and its pid would look alive to pg_ctl), its stale postmaster.pid is
 * removed and the cluster started (crash recovery runs).
 */
async function restartAfterKill(pid: number): Promise<void> {
  for (let waited = 0; ; waited += 100) {
    const state = await fs.readFile(`/proc/${pid}/stat`, 'utf8').then((t) => t.slice(t.lastIndexOf(')') + 2, t.lastIndexOf(')') + 3)).catch(() => 'gone');
    if (state === 'gone' || state === 'Z') break;
    assert.ok(waited < 20_000, `postmaster ${pid} did not end`);
    await sleep(100);
  }
  await fs.rm(path.join(cluster.dataDir, 'postmaster.pid'), { force: true });
  for (let waited = 0; ; waited += 200) {
    try {
      await cluster.start({ fsync: 'off' });
      return;
    } catch (error) {
      // Its backends may still hold the shared memory for a moment.
      if (waited > 20_000) throw error;
      await sleep(200);
      await fs.rm(path.join(cluster.dataDir, 'postmaster.pid'), { force: true });
    }
  }
}

async function postmasterPid(): Promise<number> {
  return Number((await fs.readFile(path.join(cluster.dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
}

before(async () => {
  tmp = await clusterTempDir('pgsurge-it-crash-');
  cluster = await openCluster(path.join(tmp, 'data'));
  await cluster.start({ fsync: 'off' });
  const ids = Array.from({ length: ROWS }, (_, i) => i + 1);
  file = path.join(tmp, 'rows.csv');
  await fs.writeFile(file, ids.map((id) => `${id},value ${id} ${'x'.repeat(id % 40)}\n`).join(''));
  expected = digest(ids.map((id) => `${id}|value ${id} ${'x'.repeat(id % 40)}`));
});
after(async () => {
  await removeClusterDir(tmp, cluster);
});

describe('crash matrix: kill -9 at random moments, then run again: the table equals the input, once', () => {
  const random = prng(15_2026);
  let started: number | undefined;
  let unloggedRan = 0;
  let trial = 0;
  let unloggedCells = 0;
  let resets = 0;
  for (const mode of MODES) {
    for (const wire of mode === 'copy' ? WIRES : [[]]) {
      for (const workers of WORKERS) {
        for (const kind of KINDS) {
          const n = trial++;
          if (!ON_EVERY_VERSION(n, workers)) continue;
          if (kind === 'unlogged') unloggedCells++;
          const name = `${mode}${wire.length > 0 ? ` ${wire.join(' ')}` : ''}, -w ${workers}, ${kind} table: kill -9 of the postmaster, then of pgsurge`;
          it(name, async (t) => {
            // Bounded: on a machine too busy to finish the matrix in its budget, the rest is skipped (and says so).
            started ??= Date.now();
            if (Date.now() - started > MATRIX_BUDGET_MS) return t.skip(`over the matrix's ${MATRIX_BUDGET_MS / 1000} s budget`);
            if (kind === 'unlogged') unloggedRan++;
            const table = `t${n}`;
            await withDb((c) => c.query(`DROP TABLE IF EXISTS ${table}; CREATE ${kind === 'unlogged' ? 'UNLOGGED ' : ''}TABLE ${table} (id int, v text)`));
            const args = ['load', file, '-t', table, '-f', 'csv', '--mode', mode, ...wire, '-w', String(workers), '--chunk-size', '4KB', '--retry-for', '20s', '--sample-every', 'off', '--db', cluster.url()];
            const run = startCli(args);
            await run.waitFor(/pgsurge: load /, 30_000);
            const kills: string[] = [];
            // The postmaster first (the load's connections go; it retries on the restarted server), then pgsurge itself.
            await sleep(Math.floor(random() * 200));
            if (run.child.exitCode === null) {
              const pid = await postmasterPid();
              process.kill(pid, 'SIGKILL');
              kills.push('postmaster');
              await restartAfterKill(pid);
            }
            await sleep(Math.floor(random() * 400));
            if (run.child.exitCode === null) {
              run.child.kill('SIGKILL');
              kills.push('pgsurge');
            }
            await run.exited;
            // Run the same command again until it ends: it resumes (or, for an unlogged table crash recovery emptied, loads all again).
            let last = { code: -1 as number | null, stdout: '', stderr: '' };
            for (let again = 0; again < 3 && last.code !== 0; again++) last = await runCli(args);
            assert.equal(last.code, 0, `${run.stderr()}\n---\n${last.stderr}`);
            const state = await withDb(async (c) => {
              const recs = await tableRecords(c, table);
              const ledger = (await c.query(`SELECT coalesce(sum(rows_loaded), 0)::int AS l FROM pgsurge.chunks WHERE table_oid = '${table}'::regclass`)).rows[0].l as number;
              return { count: recs.length, digest: digest(recs), ledger };
            });
            assert.deepEqual(state, { count: ROWS, digest: expected, ledger: ROWS }, `exactly once (killed: ${kills.join(', ') || 'nothing, it ended first'})`);
            if (/crash recovery emptied|is unlogged and is empty/.test(`${run.stderr()}${last.stderr}`)) resets++;
          });
        }
      }
    }
  }
  it('an unlogged table emptied by crash recovery was noticed (and loaded again) at least once', async (t) => {
    if (unloggedRan < Math.ceil((unloggedCells * 2) / 3)) return t.skip('too few unlogged trials ran within the budget');
    if (resets > 0) return;
    // The random kills above may all land before a chunk commits or after the load ends (the
    // machine's pace decides): then kill the postmaster once a chunk is known committed.
    const table = 'unlogged_reset';
    const ids = Array.from({ length: 20_000 }, (_, i) => i + 1);
    const big = path.join(tmp, 'unlogged.csv');
    await fs.writeFile(big, ids.map((id) => `${id},value ${id}\n`).join(''));
    await withDb((c) => c.query(`DROP TABLE IF EXISTS ${table}; CREATE UNLOGGED TABLE ${table} (id int, v text)`));
    const args = ['load', big, '-t', table, '-f', 'csv', '-w', '1', '--chunk-size', '4KB', '--retry-for', '20s', '--sample-every', 'off', '--db', cluster.url()];
    const run = startCli(args);
    await run.waitFor(/pgsurge: load /, 30_000);
    // One session polls the ledger (before the load creates it, the query fails: none committed yet).
    await withDb(async (c) => {
      const committed = async (): Promise<number> =>
        Number((await c.query(`SELECT count(*) AS n FROM pgsurge.chunks WHERE table_oid = to_regclass('${table}')`).catch(() => ({ rows: [{ n: 0 }] }))).rows[0].n);
      for (let waited = 0; (await committed()) === 0; waited += 10) {
        assert.ok(waited < 30_000 && run.child.exitCode === null, 'no chunk committed while the load ran');
        await sleep(10);
      }
    });
    assert.equal(run.child.exitCode, null, 'the load ended before the kill');
    const pid = await postmasterPid();
    process.kill(pid, 'SIGKILL');
    await restartAfterKill(pid);
    await run.exited;
    let last = { code: run.child.exitCode as number | null, stdout: '', stderr: '' };
    for (let again = 0; again < 3 && last.code !== 0; again++) last = await runCli(args);
    assert.equal(last.code, 0, `${run.stderr()}\n---\n${last.stderr}`);
    assert.match(`${run.stderr()}${last.stderr}`, /crash recovery emptied|is unlogged and is empty/);
    const recs = await withDb((c) => tableRecords(c, table));
    assert.equal(recs.length, ids.length);
    assert.equal(digest(recs), digest(ids.map((id) => `${id}|value ${id}`)));
  });
});

describe('--durability unsafe, then kill -9', () => {
  it('the next command that opens the managed cluster restores its normal settings, and says so', async () => {
    await withDb((c) => c.query('DROP TABLE IF EXISTS lineitem'));
    const big = path.join(tmp, 'lineitem.csv');
    const rows = Array.from({ length: 20_000 }, (_, i) => i + 1);
    await fs.writeFile(big, rows.map((id) => `${id},value ${id}\n`).join(''));
    await withDb((c) => c.query('CREATE TABLE lineitem (id int, v text)'));
    const managed = ['--data-dir', cluster.dataDir, '--pg-bin', TEST_PG_BIN];
    const run = startCli(['load', big, '-f', 'csv', '--durability', 'unsafe', '--chunk-size', '4KB', '-w', '1', ...managed]);
    await run.waitFor(/pgsurge: load /, 60_000);
    run.child.kill('SIGKILL');
    await run.exited;
    const settings = (): Promise<{ p: string; w: string }> =>
      withDb(async (c) => (await c.query("SELECT current_setting('full_page_writes') p, current_setting('wal_level') w")).rows[0] as { p: string; w: string });
    assert.deepEqual(await settings(), { p: 'off', w: 'minimal' }, 'left as the killed load had them');
    const r = await runCli(['load', big, '-f', 'csv', '--truncate', '-q', ...managed]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /WARNING: the managed cluster .* was left with --durability unsafe's settings .*; restarted it with its normal settings/);
    assert.deepEqual(await settings(), { p: 'on', w: 'replica' });
    const recs = await withDb((c) => tableRecords(c, 'lineitem'));
    assert.equal(digest(recs), digest(rows.map((id) => `${id}|value ${id}`)));
    // Only once: the marker is gone.
    const again = await runCli(['load', big, '-f', 'csv', '-q', ...managed]);
    assert.doesNotMatch(again.stderr, /WARNING: the managed cluster/);
  });
});
