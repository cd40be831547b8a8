import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import type { ManagedCluster } from '../../src/cluster/managed-cluster.js';
import { digest, freshSchema, runCli, tableRecords, tblRecords, testClient, testUrl } from '../helpers/test-db.js';
import { clusterTempDir, openCluster, removeClusterDir, TEST_PG_BIN, withClient } from '../helpers/temp-cluster.js';

const SCHEMA = 'it_durability';
let client: pg.Client;
let dir: string;
const clusters: ManagedCluster[] = [];

function lineitemTbl(n: number): string {
  const out: string[] = [];
  for (let i = 1; i <= n; i++) {
    const day = String((i % 28) + 1).padStart(2, '0');
    out.push(`${i}|${i % 200}|${i % 10}|${(i % 7) + 1}|${(i % 50) + 1}.00|${(i * 7.31).toFixed(2)}|0.0${i % 10}|0.0${i % 8}|A|F|1996-01-${day}|1996-02-${day}|1996-03-${day}|NONE|MAIL|${i % 3 === 0 ? 'ünï ' : ''}${'y'.repeat(i % 40)}|`);
  }
  return out.join('\n') + '\n';
}
const content = lineitemTbl(6000);
const expected = tblRecords(content);
let file: string;

before(async () => {
  client = await testClient();
  await freshSchema(client, SCHEMA);
  await client.query('CREATE EXTENSION IF NOT EXISTS pg_visibility');
  dir = await clusterTempDir('pgsurge-it-durability-');
  file = path.join(dir, 'lineitem.tbl');
  await fs.writeFile(file, content);
});
after(async () => {
  await client.query(`DROP SCHEMA ${SCHEMA} CASCADE`);
  await client.end();
  await removeClusterDir(dir, ...clusters);
});

const onTestServer = (...args: string[]) => runCli(['load', file, '--schema', SCHEMA, '--db', testUrl(), ...args]);

async function expectLoaded(c: pg.Client, table: string): Promise<void> {
  assert.equal((await c.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n, expected.length, 'row count');
  assert.equal(digest(await tableRecords(c, table)), digest(expected), 'content digest');
}

const frozenPages = async (c: pg.Client, table: string): Promise<number> =>
  (await c.query(`SELECT count(*) FILTER (WHERE all_frozen)::int AS n FROM pg_visibility_map($1::regclass)`, [table])).rows[0].n;

describe('--durability on a server named with --db', () => {
  it('unsafe is refused, clearly, and nothing is loaded', async () => {
    const r = await onTestServer('--create', '--durability', 'unsafe', '-t', 'refused');
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--durability unsafe works only on pgsurge's managed cluster, and the target is server (on socket|at) /);
    assert.match(r.stderr, /hint: .*--durability fast/);
    assert.equal((await client.query('SELECT to_regclass($1) AS t', [`${SCHEMA}.refused`])).rows[0].t, null, 'the table was not even created');
  });

  it('a bad preset names the flag and the value', async () => {
    const r = await onTestServer('--durability', 'reckless');
    assert.equal(r.code, 2);
    assert.match(r.stderr, /Expected `--durability` to be one of safe, fast, unsafe, got `reckless`/);
  });

  it('safe: settings untouched, rows not frozen', async () => {
    const r = await onTestServer('--create', '--truncate', '-w', '2', '--chunk-size', '64KB');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /durability: safe; the load ran with .*synchronous_commit=on/);
    assert.match(r.stdout, /a crash could lose: nothing committed/);
    await expectLoaded(client, `${SCHEMA}.lineitem`);
    assert.equal(await frozenPages(client, `${SCHEMA}.lineitem`), 0);
  });

  it('fast: synchronous_commit off in the load\'s sessions; with one worker the first chunk frozen in the transaction that truncated the table', async () => {
    const multi = await onTestServer('--create', '--truncate', '-w', '3', '--chunk-size', '64KB', '--durability', 'fast');
    assert.equal(multi.code, 0, multi.stderr);
    assert.match(multi.stdout, /durability: fast; the load ran with fsync=\w+ full_page_writes=on wal_level=\w+ synchronous_commit=off/);
    assert.match(multi.stdout, /COPY FREEZE not used: .* with 3 workers the other chunks would wait for it/);
    assert.match(multi.stdout, /a crash could lose: no corruption; but .*synchronous_commit=off/);
    await expectLoaded(client, `${SCHEMA}.lineitem`);
    assert.equal(await frozenPages(client, `${SCHEMA}.lineitem`), 0);

    const one = await onTestServer('--truncate', '-w', '1', '--chunk-size', '64KB', '--durability', 'fast');
    assert.equal(one.code, 0, one.stderr);
    const frozen = Number(/COPY FREEZE: ([\d,]+) rows \(the first chunk of "it_durability"\."lineitem"/.exec(one.stdout)?.[1]?.replace(/,/g, ''));
    assert.ok(frozen > 0 && frozen < expected.length, `one chunk's rows frozen, not all: ${frozen}`);
    await expectLoaded(client, `${SCHEMA}.lineitem`);
    const pages = await frozenPages(client, `${SCHEMA}.lineitem`);
    assert.ok(pages > 0, `pages marked all-frozen by COPY FREEZE: ${pages}`);
    // The server's own setting is untouched: only the load's sessions had it off.
    assert.equal((await client.query('SHOW synchronous_commit')).rows[0].synchronous_commit, 'on');
  });

  it('fast on a table the load did not empty: no FREEZE, and it says why', async () => {
    await client.query(`CREATE TABLE ${SCHEMA}.kept (LIKE ${SCHEMA}.lineitem)`);
    const r = await onTestServer('-t', 'kept', '-w', '2', '--chunk-size', '64KB', '--durability', 'fast');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /COPY FREEZE not used: no table was created or truncated by this load/);
    await expectLoaded(client, `${SCHEMA}.kept`);
  });

  it('--unlogged: loaded unlogged, SET LOGGED at the end and timed; refused when the table holds rows it would put at risk', async () => {
    await client.query(`CREATE TABLE ${SCHEMA}.unl (LIKE ${SCHEMA}.lineitem)`);
    await client.query(`INSERT INTO ${SCHEMA}.unl SELECT * FROM ${SCHEMA}.lineitem LIMIT 10`);
    const r = await onTestServer('--truncate', '-t', 'unl', '-w', '2', '--chunk-size', '64KB', '--unlogged', '--durability', 'fast');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /steps around the load: SET LOGGED "it_durability"\."unl" \d+\.\d\d s/);
    assert.match(r.stdout, /load \+ those steps: \d+\.\d\d s, [\d,]+ rows\/s/);
    assert.match(r.stdout, /the table is unlogged until SET LOGGED finishes: a crash before then empties it/);
    assert.equal((await client.query(`SELECT relpersistence FROM pg_class WHERE oid = '${SCHEMA}.unl'::regclass`)).rows[0].relpersistence, 'p');
    await expectLoaded(client, `${SCHEMA}.unl`);

    const refused = await onTestServer('-t', 'unl', '--unlogged');
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /--unlogged would put the rows "it_durability"\."unl" already holds at risk/);
    assert.match(refused.stderr, /hint: add --truncate/);
    await expectLoaded(client, `${SCHEMA}.unl`);
    assert.equal((await client.query(`SELECT relpersistence FROM pg_class WHERE oid = '${SCHEMA}.unl'::regclass`)).rows[0].relpersistence, 'p');
  });
});

describe('dbt3 load --durability', () => {
  it('fast --unlogged with one worker: tables created by the load are frozen (first chunk), loaded unlogged and logged at the end', async () => {
    const d = path.join(dir, 'dbt3');
    await fs.mkdir(d, { recursive: true });
    const region = '0|AFRICA|lar deposits|\n1|AMERICA|hs use ironic|\n2|ASIA|ges. thinly|\n';
    const nation = Array.from({ length: 25 }, (_, i) => `${i}|NATION ${i}|${i % 5}|comment ${i}|`).join('\n') + '\n';
    await fs.writeFile(path.join(d, 'region.tbl'), region);
    await fs.writeFile(path.join(d, 'nation.tbl'), nation);
    const r = await runCli(['dbt3', 'load', d, '--no-keys', '--no-analyze', '--schema', SCHEMA, '--db', testUrl(), '-w', '1', '--durability', 'fast', '--unlogged']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /durability: fast \+ unlogged; the load ran with .*synchronous_commit=off/);
    assert.match(r.stdout, /COPY FREEZE: 28 rows \(the first chunk of .*"region".*"nation"|COPY FREEZE: 28 rows \(the first chunk of .*"nation".*"region"/);
    assert.match(r.stdout, /SET LOGGED "it_durability"\."region" [\d.]+ s; SET LOGGED "it_durability"\."nation"|SET LOGGED "it_durability"\."nation" [\d.]+ s; SET LOGGED "it_durability"\."region"/);
    assert.match(r.stdout, /^SET LOGGED "it_durability"\."region" +[\d.]+ +1$/m, 'the phases table counts SET LOGGED');
    for (const [t, text] of [['region', region], ['nation', nation]] as const) {
      assert.equal(digest(await tableRecords(client, `${SCHEMA}.${t}`)), digest(tblRecords(text)), `${t} content`);
      assert.equal((await client.query(`SELECT relpersistence FROM pg_class WHERE oid = '${SCHEMA}.${t}'::regclass`)).rows[0].relpersistence, 'p');
    }
  });
});

describe('--durability unsafe on the managed cluster', () => {
  it('restarts with fsync, full_page_writes off and wal_level minimal for the load, then restores the settings it was started with', async () => {
    const dataDir = path.join(dir, 'unsafe');
    const cluster = await openCluster(dataDir);
    clusters.push(cluster);
    // Started with a setting of its own on the command line: it must come back after the load.
    await cluster.start({ work_mem: '7MB' });
    const r = await runCli(['load', file, '--create', '-w', '2', '--chunk-size', '64KB', '--data-dir', dataDir, '--pg-bin', TEST_PG_BIN, '--durability', 'unsafe', '--unlogged']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /WARNING: .*can CORRUPT THE WHOLE CLUSTER/);
    assert.match(r.stdout, /the load ran with fsync=off full_page_writes=off wal_level=minimal synchronous_commit=off/);
    assert.match(r.stdout, /steps around the load: restart with unsafe settings [\d.]+ s; SET LOGGED "lineitem" [\d.]+ s; restore settings \(restart\) [\d.]+ s; CHECKPOINT [\d.]+ s/);
    assert.match(r.stdout, /settings restored: fsync=on full_page_writes=on wal_level=replica synchronous_commit=on, and a CHECKPOINT taken/);
    assert.match(r.stdout, /a crash could lose: EVERYTHING/);
    assert.equal(await cluster.isRunning(), true, 'left running, as it was');
    await withClient(cluster, async (c) => {
      const s = (await c.query<{ f: string; p: string; w: string; m: string; s: string }>(
        "SELECT current_setting('fsync') f, current_setting('full_page_writes') p, current_setting('wal_level') w, current_setting('work_mem') m, current_setting('max_wal_senders') s",
      )).rows[0]!;
      assert.deepEqual(s, { f: 'on', p: 'on', w: 'replica', m: '7MB', s: '10' });
      assert.equal((await c.query("SELECT relpersistence FROM pg_class WHERE oid = 'lineitem'::regclass")).rows[0].relpersistence, 'p');
      await expectLoaded(c, 'lineitem');
    });
  });
});
