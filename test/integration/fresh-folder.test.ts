import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ROOT_HOME } from '../../src/cluster/default-home.js';
import { runCli } from '../helpers/test-db.js';
import { TEST_PG_BIN } from '../helpers/temp-cluster.js';

/**
 * A newcomer's first commands, in a fresh empty folder, with the default data directory
 * (`.pgsurge/cluster` there, in a checkout): as root the server runs as `postgres`, which
 * must reach it. And under a 0700 parent, where it cannot: the commands say where the
 * cluster goes instead, or what to do, in one line.
 */
const asRoot = process.getuid?.() === 0;
let top: string;
let fresh: string;
const region = Array.from({ length: 300 }, (_, i) => `${i}|REGION ${i}|a comment ${i}|`).join('\n') + '\n';

before(async () => {
  top = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-it-fresh-'));
  await fs.chmod(top, 0o755);
  fresh = path.join(top, 'fresh');
  await fs.mkdir(fresh);
});
after(async () => {
  await runCli(['cluster', 'stop', '--pg-bin', TEST_PG_BIN], { cwd: fresh }).catch(() => undefined);
  await fs.rm(top, { recursive: true, force: true });
});

// The runner's PG* variables, if any, would make the commands use that server instead.
const env: NodeJS.ProcessEnv = { PGHOST: undefined, PGPORT: undefined, PGUSER: undefined, PGDATABASE: undefined, PGPASSWORD: undefined, PGSERVICE: undefined, PGSURGE_HOME: undefined };

describe('the first commands in a fresh empty folder, default data directory', () => {
  it('cluster start, load --create, decay, cluster stop', async () => {
    const cli = (...args: string[]) => runCli([...args, '--pg-bin', TEST_PG_BIN], { cwd: fresh, env });
    const started = await cli('cluster', 'start');
    assert.equal(started.code, 0, started.stderr);
    const dataDir = path.join(fresh, '.pgsurge', 'cluster');
    assert.match(started.stdout, new RegExp(`started: .* in ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n`));
    const parent = await fs.stat(path.join(fresh, '.pgsurge'));
    assert.equal(parent.mode & 0o005, 0o005, '.pgsurge is searchable by the server account');
    await fs.writeFile(path.join(fresh, 'region.tbl'), region);
    const loaded = await cli('load', 'region.tbl', '--create', '-q');
    assert.equal(loaded.code, 0, loaded.stderr);
    assert.match(loaded.stdout, /^loaded 300 of 300 rows read /);
    const decay = await cli('decay', '--rows', '4000', '--bucket', '1000', '-w', '1', '-q', '--report', 'decay.json');
    assert.equal(decay.code, 0, decay.stderr);
    const report = JSON.parse(await fs.readFile(path.join(fresh, "decay.json"), "utf8")) as { series: { intervals: { rows: number; toRows: number }[] }[] };
    assert.equal(report.series[0]!.intervals.at(-1)!.toRows, 4000, 'the decay loaded its rows');
    const stopped = await cli('cluster', 'stop');
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.match(stopped.stdout, /^stopped /);
  });
});

describe('under a parent the postgres user cannot search (0700)', { skip: !asRoot && 'only root hands the server to another account' }, () => {
  let closed: string;
  before(async () => {
    closed = path.join(top, 'closed', 'work');
    await fs.mkdir(closed, { recursive: true });
    await fs.chmod(path.join(top, 'closed'), 0o700);
  });

  it('the default moves to a place it can reach, and says where', async () => {
    const r = await runCli(['cluster', 'status', '--pg-bin', TEST_PG_BIN], { cwd: closed, env });
    assert.equal(r.code, 3); // not running
    assert.match(r.stdout, new RegExp(`^(not created|stopped|running): ${ROOT_HOME}/cluster `));
    const help = await runCli(['load', '--help'], { cwd: closed, env });
    assert.match(help.stdout, new RegExp(`--data-dir <dir>\\s+data directory of the managed cluster\\s+\\(default:\\s+"${ROOT_HOME}/cluster"\\)`));
  });

  it('a --data-dir there is refused in one line that says what to do', async () => {
    const r = await runCli(['cluster', 'start', '--data-dir', 'here/cluster', '--pg-bin', TEST_PG_BIN], { cwd: closed, env });
    assert.equal(r.code, 1);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, new RegExp(`the postgres user .* cannot reach ${closed}/here/cluster: ${path.join(top, 'closed')} is mode 0700 .*--data-dir ${ROOT_HOME}/cluster.*chmod o\\+x`));
  });
});
