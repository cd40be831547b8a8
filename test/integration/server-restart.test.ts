/**
 * Faults of the server itself: restarted with `pg_ctl restart -m immediate` (a crash and
 * crash recovery) and stopped for longer than `--retry-for`. These run on a cluster of
 * their own, started here in a temp dir, so restarting it disturbs no other test file.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { ManagedCluster } from '../../src/cluster/managed-cluster.js';
import { startCli, sleep, type RunningCli } from '../helpers/cli-process.js';
import { damage, lineitemFields, tableRecord, tblLine } from '../helpers/lineitem-data.js';
import { digest, PGSURGE, runCli, tableRecords } from '../helpers/test-db.js';

let tmp: string;
let cluster: ManagedCluster;
let file: string;
let expected: string;

async function query<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<pg.QueryResult<T>> {
  const c = new pg.Client(cluster.connection());
  c.on('error', () => {}); // a crash under the test; the query's own promise says so
  await c.connect();
  try {
    return await c.query<T>(sql, params);
  } finally {
    await c.end();
  }
}

/** Waits until the ledger holds a chunk of the load (or the load has ended, or 20 s went by). */
async function firstChunkCommitted(loadId: string, run: RunningCli): Promise<void> {
  const until = Date.now() + 20_000;
  while (run.child.exitCode === null && Date.now() < until) {
    const n = await query<{ n: number }>('SELECT count(*)::int AS n FROM pgsurge.chunks WHERE load_id = $1', [loadId]).then(
      (r) => r.rows[0]!.n,
      () => 0, // the ledger not made yet
    );
    if (n > 0) return;
    await sleep(20);
  }
}

/** The WAL writer's pid, once the server (started or back from a crash just now) has one. */
async function walWriterPid(): Promise<number> {
  for (let waited = 0; ; waited += 50) {
    const pid = (await query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE backend_type = 'walwriter'")).rows[0]?.pid;
    if (pid !== undefined) return pid;
    assert.ok(waited < 10_000, 'the server has no WAL writer');
    await sleep(50);
  }
}

async function tableDigest(): Promise<{ count: number; digest: string }> {
  const c = new pg.Client(cluster.connection());
  await c.connect();
  try {
    const count = (await c.query('SELECT count(*)::int AS n FROM lineitem')).rows[0].n as number;
    return { count, digest: digest(await tableRecords(c, 'lineitem')) };
  } finally {
    await c.end();
  }
}

before(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-it-restart-'));
  await fs.chmod(tmp, 0o755);
  cluster = await ManagedCluster.open({ dataDir: path.join(tmp, 'data'), pgBin: process.env.PGSURGE_TEST_PG_BIN ?? 'embedded', env: process.env });
  await cluster.start({ fsync: 'off' });
  const rows = lineitemFields(6000);
  const parts = rows.map((f, i) => (i === 4321 ? damage(f, 'bad number', tblLine) : tblLine(f)));
  file = path.join(tmp, 'lineitem.tbl');
  await fs.writeFile(file, Buffer.concat(parts));
  expected = digest(rows.filter((_, i) => i !== 4321).map(tableRecord));
});
after(async () => {
  await cluster.stop().catch(() => undefined);
  await fs.rm(tmp, { recursive: true, force: true });
});

describe(`the server restarts or goes away mid-load (own cluster)`, () => {
  for (const [n, delay] of [
    [1, 100],
    [2, 400],
  ] as const) {
    it(`pg_ctl restart -m immediate ${delay} ms into the load (${n}): the workers retry until it is back; the load ends exact`, async () => {
      // The input comes through stdin a slice at a time over about 3 s, so the load is still
      // under way when the server restarts, however fast it loads what it has (small chunks
      // keep every worker busy with what has come).
      const run = startCli(['load', '-', '-t', 'lineitem', '-f', 'tbl', '--create', '--truncate', '-w', '3', '--chunk-size', '1KB', '--load-id', `restart-${n}`, '--reject-dir', tmp, '--db', cluster.url()], {}, 'pipe');
      const input = await fs.readFile(file);
      const slices = 60;
      let sent = 0;
      const trickle = (async () => {
        for (let i = 1; i <= slices; i++) {
          const end = i === slices ? input.length : input.indexOf(10, Math.floor((input.length * i) / slices)) + 1;
          run.child.stdin!.write(input.subarray(sent, end));
          sent = end;
          await sleep(50);
        }
        run.child.stdin!.end();
      })();
      await run.waitFor(/pgsurge: load restart-/);
      // from the load's first committed chunk: the restart is meant for the workers mid-load, and
      // on a busy machine 100 ms after the banner can still be the set-up (a lost connection there
      // ends the load, exit 1, before any worker could retry)
      await firstChunkCommitted(`restart-${n}`, run);
      await sleep(delay);
      assert.ok(sent < input.length, 'the input still coming when the server restarts');
      await cluster.restart('immediate');
      await trickle;
      const { code } = await run.exited;
      assert.equal(code, 3, run.stderr());
      assert.match(run.stderr(), /lost the connection loading .* retry 1/);
      const t = await tableDigest();
      assert.equal(t.count, 5999);
      assert.equal(t.digest, expected);
    });
  }

  it('a server down for longer than --retry-for: the load stops with the resume command, which then finishes it exactly', async () => {
    const run = startCli(['load', file, '--create', '--truncate', '-w', '3', '--chunk-size', '4KB', '--retry-for', '2s', '--load-id', 'gone', '--db', cluster.url()]);
    await run.waitFor(/pgsurge: load gone/);
    // From the load's first committed chunk, as the restarts above: the server is meant to go
    // away under the workers, not during the set-up (a busy machine can still be there 150 ms
    // after the banner, and a lost connection there ends the load before any worker retries).
    await firstChunkCommitted('gone', run);
    // The table locked from here on holds the workers mid-load, however fast they load, until
    // the server goes (the locking session with it).
    const locker = new pg.Client(cluster.connection());
    locker.on('error', () => {});
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE lineitem IN ACCESS EXCLUSIVE MODE');
    assert.equal(run.child.exitCode, null, 'the load still under way when the server goes');
    await cluster.stop();
    await locker.end().catch(() => undefined);
    const { code } = await run.exited;
    await cluster.start({ fsync: 'off' });
    assert.equal(code, 1, run.stderr());
    assert.match(run.stderr(), /lost the server while loading .*lineitem\.tbl at byte \d+ and could not get it back within 2 s/);
    const m = /resume with: pgsurge (.*)\n/.exec(run.stderr());
    assert.ok(m, run.stderr());
    const committed = await query<{ t: number; l: number }>("SELECT (SELECT count(*) FROM lineitem)::int AS t, (SELECT coalesce(sum(rows_loaded), 0) FROM pgsurge.chunks WHERE load_id = 'gone')::int AS l");
    assert.equal(committed.rows[0]!.t, committed.rows[0]!.l, 'nothing half-committed');
    const args = [...m[1]!.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((x) => (x[1] !== undefined ? x[1].replace(/'\\''/g, "'") : x[2]!));
    assert.ok(args.includes('--resume') && !args.includes('--truncate'));
    const r = await runCli(args);
    assert.equal(r.code, 3, r.stderr);
    const t = await tableDigest();
    assert.equal(t.count, 5999);
    assert.equal(t.digest, expected);
  });

  it("a chunk committed without waiting for its WAL flush, then lost in a crash before the flush, is loaded again (not counted as loaded)", async () => {
    // The WAL writer is stopped, so the held chunk's commit record stays in the server's WAL
    // buffers; killing the WAL writer then crashes the server (every backend ends, shared
    // memory is reset), and crash recovery comes back without that commit. The background
    // writer and the checkpointer are stopped too: writing out a dirty page of the table
    // first writes the WAL up to it, and the page of WAL it is on (the commit record with it).
    const pidsOf = async (types: readonly string[]): Promise<number[]> =>
      (await query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE backend_type = ANY($1::text[])', [types])).rows.map((r) => r.pid);
    const rows = lineitemFields(1200);
    const input = Buffer.concat(rows.map(tblLine));
    const cut = input.indexOf(10, 100 * 1024) + 1; // the first 64 KB chunk is complete, the rest waits for more input
    assert.ok(cut > 0 && cut < input.length);
    await query('DROP TABLE IF EXISTS lineitem');
    const child = spawn(process.execPath, [PGSURGE, 'load', '-', '-t', 'lineitem', '-f', 'tbl', '--create', '-w', '1', '--chunk-size', '64KB', '--load-id', 'unflushed', '--sample-every', 'off', '--db', cluster.url()], {
      stdio: ['pipe', 'pipe', 'pipe'],
      // Without the load's WAL flusher, which would flush the held commit at once: a crash can still come before its
      // flush does (the flusher only makes the window short), and that is the case this test builds.
      env: { ...process.env, PGSURGE_WAL_FLUSHER: '0' },
    });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    // A failed assertion leaves the load waiting for the rest of its stdin: it is killed, so the test file ends.
    try {
      const walWriter = await walWriterPid();
      const others = await pidsOf(['background writer', 'checkpointer', 'autovacuum launcher']);
      for (const pid of [walWriter, ...others]) process.kill(pid, 'SIGSTOP');
      try {
        child.stdin.write(input.subarray(0, cut));
        let chunks = 0;
        for (let waited = 0; chunks === 0; waited += 50) {
          assert.ok(waited < 20_000, `no chunk committed; stderr:\n${stderr}`);
          await sleep(50);
          const ledger = (await query<{ ok: boolean }>("SELECT to_regclass('pgsurge.chunks') IS NOT NULL AS ok")).rows[0]!.ok;
          if (ledger) chunks = (await query<{ n: number }>("SELECT count(*)::int AS n FROM pgsurge.chunks WHERE load_id = 'unflushed'")).rows[0]!.n;
        }
        assert.equal(chunks, 1);
      } finally {
        // The crash: the postmaster tells every other process to quit at once; the stopped ones quit as they wake.
        try {
          process.kill(walWriter, 'SIGKILL');
        } catch {
          // gone already: the others are woken all the same
        }
        for (const pid of others) {
          try {
            process.kill(pid, 'SIGCONT');
          } catch {
            // gone already
          }
        }
      }
      // Crash recovery: the commit was never written, so the chunk is gone from table and ledger alike.
      for (let waited = 0; ; waited += 100) {
        const back = await query<{ n: number }>("SELECT count(*)::int AS n FROM pgsurge.chunks WHERE load_id = 'unflushed'").catch(() => undefined);
        if (back !== undefined) {
          assert.equal(back.rows[0]!.n, 0, 'the unflushed commit survived the crash: the test did not crash the server before the flush');
          break;
        }
        assert.ok(waited < 30_000, 'the server did not come back');
        await sleep(100);
      }
      child.stdin.end(input.subarray(cut));
      const code = await exited;
      assert.equal(code, 0, stderr);
      assert.match(stderr, /at byte 0: a chunk whose WAL had not reached disk yet was lost with the server; loading it again/);
      assert.match(stdout, /loaded 1,200 of 1,200 rows/);
      const t = await tableDigest();
      assert.equal(t.count, 1200);
      assert.equal(t.digest, digest(rows.map(tableRecord)));
      // The ledger holds each byte range once: the reloaded chunk, then the rest.
      const ledger = await query<{ l: number; bytes: number; gaps: number }>(
        `SELECT sum(rows_loaded)::int AS l, sum(byte_end - byte_start)::int AS bytes,
                count(*) FILTER (WHERE byte_start <> coalesce(prev_end, 0))::int AS gaps
           FROM (SELECT *, lag(byte_end) OVER (ORDER BY byte_start) AS prev_end FROM pgsurge.chunks WHERE load_id = 'unflushed') c`,
      );
      assert.deepEqual(ledger.rows[0], { l: 1200, bytes: input.length, gaps: 0 });
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });

  it('--on-conflict update by key lanes, --no-ledger: the rows of a load that ended are on disk (a crash right after it loses none)', async () => {
    // The lanes' parts commit without waiting for their WAL flush; without a ledger row after them, something else must flush.
    await query('DROP TABLE IF EXISTS lanes_nl');
    await query('CREATE TABLE lanes_nl (id int PRIMARY KEY, v text)');
    const lines = Array.from({ length: 3000 }, (_, i) => `${(i * 7) % 500}\tr${i}`);
    const input = path.join(tmp, 'lanes-no-ledger.txt');
    await fs.writeFile(input, lines.join('\n') + '\n');
    const last = new Map<number, string>();
    for (const l of lines) last.set(Number(l.split('\t')[0]), l.split('\t')[1]!);
    const stopped = await walWriterPid();
    process.kill(stopped, 'SIGSTOP');
    try {
      const r = await runCli(['load', input, '-t', 'lanes_nl', '-f', 'text', '--on-conflict', 'update', '--no-ledger', '-w', '2', '--chunk-size', '2KB', '--sample-every', 'off', '--db', cluster.url(), '-q'], { env: { PGSURGE_WAL_FLUSHER: '0' } });
      assert.equal(r.code, 0, r.stderr);
    } finally {
      // A crash: every backend ends, shared memory (the WAL buffers) is reset, crash recovery replays what reached the WAL files.
      process.kill(stopped, 'SIGKILL');
    }
    let rows: { id: number; v: string }[] | undefined;
    for (let waited = 0; rows === undefined; waited += 100) {
      assert.ok(waited < 30_000, 'the server did not come back');
      await sleep(100);
      rows = await query<{ id: number; v: string }>('SELECT id, v FROM lanes_nl ORDER BY id').then(
        (q) => q.rows,
        () => undefined,
      );
    }
    assert.deepEqual(rows.map((row) => `${row.id}:${row.v}`), [...last.entries()].sort((a, b) => a[0] - b[0]).map(([id, v]) => `${id}:${v}`));
  });
});
