import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { serverCopyStdin } from '../helpers/copy-oracle.js';
import { digest, runCli, tableRecords } from '../helpers/test-db.js';
import { clusterTempDir, openCluster, removeClusterDir, TEST_PG_BIN, freePort } from '../helpers/temp-cluster.js';

const exec = promisify(execFile);


async function query<T extends pg.QueryResultRow>(config: pg.ClientConfig, sql: string): Promise<T[]> {
  const client = new pg.Client(config);
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

let dir: string;
let dataDir: string;
before(async () => {
  dir = await clusterTempDir('pgsurge-it-listen-');
  dataDir = path.join(dir, 'data');
});
after(async () => {
  await removeClusterDir(dir, await openCluster(dataDir));
});

const cli = (...args: string[]) => runCli(['cluster', ...args, '--data-dir', dataDir, '--pg-bin', TEST_PG_BIN]);

describe('pgsurge cluster start --listen', () => {
  it('listens on 127.0.0.1 with a generated password (scram-sha-256) that `cluster url --tcp` and the service file hand out; without it, no entry', async () => {
    const port = await freePort();
    const started = await cli('start', '--listen', String(port));
    assert.equal(started.code, 0, started.stderr);
    assert.match(started.stdout, new RegExp(`listening on 127\\.0\\.0\\.1:${port} \\(this machine only\\)`));

    const url = await cli('url', '--tcp');
    assert.equal(url.code, 0, url.stderr);
    const tcp = new URL(url.stdout.trim());
    assert.deepEqual([tcp.hostname, tcp.port, tcp.username, tcp.pathname], ['127.0.0.1', String(port), 'postgres', '/postgres']);
    const password = decodeURIComponent(tcp.password);
    assert.ok(password.length >= 24, 'a generated password');
    assert.ok(!started.stdout.includes(password) && !started.stderr.includes(password), 'start prints no password');

    // node-postgres over TCP with the password; the server holds only its SCRAM verifier
    const config = { host: '127.0.0.1', port, user: 'postgres', database: 'postgres', password };
    const [facts] = await query<{ port: number; listen: string; verifier: string; method: string }>(
      config,
      "SELECT inet_server_port() AS port, current_setting('listen_addresses') AS listen, (SELECT rolpassword FROM pg_authid WHERE rolname = 'postgres') AS verifier, current_setting('password_encryption') AS method",
    );
    assert.equal(facts!.port, port);
    assert.equal(facts!.listen, '127.0.0.1', 'not world-open');
    assert.match(facts!.verifier, /^SCRAM-SHA-256\$4096:/);
    const hba = await query<{ type: string; address: string | null; auth_method: string }>(config, 'SELECT type, address, auth_method FROM pg_hba_file_rules WHERE error IS NULL ORDER BY line_number');
    const hosts = hba.filter((r) => r.type === 'host');
    assert.deepEqual(hosts.slice(0, 2).map((r) => [r.address, r.auth_method]), [['127.0.0.1', 'scram-sha-256'], ['::1', 'scram-sha-256']]);
    assert.ok(hosts.slice(2).every((r) => r.auth_method === 'reject'), "initdb's host lines after pgsurge's refuse");

    // without the password, or with a wrong one: refused
    await assert.rejects(query({ ...config, password: undefined }, 'SELECT 1'), /password/);
    await assert.rejects(query({ ...config, password: 'wrong' }, 'SELECT 1'), (e: Error & { code?: string }) => e.code === '28P01');

    // psql: with the URL, through the service file, and refused without a password (-w: never prompt)
    assert.equal((await exec('psql', [url.stdout.trim(), '-Atc', 'SELECT inet_server_port()'])).stdout.trim(), String(port));
    const service = path.join(dataDir, 'pg_service.conf');
    assert.equal(((await fs.stat(service)).mode & 0o777).toString(8), '600');
    const viaService = await exec('psql', ['service=pgsurge', '-Atc', 'SELECT current_user'], { env: { ...process.env, PGSERVICEFILE: service, PGPASSWORD: '' } });
    assert.equal(viaService.stdout.trim(), 'postgres');
    await assert.rejects(exec('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-w', '-c', 'SELECT 1'], { env: { ...process.env, PGPASSWORD: '', PGSERVICEFILE: '/nonexistent' } }), /no password supplied|password authentication failed/);
  });

  it('a load into the managed cluster goes through its socket on the new port; the table is what the server\'s COPY makes of the same bytes', async () => {
    const cluster = await openCluster(dataDir);
    assert.ok(cluster.listen, 'the listen settings are kept in the data directory');
    const rows = Array.from({ length: 3000 }, (_, i) => `${i + 1}\tname ${i % 97}\t${i % 5 === 0 ? '\\N' : `city ${i % 13}`}`);
    const file = path.join(dir, 'people.txt');
    await fs.writeFile(file, `${rows.join('\n')}\n`);
    const socket = cluster.connection();
    await query(socket, 'CREATE TABLE people (id int, name text, city text); CREATE TABLE oracle (LIKE people)');
    const r = await runCli(['load', file, '-t', 'people', '--data-dir', dataDir, '--pg-bin', TEST_PG_BIN, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { total: { read: number; loaded: number; rejected: number; skipped: number } };
    assert.deepEqual([summary.total.read, summary.total.loaded, summary.total.rejected, summary.total.skipped], [3000, 3000, 0, 0]);
    const client = new pg.Client(socket);
    await client.connect();
    try {
      const copied = await serverCopyStdin(client, 'oracle', await fs.readFile(file), '(FORMAT text)');
      assert.equal(copied.rows, 3000, copied.error);
      assert.equal(digest(await tableRecords(client, 'people', '(FORMAT text)')), digest(await tableRecords(client, 'oracle', '(FORMAT text)')));
    } finally {
      await client.end();
    }
  });

  it('--listen off: TCP closed and its pg_hba lines gone; `cluster url --tcp` says how to listen', async () => {
    const before = (await cli('url', '--tcp')).stdout.trim();
    const off = await cli('start', '--listen', 'off');
    assert.equal(off.code, 0, off.stderr);
    await assert.rejects(query({ connectionString: before }, 'SELECT 1'), /ECONNREFUSED/);
    const url = await cli('url', '--tcp');
    assert.equal(url.code, 2);
    assert.match(url.stderr, /listens on its Unix socket only[\s\S]*--listen/);
    const hba = (await fs.readFile(path.join(dataDir, 'pg_hba.conf'), 'utf8')).split('\n').filter((l) => /^host/.test(l));
    assert.ok(hba.length > 0 && hba.every((l) => /reject$/.test(l.trim())), hba.join('\n'));
    const bad = await cli('start', '--listen', 'localhost:99999');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /a port from 1 to 65535/);
  });
});
