import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, chmodSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it, after } from 'node:test';
import { maskConninfo, parseConninfo } from '../../../src/core/conninfo.js';
import { describeServer, resolveConnection } from '../../../src/core/connection-settings.js';
import { matchPgpass, parseServiceFile } from '../../../src/core/libpq-files.js';

describe('connection strings as libpq reads them', () => {
  const cases: { name: string; input: string; expected: Record<string, string> }[] = [
    { name: 'a full URL', input: 'postgresql://me:s3cret@db1:6432/prod', expected: { user: 'me', password: 's3cret', host: 'db1', port: '6432', dbname: 'prod' } },
    { name: 'postgres:// and no credentials', input: 'postgres://db1/prod', expected: { host: 'db1', dbname: 'prod' } },
    { name: 'a socket in the query', input: 'postgresql://postgres@/postgres?host=%2Ftmp%2Fs&port=5433', expected: { user: 'postgres', dbname: 'postgres', host: '/tmp/s', port: '5433' } },
    { name: 'percent-encoded password', input: 'postgresql://me:p%40ss%2Fw%3Ad@db1/x', expected: { user: 'me', password: 'p@ss/w:d', host: 'db1', dbname: 'x' } },
    { name: 'IPv6 host', input: 'postgresql://[::1]:5433/x?sslmode=require', expected: { host: '::1', port: '5433', dbname: 'x', sslmode: 'require' } },
    { name: 'key=value', input: 'host=db1 port=5432 dbname=prod user=me', expected: { host: 'db1', port: '5432', dbname: 'prod', user: 'me' } },
    { name: 'quoted value with a quote and a space', input: "host=db1 password='a b\\'c' dbname = x", expected: { host: 'db1', password: "a b'c", dbname: 'x' } },
    { name: 'backslash in an unquoted value', input: 'password=a\\ b user=me', expected: { password: 'a b', user: 'me' } },
    { name: 'empty quoted value', input: "password='' user=me", expected: { password: '', user: 'me' } },
    { name: 'service alone', input: 'service=prod', expected: { service: 'prod' } },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(parseConninfo(c.input), c.expected));
});

describe('a malformed --db never shows its password', () => {
  const secret = 'Qz7Wk9Vx3P';
  const bad: { name: string; input: string; message: RegExp }[] = [
    { name: 'unencoded @ in the password', input: `postgresql://me:${secret.slice(0, 4)}@${secret.slice(4)}@db1/x`, message: /more than one "@"/ },
    { name: 'unencoded / in the password', input: `postgresql://me:${secret.slice(0, 4)}/${secret.slice(4)}@db1/x`, message: /port must be a number|"\/" in the database name/ },
    { name: 'unencoded # in the password', input: `postgresql://me:${secret.slice(0, 4)}#${secret.slice(4)}@db1/x`, message: /cannot hold "#"/ },
    { name: 'unencoded ? in the password', input: `postgresql://me:${secret.slice(0, 4)}?${secret.slice(4)}@db1/x`, message: /query parameter without "="|port must be a number/ },
    { name: 'a blank in the password', input: `postgresql://me:${secret.slice(0, 4)} ${secret.slice(4)}@db1/x`, message: /cannot hold blanks/ },
    { name: 'bad percent-encoding', input: `postgresql://me:${secret}%zz@db1/x`, message: /bad percent-encoding in the password/ },
    { name: 'a port that is not a number', input: `postgresql://me:${secret}@db1:54x2/x`, message: /port must be a number/ },
    { name: 'password in the query, bad key', input: `postgresql://me@db1/x?password=${secret}&bogus=1`, message: /unknown connection option/ },
    { name: 'password in the query, bad encoding', input: `postgresql://me@db1/x?password=${secret}%g1`, message: /bad percent-encoding/ },
    { name: 'unterminated quote', input: `host=db1 password='${secret}`, message: /unterminated quoted value/ },
    { name: 'missing = after a key', input: `host=db1 password=${secret} dbname`, message: /missing "=" after a keyword/ },
    { name: 'unknown keyword', input: `hots=db1 password=${secret}`, message: /unknown connection option/ },
    { name: 'a URL with a wrong scheme', input: `postgress://me:${secret}@db1/x`, message: /not a connection string/ },
    { name: 'a bare host:password', input: `me:${secret}@db1`, message: /not a connection string/ },
    { name: 'key=value port not a number', input: `port=five password='${secret}'`, message: /port must be a number/ },
  ];
  for (const c of bad) {
    it(c.name, () => {
      let message = '';
      try {
        parseConninfo(c.input);
      } catch (e) {
        const err = e as Error & { details?: { hint?: string } };
        message = `${err.message}\n${err.details?.hint ?? ''}`;
      }
      assert.match(message, c.message);
      assert.match(message, /^--db /);
      // No piece of the password of 4 characters or more survives.
      for (let i = 0; i + 4 <= secret.length; i++) assert.ok(!message.includes(secret.slice(i, i + 4)), `${JSON.stringify(message)} holds ${secret.slice(i, i + 4)}`);
    });
  }
  it('names the bad piece when nothing is secret', () => {
    assert.throws(() => parseConninfo('hots=db1'), /unknown connection option "hots"/);
    assert.throws(() => parseConninfo('postgresql://db1:54x2/x'), /the port must be a number "54x2"/);
  });
  it('a password with blanks, unquoted, leaks no word of it', () => {
    assert.throws(() => parseConninfo(`host=db1 password=Qz7W k9Vx3P`), (e: Error) => !e.message.includes('k9Vx') && /missing "=" after a keyword$/.test(e.message));
  });
  it('masking hides every form', () => {
    assert.equal(maskConninfo('me:a@b@db1'), 'me:***@db1');
    assert.equal(maskConninfo('postgresql://me:a@b@h/x'), 'postgresql://me:***@h/x');
    assert.equal(maskConninfo('postgresql://me@h/x?password=s&sslmode=require'), 'postgresql://me@h/x?password=***&sslmode=require');
    assert.equal(maskConninfo("host=h password='a b\\'c' user=me"), 'host=h password=*** user=me');
    assert.equal(maskConninfo("host=h password='never closed user=me"), 'host=h password=***');
  });
});

describe('libpq files and the environment', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pgsurge-conninfo-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  it('service file sections', () => {
    const text = '# comment\n[other]\nhost=a\n\n[prod]\nhost=db1\nport = 6432\ndbname=sales\n[next]\nhost=z\n';
    assert.deepEqual(parseServiceFile(text, 'prod', 'f'), { host: 'db1', port: '6432', dbname: 'sales' });
    assert.equal(parseServiceFile(text, 'missing', 'f'), undefined);
  });
  it('.pgpass lines: wildcards, escapes, sockets match localhost', () => {
    const text = 'db1:5432:prod:me:first\n*:*:*:odd\\:user:p\\:w\\\\d\nlocalhost:5433:*:me:sock\n';
    assert.equal(matchPgpass(text, { host: 'db1', port: '5432', database: 'prod', user: 'me' }), 'first');
    assert.equal(matchPgpass(text, { host: 'x', port: '1', database: 'y', user: 'odd:user' }), 'p:w\\d');
    assert.equal(matchPgpass(text, { host: '/tmp/sock', port: '5433', database: 'q', user: 'me' }), 'sock');
    assert.equal(matchPgpass(text, { host: 'db2', port: '5432', database: 'prod', user: 'me' }), undefined);
  });
  it('--db first, then the service, then PG*, then the password file', () => {
    const services = path.join(dir, 'services.conf');
    writeFileSync(services, '[prod]\nhost=db1\ndbname=sales\nport=6432\n');
    const pgpass = path.join(dir, 'pgpass');
    writeFileSync(pgpass, 'db1:6432:sales:loader:from-pgpass\n');
    chmodSync(pgpass, 0o600);
    const env = { PGSERVICEFILE: services, PGPASSFILE: pgpass, PGUSER: 'loader', PGPORT: '1111', HOME: dir };
    const r = resolveConnection('service=prod application_name=mine', env);
    assert.equal(r.config.host, 'db1');
    assert.equal(r.config.port, 6432); // the service's port beats PGPORT
    assert.equal(r.config.database, 'sales');
    assert.equal(r.config.user, 'loader');
    assert.equal(r.config.password, 'from-pgpass');
    assert.equal(r.config.application_name, 'mine');
    assert.equal(r.description, 'server at "db1", port 6432, database "sales", user "loader"');
    // PGSERVICE names the service when --db does not.
    assert.equal(resolveConnection(undefined, { ...env, PGSERVICE: 'prod' }).config.host, 'db1');
    // A password file others can read is not used, with a warning.
    chmodSync(pgpass, 0o644);
    const warnings: string[] = [];
    assert.equal(resolveConnection('service=prod', env, (w) => warnings.push(w)).config.password, undefined);
    assert.match(warnings[0] ?? '', /group or world access/);
    assert.throws(() => resolveConnection('service=nope', env), /definition of service "nope" not found/);
  });
  it('sslmode maps to node-postgres', () => {
    assert.equal(resolveConnection('host=h sslmode=disable', {}).config.ssl, false);
    assert.equal(resolveConnection('host=h', { PGSSLMODE: 'prefer' }).config.ssl, false);
    assert.deepEqual(resolveConnection('host=h', { PGSSLMODE: 'require' }).config.ssl, { rejectUnauthorized: false });
    assert.throws(() => resolveConnection('host=h sslmode=maybe', {}), /invalid sslmode "maybe"/);
  });
  it('a port outside 1..65535 is refused, naming the value and where it came from', () => {
    assert.throws(() => resolveConnection('host=h port=65536', {}), /invalid port number "65536" \(from --db\)/);
    assert.throws(() => resolveConnection('postgresql://h:0/x', {}), /invalid port number "0" \(from --db\)/);
    assert.throws(() => resolveConnection(undefined, { PGHOST: 'h', PGPORT: '99999' }), /invalid port number "99999" \(from PGPORT\)/);
    assert.throws(() => resolveConnection(undefined, { PGHOST: 'h', PGPORT: 'abc' }), /invalid port number "abc" \(from PGPORT\)/);
    assert.equal(resolveConnection('host=h port=65535', {}).config.port, 65535);
    assert.equal(resolveConnection('host=h port=1', {}).config.port, 1);
  });
  it('describes the server as psql does', () => {
    assert.equal(describeServer('/tmp', 5432, 'db', 'me'), 'server on socket "/tmp/.s.PGSQL.5432", database "db", user "me"');
  });
});
