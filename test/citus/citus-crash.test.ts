import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { CITUS_NODE_SETTINGS, CITUS_PG_BIN } from '../../src/cluster/citus-cluster.js';
import { ManagedCluster } from '../../src/cluster/managed-cluster.js';
import { citusLineitem, citusUrl, closeCitusSchema, openCitusSchema, workerNodes } from '../helpers/citus-db.js';
import { startCli, sleep } from '../helpers/cli-process.js';
import { lineitemFields, prng, tableRecord, tblLine } from '../helpers/lineitem-data.js';
import { digest, runCli, tableRecords } from '../helpers/test-db.js';

const SCHEMA = 'ct_crash';
let client: pg.Client;
let dir: string;

before(async () => {
  ({ client, dir } = await openCitusSchema(SCHEMA, 'pgsurge-ct-crash-'));
});
after(async () => {
  await closeCitusSchema(SCHEMA, client, dir);
});

const target = (): string[] => ['--db', citusUrl(), '--schema', SCHEMA];

const distributed = (name: string): Promise<void> => citusLineitem(client, SCHEMA, name, 'distributed');

async function input(name: string, rows: number): Promise<{ file: string; expected: string }> {
  const fields = lineitemFields(rows);
  const file = path.join(dir, name);
  await fs.writeFile(file, Buffer.concat(fields.map(tblLine)));
  return { file, expected: digest(fields.map(tableRecord)) };
}

/** The table after Citus settled what a crash left prepared (two-phase commits the coordinator had committed). */
async function settledDigest(table: string): Promise<{ count: number; digest: string }> {
  // The first try may meet this session's cached connection to a worker that was killed since: Citus drops it, the second try opens a new one.
  await client.query('SELECT recover_prepared_transactions()').catch(() => client.query('SELECT recover_prepared_transactions()'));
  const count = (await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.${table}`)).rows[0].n as number;
  return { count, digest: digest(await tableRecords(client, `${SCHEMA}.${table}`)) };
}

describe('exactly once on Citus across crashes', () => {
  it('kill -9 of pgsurge at random moments, then --resume: the distributed table equals the input, once', async () => {
    const { file, expected } = await input('killed.tbl', 8000);
    const random = prng(20261201);
    for (let round = 0; round < 3; round++) {
      await distributed('killed');
      const loadId = `ct-kill-${round}`;
      const run = startCli(['load', file, '-t', 'killed', '-w', '2', '--chunk-size', '8KB', '--load-id', loadId, ...target()]);
      await run.waitFor(/pgsurge: load ct-kill-\d+/);
      await sleep(100 + Math.floor(random() * 600));
      run.child.kill('SIGKILL');
      await run.exited;
      const resumed = await runCli(['load', file, '-t', 'killed', '-w', '2', '--chunk-size', '8KB', '--load-id', loadId, ...(round === 0 ? [] : ['--resume']), ...target()]);
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.deepEqual(await settledDigest('killed'), { count: 8000, digest: expected }, `round ${round}`);
    }
  });

  it('kill -9 of a worker node\'s postmaster mid-load, the node restarted, then --resume: the input exactly once', async () => {
    const { file, expected } = await input('worker.tbl', 12000);
    await distributed('worker');
    const worker = (await workerNodes(client))[0]!;
    const dataDir = (await client.query<{ result: string }>("SELECT result FROM run_command_on_workers('SHOW data_directory') WHERE nodeport = $1", [worker.port])).rows[0]!.result;
    const run = startCli(['load', file, '-t', 'worker', '-w', '2', '--chunk-size', '4KB', '--load-id', 'ct-worker', '--retry-for', '2s', ...target()]);
    await run.waitFor(/pgsurge: load ct-worker/);
    for (let i = 0; i < 100; i++) {
      const n = (await client.query("SELECT count(*)::int AS n FROM pgsurge.chunks WHERE load_id = 'ct-worker'")).rows[0].n as number;
      if (n >= 3) break;
      await sleep(20);
    }
    const pid = Number((await fs.readFile(path.join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    process.kill(pid, 'SIGKILL');
    await run.exited;
    // Until the dead postmaster is reaped, `pg_ctl status` still sees it and start() would think it running.
    for (let i = 0; i < 100; i++) {
      try {
        process.kill(pid, 0);
        await sleep(100);
      } catch {
        break;
      }
    }
    // The node comes back (its orphaned backends end first; until then its shared memory is in use).
    const node = await ManagedCluster.open({ dataDir, pgBin: CITUS_PG_BIN, port: worker.port, env: process.env });
    for (let attempt = 0; ; attempt++) {
      try {
        if ((await node.start({ ...CITUS_NODE_SETTINGS, fsync: 'off' })) || attempt >= 30) break;
        await sleep(500);
      } catch (error) {
        if (attempt >= 30) throw error;
        await sleep(500);
      }
    }
    const resumed = await runCli(['load', file, '-t', 'worker', '-w', '2', '--chunk-size', '4KB', '--load-id', 'ct-worker', '--resume', ...target()]);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.deepEqual(await settledDigest('worker'), { count: 12000, digest: expected });
  });
});
