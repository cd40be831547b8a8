/**
 * Faults of the server itself: restarted with `pg_ctl restart -m immediate` (a crash and
 * crash recovery) and stopped for longer than `--retry-for`. These run on a cluster of
 * their own, started here in a temp dir, so restarting it disturbs no other test file.
 */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { ManagedCluster } from '../../src/cluster/managed-cluster.js';
import { startCli, sleep } from '../helpers/cli-process.js';
import { damage, lineitemFields, tableRecord, tblLine } from '../helpers/lineitem-data.js';
import { digest, runCli, tableRecords } from '../helpers/test-db.js';

let tmp: string;
let cluster: ManagedCluster;
let file: string;
let expected: string;

async function query<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<pg.QueryResult<T>> {
  const c = new pg.Client(cluster.connection());
  await c.connect();
  try {
    return await c.query<T>(sql, params);
  } finally {
    await c.end();
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
  cluster = await ManagedCluster.open({ dataDir: path.join(tmp, 'data'), pgBin: process.env.PGSURGE_TEST_PG_BIN ?? 'embedded' });
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
      // Small chunks make the load last a couple of seconds, so the restart lands in the middle of it.
      const run = startCli(['load', file, '--create', '--truncate', '-w', '3', '--chunk-size', '1KB', '--load-id', `restart-${n}`, '--db', cluster.url()]);
      await run.waitFor(/pgsurge: load restart-/);
      await sleep(delay);
      const wasRunning = run.child.exitCode === null;
      await cluster.restart('immediate');
      const { code } = await run.exited;
      assert.equal(code, 3, run.stderr());
      if (wasRunning) assert.match(run.stderr(), /lost the connection loading .* retry 1/);
      const t = await tableDigest();
      assert.equal(t.count, 5999);
      assert.equal(t.digest, expected);
    });
  }

  it('a server down for longer than --retry-for: the load stops with the resume command, which then finishes it exactly', async () => {
    const run = startCli(['load', file, '--create', '--truncate', '-w', '3', '--chunk-size', '4KB', '--retry-for', '2s', '--load-id', 'gone', '--db', cluster.url()]);
    await run.waitFor(/pgsurge: load gone/);
    await sleep(150);
    await cluster.stop();
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
});
