import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ManagedCluster } from '../../src/cluster/managed-cluster.js';
import { digest, runCli, tableRecords, tblRecords, type CliResult } from '../helpers/test-db.js';
import { clusterTempDir, openCluster, removeClusterDir, withClient } from '../helpers/temp-cluster.js';

/**
 * psql's ways of naming a server, against a private cluster that asks for a password
 * (scram-sha-256 on its Unix socket): URL, key=value with quoting, service file, PG*
 * variables, .pgpass. Every output is checked for the password.
 */
const PASSWORD = "Qz7 W'k9@x\\v";
const USER = 'loader';
const DB = 'sales';
let dir: string;
let cluster: ManagedCluster;
let file: string;
const content = Array.from({ length: 500 }, (_, i) => `${i}|REGION ${i}|comment ${'z'.repeat(i % 30)}|`).join('\n') + '\n';
const expected = tblRecords(content);
/** The variables a developer's shell may hold, cleared so each case says what it uses. */
const CLEAN: NodeJS.ProcessEnv = { PGHOST: '', PGPORT: '', PGUSER: '', PGDATABASE: '', PGPASSWORD: '', PGSERVICE: '', PGSERVICEFILE: '', PGPASSFILE: '', PGSSLMODE: '' };
let env: NodeJS.ProcessEnv;

before(async () => {
  dir = await clusterTempDir('pgsurge-it-connections-');
  cluster = await openCluster(path.join(dir, 'data'));
  await cluster.init();
  // The test's own superuser keeps trust; everyone else gives a password.
  await fs.writeFile(path.join(cluster.dataDir, 'pg_hba.conf'), 'local all postgres trust\nlocal all all scram-sha-256\n');
  await cluster.start();
  await withClient(cluster, async (c) => {
    await c.query("SET password_encryption = 'scram-sha-256'");
    await c.query(`CREATE ROLE ${USER} LOGIN PASSWORD '${PASSWORD.replace(/'/g, "''")}'`);
    await c.query(`CREATE DATABASE ${DB} OWNER ${USER}`);
  });
  const { default: pg } = await import('pg');
  const owner = new pg.Client({ ...cluster.connection(DB) });
  await owner.connect();
  await owner.query(`CREATE SCHEMA "My Schema" AUTHORIZATION ${USER}`);
  await owner.query(`CREATE TABLE "My Schema"."Line Item" (r_regionkey int, r_name text, r_comment text)`);
  await owner.query(`ALTER TABLE "My Schema"."Line Item" OWNER TO ${USER}`);
  await owner.end();
  file = path.join(dir, 'region.tbl');
  await fs.writeFile(file, content);
  env = { ...CLEAN, HOME: dir };
});
after(async () => removeClusterDir(dir, cluster));

const socket = (): string => cluster.socketDir;

async function expectLoaded(r: CliResult, table = 'public.region'): Promise<void> {
  assert.equal(r.code, 0, r.stderr);
  assertNoPassword(r);
  const { default: pg } = await import('pg');
  const c = new pg.Client(cluster.connection(DB));
  await c.connect();
  try {
    const records = await tableRecords(c, table);
    assert.equal(records.length, expected.length, 'row count');
    assert.equal(digest(records), digest(expected), 'content digest');
  } finally {
    await c.end();
  }
}

function assertNoPassword(r: CliResult): void {
  for (const piece of ['Qz7', "W'k9", 'k9@x']) assert.ok(!(r.stdout + r.stderr).includes(piece), `the output shows a piece of the password (${piece}):\n${r.stderr}`);
}

const load = (args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<CliResult> =>
  runCli(['load', file, '-t', 'region', '--create', '--truncate', '-q', ...args], { env: { ...env, ...extraEnv } });

describe('naming the server as psql users do, with password authentication', () => {
  it('a URL with a percent-encoded password', async () => {
    const url = `postgresql://${USER}:${encodeURIComponent(PASSWORD)}@/${DB}?host=${encodeURIComponent(socket())}`;
    await expectLoaded(await load(['--db', url]));
  });

  it("a key=value string with a quoted password ('a b\\'c')", async () => {
    const quoted = `'${PASSWORD.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
    await expectLoaded(await load(['--db', `host=${socket()} dbname=${DB} user=${USER} password=${quoted}`]));
  });

  it('a service file: --db service=…, and PGSERVICE', async () => {
    const services = path.join(dir, 'pg_service.conf');
    await fs.writeFile(services, `[other]\nhost=/nowhere\n\n[sales]\nhost=${socket()}\ndbname=${DB}\nuser=${USER}\npassword=${PASSWORD}\n`);
    await expectLoaded(await load(['--db', 'service=sales'], { PGSERVICEFILE: services }));
    await expectLoaded(await load([], { PGSERVICEFILE: services, PGSERVICE: 'sales' }));
    const missing = await load(['--db', 'service=nope'], { PGSERVICEFILE: services });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /definition of service "nope" not found/);
  });

  it('~/.pg_service.conf in the home folder', async () => {
    await fs.writeFile(path.join(dir, '.pg_service.conf'), `[home]\nhost=${socket()}\ndbname=${DB}\nuser=${USER}\npassword=${PASSWORD}\n`);
    await expectLoaded(await load(['--db', 'service=home']));
  });

  it('the PG* variables', async () => {
    await expectLoaded(await load([], { PGHOST: socket(), PGDATABASE: DB, PGUSER: USER, PGPASSWORD: PASSWORD, PGAPPNAME: 'from-env' }));
  });

  it('.pgpass (PGPASSFILE, then ~/.pgpass), refused when others can read it', async () => {
    const line = `localhost:5432:${DB}:${USER}:${PASSWORD.replace(/\\/g, '\\\\').replace(/:/g, '\\:')}\n`;
    const passfile = path.join(dir, 'passfile');
    await fs.writeFile(passfile, `localhost:5432:other:${USER}:wrong\n${line}`, { mode: 0o600 });
    const db = ['--db', `host=${socket()} dbname=${DB} user=${USER}`];
    await expectLoaded(await load(db, { PGPASSFILE: passfile }));
    await fs.writeFile(path.join(dir, '.pgpass'), line, { mode: 0o600 });
    await expectLoaded(await load(db));
    await fs.chmod(path.join(dir, '.pgpass'), 0o644);
    const r = await load(db);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /warning: password file ".*\.pgpass" has group or world access/);
    assert.match(r.stderr, /user "loader": no password supplied \(the server asks for one\)\n  hint: check the user name and password/);
  });

  it('a refused password names the server as psql does, never the password', async () => {
    const r = await load(['--db', `host=${socket()} dbname=${DB} user=${USER} password='${'Qz7'}nope'`]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`cannot connect to server on socket "${socket().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/\\.s\\.PGSQL\\.5432", database "${DB}", user "${USER}": password authentication failed`));
    assert.match(r.stderr, /hint: check the user name and password/);
    assertNoPassword(r);
  });

  it('a malformed URL exits 2 and shows no piece of the password', async () => {
    for (const url of [`postgresql://${USER}:${PASSWORD.replace(' ', '')}@/${DB}`, `postgresql://${USER}:Qz7/k9@x@db1/${DB}`, `postgresql://${USER}:Qz7%zzk9@db1/${DB}`]) {
      const r = await load(['--db', url]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /^pgsurge: --db postgresql:\/\/loader:\*\*\*@/m);
      assertNoPassword(r);
    }
  });

  it('a port out of 1..65535 exits 2 with one line naming the value and where it came from, wherever it is given', async () => {
    const services = path.join(dir, 'port_service.conf');
    await fs.writeFile(services, `[zero]\nhost=${socket()}\nport=0\n`);
    const cases: { args: string[]; env?: NodeJS.ProcessEnv; value: string; from: string }[] = [
      { args: ['--db', `postgresql://${USER}@localhost:65536/${DB}`], value: '65536', from: '--db' },
      { args: ['--db', `host=${socket()} port=0 dbname=${DB}`], value: '0', from: '--db' },
      { args: ['--verbose'], env: { PGHOST: socket(), PGPORT: '70000' }, value: '70000', from: 'PGPORT' },
      { args: ['--db', 'service=zero'], env: { PGSERVICEFILE: services }, value: '0', from: `service "zero" in ${services}` },
    ];
    for (const c of cases) {
      const r = await load(c.args, c.env);
      assert.equal(r.code, 2, `${c.args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stderr, `pgsurge: invalid port number "${c.value}" (from ${c.from}): a port is a whole number from 1 to 65535\n`);
    }
  });

  it('-t with a quoted schema and table', async () => {
    const url = `postgresql://${USER}:${encodeURIComponent(PASSWORD)}@/${DB}?host=${encodeURIComponent(socket())}`;
    const r = await runCli(['load', file, '-t', '"My Schema"."Line Item"', '-f', 'tbl', '-q', '--db', url], { env });
    await expectLoaded(r, '"My Schema"."Line Item"');
    const twice = await runCli(['load', file, '-t', '"My Schema"."Line Item"', '--schema', 'public', '--db', url], { env });
    assert.equal(twice.code, 2);
    assert.match(twice.stderr, /names schema "My Schema" but --schema is "public"/);
  });
});
