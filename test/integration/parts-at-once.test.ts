import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createTableSql } from '../../src/datasets/table-ddl.js';
import { createOnce } from '../../src/core/create-once.js';
import { lineitemFields, tableRecord, tblLine } from '../helpers/lineitem-data.js';
import { closeTestSchema, digest, openTestSchema, PGSURGE, runCli, tableRecords, testUrl, type CliResult } from '../helpers/test-db.js';

/**
 * `--part 1/N` … `N/N` started at once against a database where pgsurge has created
 * nothing yet: one part creates the ledger (schema `pgsurge`) and, with `--create`, the
 * table, the others wait for it and find them; every part exits 0 and the table equals the
 * input. Each trial on a database of its own, made for it. And a part that stops before it
 * loads names itself and prints the command that runs it again.
 */
const SCHEMA = 'it_parts_at_once';
const PARTS = 4;
const TRIALS = 5;
let client: pg.Client;
let dir: string;
let file: string;
let expected: string;
const fields = lineitemFields(4000);

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-parts-at-once-'));
  file = path.join(dir, 'lineitem.tbl');
  await fs.writeFile(file, Buffer.concat(fields.map(tblLine)));
  expected = digest(fields.map(tableRecord));
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

/** The test server's URL, naming another database. */
function urlOf(database: string): string {
  return testUrl().replace(/^(postgresql:\/\/[^/]*\/)[^?]*/, `$1${database}`);
}

async function withDatabase<T>(name: string, fn: (db: pg.Client, url: string) => Promise<T>): Promise<T> {
  await client.query(`DROP DATABASE IF EXISTS ${name}`);
  await client.query(`CREATE DATABASE ${name}`);
  const db = new pg.Client({ connectionString: urlOf(name) });
  await db.connect();
  try {
    return await fn(db, urlOf(name));
  } finally {
    await db.end();
    await client.query(`DROP DATABASE ${name}`);
  }
}

async function tableDigest(db: pg.Client, table: string): Promise<{ count: number; digest: string }> {
  const records = await tableRecords(db, table);
  return { count: records.length, digest: digest(records) };
}

/** Runs a command line as printed by pgsurge (`pgsurge …`, shell-quoted) through a shell, this checkout's pgsurge in its place. */
function runPrinted(line: string): Promise<CliResult> {
  assert.match(line, /^pgsurge /);
  const command = `'${process.execPath}' '${PGSURGE}' ${line.slice('pgsurge '.length)}`;
  return runCli(['-c', command], { command: 'sh' });
}

describe('--part K/N started at once where pgsurge has created nothing yet', () => {
  it(`${PARTS} parts at once with --create, ${TRIALS} times, each into a new database: every part exits 0 and the table equals the input`, async () => {
    for (let trial = 1; trial <= TRIALS; trial++) {
      await withDatabase(`it_parts_at_once_${trial}`, async (db, url) => {
        const runs = await Promise.all(
          Array.from({ length: PARTS }, (_, i) => runCli(['load', file, '-t', 'lineitem', '--create', '--part', `${i + 1}/${PARTS}`, '-w', '2', '--chunk-size', '16KB', '--db', url])),
        );
        runs.forEach((r, i) => assert.equal(r.code, 0, `trial ${trial}, part ${i + 1}/${PARTS}: exit ${r.code}\n${r.stderr}`));
        assert.deepEqual({ trial, ...(await tableDigest(db, 'public.lineitem')) }, { trial, count: fields.length, digest: expected });
        const parts = await db.query<{ part: string }>('SELECT DISTINCT part FROM pgsurge.chunks ORDER BY part');
        assert.deepEqual(parts.rows.map((r) => r.part), Array.from({ length: PARTS }, (_, i) => `${i + 1}/${PARTS}`));
      });
    }
  });

  it('a part that stops before loading (its table missing) names the part and prints the command that reruns it; that command, once the table is there, loads the part', async () => {
    const args = (k: number): string[] => ['load', file, '-t', 'gone', '--part', `${k}/3`, '--load-id', 'at-once-rerun', '-w', '2', '--chunk-size', '16KB', '--db', testUrl(), '--schema', SCHEMA];
    const first = await runCli(args(2));
    assert.equal(first.code, 1, first.stderr);
    assert.match(first.stderr, /^pgsurge: part 2\/3: table "it_parts_at_once"\."gone" does not exist$/m);
    assert.match(first.stderr, /^ {2}hint: create it first/m);
    const rerun = /^ {2}rerun this part with: (.*)$/m.exec(first.stderr)?.[1];
    assert.ok(rerun !== undefined, first.stderr);
    assert.match(rerun, /--part 2\/3/);
    assert.match(rerun, /--load-id at-once-rerun/);
    await client.query(createTableSql('lineitem', SCHEMA)!.replace(/\blineitem\b/, 'gone'));
    const again = await runPrinted(rerun);
    assert.equal(again.code, 0, again.stderr);
    const others = await Promise.all([1, 3].map((k) => runCli(args(k))));
    for (const r of others) assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await tableDigest(client, `${SCHEMA}.gone`), { count: fields.length, digest: expected });
  });

  it('a part that cannot reach its server names the part and prints the command that reruns it, the password masked', async () => {
    const r = await runCli(['load', file, '-t', 'lineitem', '--part', '3/4', '--db', 'postgresql://someone:s3cret@127.0.0.1:1/nowhere']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^pgsurge: part 3\/4: cannot connect to server at "127\.0\.0\.1", port 1/m);
    assert.match(r.stderr, /^ {2}rerun this part with: pgsurge load \S+lineitem\.tbl -t lineitem --part 3\/4 --db 'postgresql:\/\/someone:\*\*\*@127\.0\.0\.1:1\/nowhere'$/m);
    assert.doesNotMatch(r.stderr + r.stdout, /s3cret/);
  });
});

describe('createOnce: the creation every first use goes through', () => {
  it('sessions that each looked for the table before (and cached that it is missing) create it at once: one creates it, the others find it', async () => {
    const sessions = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const c = new pg.Client({ connectionString: testUrl() });
        await c.connect();
        return c;
      }),
    );
    try {
      const table = `${SCHEMA}.made_once`;
      await client.query(`DROP TABLE IF EXISTS ${table}`);
      for (const c of sessions) assert.equal((await c.query('SELECT to_regclass($1) IS NULL AS missing', [table])).rows[0].missing, true);
      const created = await Promise.all(
        sessions.map((c) =>
          createOnce(c, `test ${table}`, {
            missing: async (s) => (await s.query('SELECT to_regclass($1) IS NULL AS missing', [table])).rows[0].missing === true,
            // A creation that takes a while: the others are waiting by the time it commits.
            create: async (s) => void (await s.query(`CREATE TABLE ${table} (id int); SELECT pg_sleep(0.2)`)),
          }),
        ),
      );
      assert.equal(created.filter(Boolean).length, 1, JSON.stringify(created));
      // Every session sees it, and none holds a creation lock any longer.
      for (const c of sessions) assert.equal((await c.query('SELECT to_regclass($1) IS NOT NULL AS there', [table])).rows[0].there, true);
      const held = await client.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND classid = (hashtext('pgsurge create')::int8 & 4294967295)::oid AND objid = (hashtext($1)::int8 & 4294967295)::oid",
        [`test ${table}`],
      );
      assert.equal(held.rows[0]!.n, 0);
    } finally {
      await Promise.all(sessions.map((c) => c.end()));
    }
  });

  it('an object already there is found without its creation lock (a session holding it does not hold up the look); a missing one still waits for the lock', async () => {
    const table = `${SCHEMA}.there_already`;
    await client.query(`DROP TABLE IF EXISTS ${table}`);
    await client.query(`CREATE TABLE ${table} (id int)`);
    const object = `test ${table}`;
    const looker = new pg.Client({ connectionString: testUrl() });
    await looker.connect();
    // another process in the middle of a creation: it holds the object's creation lock
    await client.query("SELECT pg_advisory_lock(hashtext('pgsurge create'), hashtext($1))", [object]);
    try {
      const steps = (missing: boolean): Parameters<typeof createOnce>[2] => ({
        missing: async (s) => missing && (await s.query('SELECT to_regclass($1) IS NOT NULL AS there', [table])).rows[0].there === true,
        create: async () => assert.fail('nothing to create'),
      });
      const timeout = <T>(p: Promise<T>, ms: number): Promise<T | 'timed out'> => Promise.race([p, new Promise<'timed out'>((r) => setTimeout(() => r('timed out'), ms))]);
      assert.equal(await timeout(createOnce(looker, object, steps(false)), 2000), false, 'found at once, the lock held elsewhere');
      // said missing: it waits for the lock (and, once it has it, finds it there after all)
      let asked = 0;
      const waiting = createOnce(looker, object, {
        missing: async (s) => ++asked === 1 || (await s.query('SELECT to_regclass($1) IS NULL AS missing', [table])).rows[0].missing === true,
        create: async () => assert.fail('nothing to create'),
      });
      assert.equal(await timeout(waiting, 300), 'timed out', 'a missing object waits for the creation lock');
      await client.query("SELECT pg_advisory_unlock(hashtext('pgsurge create'), hashtext($1))", [object]);
      assert.equal(await waiting, false);
      assert.equal(asked, 2);
    } finally {
      await client.query("SELECT pg_advisory_unlock_all()");
      await looker.end();
    }
  });
});
