import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ManagedCluster } from '../../src/cluster/managed-cluster.js';
import { digest, runCli, tableRecords, tblRecords, testUrl } from '../helpers/test-db.js';
import { clusterTempDir, openCluster, removeClusterDir, TEST_PG_BIN, withClient } from '../helpers/temp-cluster.js';

/** lineitem-shaped `.tbl` rows. */
function lineitemTbl(n: number, seed = 0): string {
  const out: string[] = [];
  for (let i = 1; i <= n; i++) {
    const k = i + seed;
    const day = String((k % 28) + 1).padStart(2, '0');
    out.push(`${k}|${k % 200}|${k % 10}|${(k % 7) + 1}|${(k % 50) + 1}.00|${(k * 7.31).toFixed(2)}|0.0${k % 10}|0.0${k % 8}|R|O|1995-03-${day}|1995-04-${day}|1995-05-${day}|DELIVER IN PERSON|TRUCK|c${'x'.repeat(k % 30)}|`);
  }
  return out.join('\n') + '\n';
}

let dir: string;
const clusters: ManagedCluster[] = [];
before(async () => {
  dir = await clusterTempDir('pgsurge-it-wal-');
});
after(async () => {
  await removeClusterDir(dir, ...clusters);
});

/** A fresh, running cluster holding table t with `rows` rows; returns it and the rows' digest. */
async function clusterWithRows(name: string, rows = 1000): Promise<{ cluster: ManagedCluster; dataDir: string; expected: string }> {
  const dataDir = path.join(dir, name, 'data');
  await fs.mkdir(path.dirname(dataDir), { recursive: true });
  await fs.chmod(path.dirname(dataDir), 0o755);
  const cluster = await openCluster(dataDir);
  clusters.push(cluster);
  await cluster.start();
  await withClient(cluster, async (c) => {
    await c.query('CREATE TABLE t (id int PRIMARY KEY, body text)');
    await c.query("INSERT INTO t SELECT g, repeat('w', g % 50) FROM generate_series(1, $1::int) g", [rows]);
  });
  const expected = await withClient(cluster, async (c) => digest(await tableRecords(c, 't')));
  return { cluster, dataDir, expected };
}

/** The rows survived, and a new write and CHECKPOINT land in the WAL directory we expect. */
async function expectIntactAndWalIn(cluster: ManagedCluster, expected: string, walDir: string): Promise<void> {
  await withClient(cluster, async (c) => {
    assert.equal(digest(await tableRecords(c, 't')), expected, 'the table is as it was');
    await c.query('INSERT INTO t VALUES (-1, $1)', ['after']);
    await c.query('DELETE FROM t WHERE id = -1');
    await c.query('CHECKPOINT');
    const seg = (await c.query<{ s: string }>('SELECT pg_walfile_name(pg_current_wal_lsn()) AS s')).rows[0]!.s;
    assert.ok(existsSync(path.join(walDir, seg)), `the segment being written (${seg}) is in ${walDir}`);
  });
}

const move = (dataDir: string, to: string, ...more: string[]) => runCli(['wal', 'move', '--data-dir', dataDir, '--to', to, '--pg-bin', TEST_PG_BIN, ...more]);

describe('managed cluster with --wal-dir', () => {
  it('pg_wal is a symlink to the directory, a load writes its WAL there, and a new --wal-dir moves it', async () => {
    const dataDir = path.join(dir, 'walled', 'data');
    const walDir = path.join(dir, 'walled', 'wal');
    await fs.mkdir(path.dirname(dataDir), { recursive: true });
    await fs.chmod(path.dirname(dataDir), 0o755);
    const cluster = await openCluster(dataDir);
    clusters.push(cluster);
    const started = await runCli(['cluster', 'start', '--data-dir', dataDir, '--wal-dir', walDir, '--pg-bin', TEST_PG_BIN]);
    assert.equal(started.code, 0, started.stderr);
    const link = await fs.lstat(path.join(dataDir, 'pg_wal'));
    assert.ok(link.isSymbolicLink(), 'pg_wal is a symlink');
    assert.equal(await fs.readlink(path.join(dataDir, 'pg_wal')), walDir);

    const content = lineitemTbl(20000);
    const file = path.join(dir, 'walled', 'lineitem.tbl');
    await fs.writeFile(file, content);
    const lsn = async (): Promise<string> => withClient(cluster, async (c) => (await c.query<{ l: string }>('SELECT pg_current_wal_lsn()::text AS l')).rows[0]!.l);
    const before = await lsn();
    const r = await runCli(['load', file, '--create', '-w', '2', '--chunk-size', '256KB', '--data-dir', dataDir, '--pg-bin', TEST_PG_BIN, '-q']);
    assert.equal(r.code, 0, r.stderr);
    await withClient(cluster, async (c) => {
      assert.equal(digest(await tableRecords(c, 'lineitem')), digest(tblRecords(content)), 'rows and content');
      const grew = Number((await c.query<{ b: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::text AS b', [before])).rows[0]!.b);
      assert.ok(grew > content.length / 2, `the load wrote WAL (${grew} bytes for a ${content.length}-byte file)`);
      const seg = (await c.query<{ s: string }>('SELECT pg_walfile_name(pg_current_wal_lsn()) AS s')).rows[0]!.s;
      assert.ok(existsSync(path.join(walDir, seg)), `the current segment ${seg} is in --wal-dir`);
    });
    const where = await runCli(['wal', 'where', '--data-dir', dataDir, '--pg-bin', TEST_PG_BIN]);
    assert.equal(where.code, 0, where.stderr);
    assert.match(where.stdout, new RegExp(`WAL directory: +${walDir} \\(pg_wal is a symlink to it\\)`));
    assert.match(where.stdout, /same filesystem/);
    assert.match(where.stdout, /settings \(from the running server\): wal_level=replica/);

    const walDir2 = path.join(dir, 'walled', 'wal2');
    const again = await runCli(['cluster', 'start', '--data-dir', dataDir, '--wal-dir', walDir2, '--pg-bin', TEST_PG_BIN]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /moved the WAL: .*wal → .*wal2/);
    assert.equal(await fs.readlink(path.join(dataDir, 'pg_wal')), walDir2);
    await assert.rejects(fs.stat(walDir), 'the old WAL directory, emptied, is removed');
    await withClient(cluster, async (c) => assert.equal(digest(await tableRecords(c, 'lineitem')), digest(tblRecords(content))));
  });
});

describe('pgsurge wal where --db', () => {
  it('asks the server for its data directory, WAL size and settings, and shows the disk when the data directory is on this machine', async () => {
    const r = await runCli(['wal', 'where', '--db', testUrl()]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^data directory: \/.+/m);
    assert.match(r.stdout, /^WAL size: [\d.]+ (MB|GB|KB) in \d+ files$/m);
    assert.match(r.stdout, /^settings \(from the server\): wal_level=\w+ synchronous_commit=\w+ fsync=\w+ full_page_writes=\w+ max_wal_size=\w+ wal_compression=\w+$/m);
    // The test server runs on this machine: its WAL and disk are visible.
    assert.match(r.stdout, /^WAL directory: +\/.+ \((pg_wal inside the data directory|pg_wal is a symlink to it)\)$/m);
    assert.match(r.stdout, /^WAL and data are on (the same filesystem|different filesystems)/m);
  });
});

describe('pgsurge wal move', () => {
  it('moves the WAL of a stopped cluster, checks it, and leaves it stopped', async () => {
    const { cluster, dataDir, expected } = await clusterWithRows('stopped');
    await cluster.stop();
    const to = path.join(dir, 'stopped', 'newwal');
    const r = await move(dataDir, to);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /pg_wal is now a symlink to .*newwal; checked: a write and a CHECKPOINT went to [0-9A-F]{24}/);
    assert.match(r.stdout, /stopped, as it was/);
    // Both directories are under one temp dir, so on one filesystem: the move works and says it gains nothing.
    assert.match(r.stderr, /warning: .*newwal is on the same filesystem as .*: WAL and data still share the disk\(s\), so the move gains nothing/);
    assert.match(r.stdout, /note: .*newwal is on the same filesystem as the data directory, so this gains nothing/);
    assert.equal(await fs.readlink(path.join(dataDir, 'pg_wal')), to);
    assert.equal((await fs.stat(to)).mode & 0o777, 0o700);
    assert.equal((await fs.stat(to)).uid, (await fs.stat(dataDir)).uid, 'owned by the data directory\'s owner');
    assert.deepEqual((await fs.readdir(dataDir)).filter((n) => n.startsWith('pg_wal.')), [], 'no leftovers');
    assert.equal(await cluster.isRunning(), false);
    await cluster.start();
    await expectIntactAndWalIn(cluster, expected, to);
    // Moved on again: the directory it left, emptied, is removed.
    await cluster.stop();
    const to2 = path.join(dir, 'stopped', 'newerwal');
    const again = await move(dataDir, to2);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await fs.readlink(path.join(dataDir, 'pg_wal')), to2);
    await assert.rejects(fs.stat(to), 'the old WAL directory is gone');
    await cluster.start();
    await expectIntactAndWalIn(cluster, expected, to2);
  });

  it('as root, checks a peer-authentication cluster as its owner (root cannot log in as postgres there)', { skip: process.getuid?.() !== 0 && 'needs root' }, async () => {
    const { cluster, dataDir, expected } = await clusterWithRows('peer');
    await cluster.stop();
    const hba = path.join(dataDir, 'pg_hba.conf');
    const trust = await fs.readFile(hba, 'utf8');
    await fs.writeFile(hba, 'local all all peer\n');
    const to = path.join(dir, 'peer', 'newwal');
    const r = await move(dataDir, to);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /checked: a write and a CHECKPOINT went to [0-9A-F]{24}/);
    assert.equal(await fs.readlink(path.join(dataDir, 'pg_wal')), to);
    await fs.writeFile(hba, trust);
    await cluster.start();
    await expectIntactAndWalIn(cluster, expected, to);
  });

  it('refuses a running server without --restart, and a target that is not empty; with --restart moves it and it runs again', async () => {
    const { cluster, dataDir, expected } = await clusterWithRows('running');
    const to = path.join(dir, 'running', 'newwal');
    const refused = await move(dataDir, to);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /a server is running on .*: add --restart/);
    assert.equal(existsSync(to), false);
    await fs.mkdir(to);
    await fs.writeFile(path.join(to, 'stray'), 'x');
    const notEmpty = await move(dataDir, to, '--restart');
    assert.equal(notEmpty.code, 1);
    assert.match(notEmpty.stderr, /--to .*newwal is not empty \(1 entries\)/);
    await fs.rm(path.join(to, 'stray'));
    assert.ok((await fs.lstat(path.join(dataDir, 'pg_wal'))).isDirectory(), 'still the original pg_wal');

    const r = await move(dataDir, to, '--restart');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /the server is running again/);
    assert.equal(await cluster.isRunning(), true);
    assert.equal(await fs.readlink(path.join(dataDir, 'pg_wal')), to);
    await expectIntactAndWalIn(cluster, expected, to);
  });

  it('rolls back when copying fails (target unwritable, injected): running server, old pg_wal, no target left', async () => {
    const { cluster, dataDir, expected } = await clusterWithRows('copyfail');
    const to = path.join(dir, 'copyfail', 'newwal');
    const r = await move(dataDir, to, '--restart');
    assert.equal(r.code, 0, 'sanity: the move works without injection');
    const back = await move(dataDir, path.join(dir, 'copyfail', 'data', 'pg_wal-inside'), '--restart');
    assert.equal(back.code, 1);
    assert.match(back.stderr, /inside the data directory/);

    const to2 = path.join(dir, 'copyfail', 'newwal2');
    const failed = await runCli(['wal', 'move', '--data-dir', dataDir, '--to', to2, '--pg-bin', TEST_PG_BIN, '--restart'], {
      env: { PGSURGE_TEST_INJECT_FAILURE: 'wal-move:copy' },
    });
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /EACCES: permission denied, copyfile/);
    assert.match(failed.stderr, /everything was put back: the WAL is in .*newwal again and the server runs again/);
    assert.equal(existsSync(to2), false, 'the target pgsurge created is gone');
    assert.equal(await fs.readlink(path.join(dataDir, 'pg_wal')), to, 'pg_wal points where it did');
    assert.ok((await fs.readdir(to)).some((n) => /^[0-9A-F]{24}$/.test(n)), 'the WAL is still in its directory');
    assert.equal(await cluster.isRunning(), true);
    await expectIntactAndWalIn(cluster, expected, to);
  });

  it('rolls back when the server fails to start (injected): old pg_wal directory, target emptied, still stopped, data intact', async () => {
    const { cluster, dataDir, expected } = await clusterWithRows('startfail');
    await cluster.stop();
    const to = path.join(dir, 'startfail', 'newwal');
    await fs.mkdir(to);
    const failed = await runCli(['wal', 'move', '--data-dir', dataDir, '--to', to, '--pg-bin', TEST_PG_BIN], { env: { PGSURGE_TEST_INJECT_FAILURE: 'wal-move:start' } });
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /did not start/);
    assert.match(failed.stderr, /shared_buffers/);
    assert.match(failed.stderr, /everything was put back/);
    const wal = await fs.lstat(path.join(dataDir, 'pg_wal'));
    assert.ok(wal.isDirectory() && !wal.isSymbolicLink(), 'pg_wal is the original directory again');
    assert.ok((await fs.readdir(path.join(dataDir, 'pg_wal'))).some((n) => /^[0-9A-F]{24}$/.test(n)), 'with its segments');
    assert.ok(existsSync(to), 'a target the user made is kept');
    assert.deepEqual(await fs.readdir(to), [], '... and emptied');
    assert.deepEqual((await fs.readdir(dataDir)).filter((n) => n.startsWith('pg_wal.')), [], 'no leftovers');
    assert.equal(await cluster.isRunning(), false, 'stopped, as it was');
    await cluster.start();
    await expectIntactAndWalIn(cluster, expected, path.join(dataDir, 'pg_wal'));
  });
});
