import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import net from 'node:net';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { startCli, sleep, type RunningCli } from '../helpers/cli-process.js';
import { firstServerOnly } from '../helpers/temp-cluster.js';
import { type CliResult, closeTestSchema, digest, forgetLoads, openTestSchema, rejectFileOf, runCli, tableRecords, testUrl } from '../helpers/test-db.js';

/**
 * The holes a hostile tester found in exactly-once, each through the real
 * command line: the table's digest against the input, the accounting and the message.
 */
const SCHEMA = 'it_exact';
let client: pg.Client;
let dir: string;

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-exact-'));
  // The tests read the ledger by load id: an earlier run of this file on the same server left rows under these ids.
  await forgetLoads(client, ['cut', 'reload', 'arrcut']);
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

const target = (): string[] => ['--db', testUrl(), '--schema', SCHEMA];

/** `n` narrow rows as CSV lines `id,v`, and the records the table must then hold. */
function rows(n: number, from = 1): { csv: string; records: string[] } {
  const ids = Array.from({ length: n }, (_, i) => i + from);
  return { csv: ids.map((id) => `${id},value ${id}\n`).join(''), records: ids.map((id) => `${id}|value ${id}`) };
}

async function table(name: string, pk = false): Promise<string> {
  const q = `${SCHEMA}.${name}`;
  await client.query(`DROP TABLE IF EXISTS ${q}`);
  await client.query(`CREATE TABLE ${q} (id int${pk ? ' PRIMARY KEY' : ''}, v text)`);
  return q;
}

/** Table `name` (made anew) and `n` rows of CSV for it in `<name>.csv`. */
async function csvInput(name: string, n: number): Promise<{ q: string; file: string; records: string[] }> {
  const q = await table(name);
  const { csv, records } = rows(n);
  const file = path.join(dir, `${name}.csv`);
  await fs.writeFile(file, csv);
  return { q, file, records };
}

async function state(q: string): Promise<{ count: number; digest: string }> {
  const recs = await tableRecords(client, q);
  return { count: recs.length, digest: digest(recs) };
}

/** The summary's accounting line says read = loaded + rejected + skipped, with these numbers. */
function assertAccounting(r: CliResult, read: number, loaded: number, rejected: number): void {
  const m = /loaded ([\d,]+) of ([\d,]+) rows read(?: \(read [\d,]+ = loaded [\d,]+ \+ rejected ([\d,]+) \+ skipped ([\d,]+)\))?/.exec(r.stdout);
  assert.ok(m, `a summary line in:\n${r.stdout}\n${r.stderr}`);
  const n = (s: string | undefined): number => Number((s ?? '0').replace(/,/g, ''));
  assert.deepEqual({ loaded: n(m[1]), read: n(m[2]), rejected: n(m[3]) }, { loaded, read, rejected }, r.stdout);
  assert.equal(n(m[2]), n(m[1]) + n(m[3]) + n(m[4]));
}

/**
 * A deferred trigger on `q`: the first transaction to insert a row for which `when` holds
 * sleeps 3 s at COMMIT (an interruptible stand-in for a slow commit; `pg_stat_activity`
 * shows it as PgSleep).
 */
async function slowCommit(q: string, name: string, when: string): Promise<void> {
  await client.query(`CREATE TABLE ${SCHEMA}.${name}_flag (x int); INSERT INTO ${SCHEMA}.${name}_flag VALUES (1)`);
  await client.query(`CREATE FUNCTION ${SCHEMA}.${name}_slow() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF ${when} AND EXISTS (SELECT 1 FROM ${SCHEMA}.${name}_flag) THEN DELETE FROM ${SCHEMA}.${name}_flag; PERFORM pg_sleep(3); END IF; RETURN NULL; END $$`);
  await client.query(`CREATE CONSTRAINT TRIGGER slow AFTER INSERT ON ${q} DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ${SCHEMA}.${name}_slow()`);
}

/** Until the worker of load `loadId` sleeps in `slowCommit`'s trigger. */
async function untilSleeping(loadId: string, run: RunningCli): Promise<void> {
  for (let waited = 0; ; waited += 50) {
    assert.ok(waited < 20_000, run.stderr());
    const sleeping = await client.query("SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event = 'PgSleep'", [`pgsurge ${loadId} w0`]);
    if (sleeping.rowCount! > 0) return;
    await sleep(50);
  }
}

/** Ends a run still going (an assertion failed mid-load), before the proxy's close, which waits for its connections to end. */
async function ended(run: RunningCli | undefined): Promise<void> {
  if (run === undefined || run.child.exitCode !== null || run.child.signalCode !== null) return;
  run.child.kill('SIGKILL');
  await run.exited;
}

/**
 * A proxy in front of the test server that can cut worker w0's connections on the client's
 * side only (the network, not the server: the backend lives on until ended).
 */
async function workerProxy(): Promise<{ url: string; cutWorkers(): void; close(): Promise<void> }> {
  const u = new URL(testUrl().replace('@/', '@localhost/'));
  const socket = path.join(u.searchParams.get('host')!, `.s.PGSQL.${u.searchParams.get('port') ?? '5432'}`);
  const workerSides: net.Socket[] = [];
  const serverSides: net.Socket[] = [];
  const proxy = net.createServer((c) => {
    const s = net.connect(socket);
    serverSides.push(s);
    c.once('data', (first: Buffer) => {
      if (first.includes(Buffer.from(' w0\0'))) workerSides.push(c);
      s.write(first);
      c.pipe(s);
    });
    s.pipe(c);
    c.on('error', () => {});
    s.on('error', () => {});
    c.on('close', () => s.unpipe(c));
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const port = (proxy.address() as net.AddressInfo).port;
  return {
    url: `postgresql://${u.username || 'postgres'}@127.0.0.1:${port}${u.pathname}`,
    cutWorkers: () => workerSides.splice(0).forEach((c) => c.destroy()),
    close: async () => {
      for (const s of serverSides) s.destroy();
      await new Promise((r) => proxy.close(r));
    },
  };
}

describe('exactly once: holes found by a hostile tester', () => {
  it('1. --mode insert --commit-every 1 with the ledger is refused on the CLI path, before --truncate empties anything (exit 2)', { skip: firstServerOnly('the refusal is on the CLI path, before the server') }, async () => {
    const q = await table('ce');
    const { csv, records } = rows(200);
    const file = path.join(dir, 'ce.csv');
    await fs.writeFile(file, csv);
    await client.query(`INSERT INTO ${q} SELECT g, 'value ' || g FROM generate_series(1, 200) g`);
    for (const durability of [[], ['--durability', 'fast']]) {
      const r = await runCli(['load', file, '-t', 'ce', '-f', 'csv', '--mode', 'insert', '--commit-every', '1', '--truncate', ...durability, ...target()]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /--commit-every splits a chunk into several transactions/);
      assert.match(r.stderr, /--no-ledger/);
      assert.deepEqual(await state(q), { count: 200, digest: digest(records) }, 'the table is as it was: nothing truncated');
    }
  });

  it('2. the same file through a symlink or a hard link resumes it (not loaded twice), also when two runs start at once', { skip: firstServerOnly('the file\'s identity and the load id are pgsurge\'s') }, async () => {
    const q = await table('links');
    const { csv, records } = rows(3000);
    const file = path.join(dir, 'links.csv');
    await fs.writeFile(file, csv);
    const sym = path.join(dir, 'links-sym.csv');
    const hard = path.join(dir, 'links-hard.csv');
    await fs.symlink(file, sym);
    await fs.link(file, hard);
    const args = (f: string): string[] => ['load', f, '-t', 'links', '-f', 'csv', '--chunk-size', '4KB', '-w', '2', ...target()];

    // Two at once, by two names: one loads, the other is refused (same load) or finds it done.
    const [a, b] = [startCli(args(sym)), startCli(args(hard))];
    const [ea, eb] = await Promise.all([a.exited, b.exited]);
    assert.ok([ea.code, eb.code].includes(0), `${a.stderr()}\n${b.stderr()}`);
    for (const [run, e] of [[a, ea], [b, eb]] as const) {
      if (e.code !== 0) assert.match(run.stderr(), /is running in another pgsurge right now/);
    }
    assert.deepEqual(await state(q), { count: 3000, digest: digest(records) });

    // Then by the real path, then by each link again: the same load, completed: nothing read again.
    for (const f of [file, sym, hard]) {
      const r = await runCli(args(f));
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^load links-\S+ completed .*: 3,000 rows loaded, 0 rejected; nothing to load/);
    }
    // One file named twice in one command is refused before anything loads.
    const twice = await runCli(['load', file, hard, '-t', 'links', '-f', 'csv', ...target()]);
    assert.equal(twice.code, 2, twice.stderr);
    assert.match(twice.stderr, /are the same file/);
    assert.deepEqual(await state(q), { count: 3000, digest: digest(records) });
  });

  it('2. a load begun under another id (an earlier pgsurge took its default id from the path) is resumed by the same command, not begun again', { skip: firstServerOnly('the file\'s identity and the load id are pgsurge\'s') }, async () => {
    const q = await table('legacy');
    const ids = Array.from({ length: 2000 }, (_, i) => i + 1);
    const line = (id: number): string => (id === 1500 ? `x${id},bad\n` : `${id},value ${id}\n`);
    const file = path.join(dir, 'legacy.csv');
    await fs.writeFile(file, ids.map(line).join(''));
    const args = ['load', file, '-t', 'legacy', '-f', 'csv', '--chunk-size', '4KB', '-w', '1', ...target()];
    const first = await runCli([...args, '--load-id', 'legacy-by-path', '--max-rejects', '0']);
    assert.equal(first.code, 1, first.stderr);
    const before = (await state(q)).count;
    assert.ok(before > 0 && before < 1999);
    const r = await runCli([...args, '--max-rejects', '5']);
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /pgsurge: load legacy-by-path \(resuming/);
    assertAccounting(r, 2000 - before, 1999 - before, 1);
    assert.deepEqual(await state(q), { count: 1999, digest: digest(ids.filter((id) => id !== 1500).map((id) => `${id}|value ${id}`)) });
  });

  it('3. a malformed NDJSON line is rejected verbatim with its line, the rest loads; the fixed reject file loads the rest exactly', { skip: firstServerOnly('JSON framing and rejects are pgsurge\'s') }, async () => {
    const q = await table('nd', true);
    const ids = Array.from({ length: 2000 }, (_, i) => i + 1);
    const bad = new Set([700, 1500]);
    const line = (id: number): string => (bad.has(id) ? `{"id": ${id}, "v": "value ${id}"\n` : `{"id": ${id}, "v": "value ${id}"}\n`);
    const file = path.join(dir, 'nd.ndjson');
    await fs.writeFile(file, ids.map(line).join(''));
    const r = await runCli(['load', file, '-t', 'nd', '--chunk-size', '4KB', '-w', '2', ...target()]);
    assert.equal(r.code, 3, r.stderr);
    assertAccounting(r, 2000, 1998, 2);
    assert.deepEqual(await state(q), { count: 1998, digest: digest(ids.filter((id) => !bad.has(id)).map((id) => `${id}|value ${id}`)) });
    const rejectFile = rejectFileOf(r);
    assert.equal(await fs.readFile(rejectFile, 'utf8'), [...bad].map(line).join(''), 'the lines verbatim');
    const log = await fs.readFile(`${rejectFile}.log`, 'utf8');
    assert.match(log, /\t700\t\d+\t\t\tcannot be read as an NDJSON line/);
    assert.match(log, /\t1500\t/);

    // Rerun: the load completed, nothing twice.
    const again = await runCli(['load', file, '-t', 'nd', '--chunk-size', '4KB', '-w', '2', ...target()]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^load nd-\S+ completed .*: 1,998 rows loaded, 2 rejected; nothing to load/);
    assert.equal((await state(q)).count, 1998);
    // Fix the rejected lines and load them: the table equals the input, once.
    const fixed = path.join(dir, 'nd-fixed.ndjson');
    await fs.writeFile(fixed, (await fs.readFile(rejectFile, 'utf8')).replace(/"\n/g, '"}\n'));
    const rest = await runCli(['load', fixed, '-t', 'nd', ...target()]);
    assert.equal(rest.code, 0, rest.stderr);
    assert.deepEqual(await state(q), { count: 2000, digest: digest(ids.map((id) => `${id}|value ${id}`)) });
  });

  it('3. a JSON array whose structure breaks stops with a command that ends exact once the file is fixed', { skip: firstServerOnly('JSON framing is pgsurge\'s') }, async () => {
    const q = await table('arr');
    const ids = Array.from({ length: 1500 }, (_, i) => i + 1);
    const el = (id: number): string => `{"id": ${id}, "v": "value ${id}"}`;
    const file = path.join(dir, 'arr.json');
    await fs.writeFile(file, `[${ids.map((id) => (id === 1200 ? el(id).slice(0, -1) + ']' : el(id))).join(',\n')}]`);
    const r = await runCli(['load', file, '-t', 'arr', '--chunk-size', '4KB', ...target()]);
    assert.equal(r.code, 1, r.stderr);
    const m = /after fixing the input: (.*)\n/.exec(r.stderr);
    assert.ok(m, r.stderr);
    assert.doesNotMatch(r.stderr, /resume with/);
    await fs.writeFile(file, `[${ids.map(el).join(',\n')}]`);
    const argv = m[1]!.split(' ').slice(1).map((a) => a.replace(/^'(.*)'$/, '$1'));
    const fixed = await runCli(argv);
    assert.equal(fixed.code, 0, fixed.stderr);
    assertAccounting(fixed, 1500, 1500, 0);
    assert.deepEqual(await state(q), { count: 1500, digest: digest(ids.map((id) => `${id}|value ${id}`)) });
  });

  it('4. after a lost connection the old backend is ended (by pid) and gone before the ledger is read: a COMMIT it was still making cannot double the chunk', async () => {
    const { q, file, records } = await csvInput('cut', 500);
    await slowCommit(q, 'cut', 'true');
    const proxy = await workerProxy();
    let run: RunningCli | undefined;
    try {
      run = startCli(['load', file, '-t', 'cut', '-f', 'csv', '-w', '1', '--load-id', 'cut', '--schema', SCHEMA, '--db', proxy.url]);
      await untilSleeping('cut', run);
      proxy.cutWorkers(); // the server side stays open: its backend commits unless ended
      const e = await run.exited;
      assert.equal(e.code, 0, run.stderr());
      assert.match(run.stderr(), /lost the connection loading/);
      const r = { code: e.code, stdout: run.stdout(), stderr: run.stderr() };
      assertAccounting(r, 500, 500, 0);
      assert.deepEqual(await state(q), { count: 500, digest: digest(records) }, 'once, not twice');
    } finally {
      await ended(run);
      await proxy.close();
    }
  });

  it('an error while reloading a held chunk (its commit lost with the server) names that chunk, not the one being retried; the resume ends exact', async () => {
    const { q, file, records } = await csvInput('reload', 500);
    // Chunk 1 (ids 1–~85 at 1 KB) commits without waiting for its flush and is held; chunk 2 sleeps in its COMMIT.
    await slowCommit(q, 'reload', 'NEW.id = 130');
    // Refuses every insert while the flag row is there (not a row error: the chunk fails whole).
    await client.query(`CREATE TABLE ${SCHEMA}.reload_refuse (x int)`);
    await client.query(`CREATE FUNCTION ${SCHEMA}.reload_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF EXISTS (SELECT 1 FROM ${SCHEMA}.reload_refuse) THEN RAISE EXCEPTION 'refused on reload'; END IF; RETURN NULL; END $$`);
    await client.query(`CREATE TRIGGER refuse BEFORE INSERT ON ${q} FOR EACH STATEMENT EXECUTE FUNCTION ${SCHEMA}.reload_refuse()`);
    const proxy = await workerProxy();
    let run: RunningCli | undefined;
    try {
      run = startCli(['load', file, '-t', 'reload', '-f', 'csv', '-w', '1', '--chunk-size', '1KB', '--load-id', 'reload', '--schema', SCHEMA, '--db', proxy.url]);
      await untilSleeping('reload', run);
      const held = await client.query<{ byte_start: string; byte_end: string; rows_loaded: string }>("SELECT byte_start, byte_end, rows_loaded FROM pgsurge.chunks WHERE load_id = 'reload'");
      assert.equal(held.rows.length, 1, 'chunk 1 committed, chunk 2 in its COMMIT');
      const { byte_start: start, byte_end: end, rows_loaded: n } = held.rows[0]!;
      assert.equal(start, '0');
      // What a crash before chunk 1's WAL flush would have done: its rows and its ledger row gone.
      await client.query(`DELETE FROM ${q} WHERE id <= $1`, [n]);
      await client.query("DELETE FROM pgsurge.chunks WHERE load_id = 'reload'");
      await client.query(`INSERT INTO ${SCHEMA}.reload_refuse VALUES (1)`);
      proxy.cutWorkers();
      const e = await run.exited;
      assert.equal(e.code, 1, run.stderr());
      assert.match(run.stderr(), /reload\.csv at byte 0: a chunk whose WAL had not reached disk yet was lost with the server; loading it again/);
      // The reloaded chunk's place (bytes 0–end), not chunk 2's (which begins at end).
      assert.match(run.stderr(), new RegExp(`loading \\S*reload\\.csv \\(bytes 0–${end}\\).*refused on reload`));
      assert.match(run.stdout(), /the ledger holds, for this load \(all runs\): 0 rows loaded, 0 rejected, 0 skipped/);
      assert.equal((await state(q)).count, 0, 'chunk 2 rolled back with its ended backend');
      const m = /resume with: pgsurge (.*)\n/.exec(run.stderr());
      assert.ok(m, run.stderr());
      await client.query(`DELETE FROM ${SCHEMA}.reload_refuse`);
      const resumed = await runCli(m[1]!.split(' ').map((a) => a.replace(/^'(.*)'$/, '$1')));
      assert.equal(resumed.code, 0, resumed.stderr);
      assertAccounting(resumed, 500, 500, 0);
      assert.deepEqual(await state(q), { count: 500, digest: digest(records) });
    } finally {
      await ended(run);
      await proxy.close();
    }
  });

  it("4. a JSON array's chunks (several share one byte range) after a lost connection: the ledger names each by its first element, none is skipped", { skip: firstServerOnly('the ledger\'s naming of JSON chunks is pgsurge\'s; the lost connection itself runs on every version above') }, async () => {
    const q = await table('arrcut');
    const ids = Array.from({ length: 1500 }, (_, i) => i + 1);
    const file = path.join(dir, 'arrcut.json');
    // 45 KB: one parser block, so every chunk after the first has the same byte range.
    await fs.writeFile(file, `[${ids.map((id) => `{"id": ${id}, "v": "value ${id}"}`).join(',\n')}]`);
    await slowCommit(q, 'arrcut', 'NEW.id = 500');
    const proxy = await workerProxy();
    let run: RunningCli | undefined;
    try {
      run = startCli(['load', file, '-t', 'arrcut', '-w', '1', '--chunk-size', '1KB', '--load-id', 'arrcut', '--schema', SCHEMA, '--db', proxy.url]);
      await untilSleeping('arrcut', run);
      const shared = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM pgsurge.chunks WHERE load_id = 'arrcut' GROUP BY byte_start, byte_end ORDER BY 1 DESC LIMIT 1");
      assert.ok(shared.rows[0]!.n > 1, 'chunks sharing one byte range are in the ledger');
      proxy.cutWorkers();
      const e = await run.exited;
      assert.equal(e.code, 0, run.stderr());
      assert.match(run.stderr(), /lost the connection loading/);
      assertAccounting({ code: e.code, stdout: run.stdout(), stderr: run.stderr() }, 1500, 1500, 0);
      assert.deepEqual(await state(q), { count: 1500, digest: digest(ids.map((id) => `${id}|value ${id}`)) }, 'every chunk once');
      const ledger = await client.query<{ l: number; c: number; d: number }>(
        "SELECT sum(rows_loaded)::int AS l, count(*)::int AS c, count(DISTINCT first_record)::int AS d FROM pgsurge.chunks WHERE load_id = 'arrcut'",
      );
      assert.equal(ledger.rows[0]!.l, 1500);
      assert.equal(ledger.rows[0]!.c, ledger.rows[0]!.d, 'one first element per chunk');
    } finally {
      await ended(run);
      await proxy.close();
    }
  });

  it('a ledger made before first_record existed gains the column on first use; JSON array chunks and their rejects are recorded by their first element', { skip: firstServerOnly('the ledger\'s own migration') }, async () => {
    const db = 'exact_old_ledger_db';
    await client.query(`DROP DATABASE IF EXISTS ${db}`);
    await client.query(`CREATE DATABASE ${db}`);
    const other = new pg.Client({ connectionString: urlAs('postgres', db) });
    await other.connect();
    try {
      await other.query('CREATE TABLE public.t (id int, v text)');
      const ids = Array.from({ length: 600 }, (_, i) => i + 1);
      const el = (id: number): string => (id === 450 ? `{"id": "x${id}", "v": "bad"}` : `{"id": ${id}, "v": "value ${id}"}`);
      const file = path.join(dir, 'old-ledger.json');
      await fs.writeFile(file, `[${ids.map(el).join(',\n')}]`);
      const args = ['load', file, '-t', 't', '--chunk-size', '1KB', '--db', urlAs('postgres', db)];
      const first = await runCli([...args, '--load-id', 'first']);
      assert.equal(first.code, 3, first.stderr);
      // The ledger as an earlier pgsurge made it: no first_record in either table.
      await other.query('ALTER TABLE pgsurge.chunks DROP COLUMN first_record; ALTER TABLE pgsurge.rejects DROP COLUMN first_record; TRUNCATE public.t');
      const r = await runCli([...args, '--load-id', 'second']);
      assert.equal(r.code, 3, r.stderr);
      assertAccounting(r, 600, 599, 1);
      const recs = await tableRecords(other, 'public.t');
      assert.deepEqual({ count: recs.length, digest: digest(recs) }, { count: 599, digest: digest(ids.filter((id) => id !== 450).map((id) => `${id}|value ${id}`)) });
      const chunks = await other.query<{ c: number; d: number; l: number }>(
        "SELECT count(*)::int AS c, count(DISTINCT first_record)::int AS d, sum(rows_loaded + rows_rejected)::int AS l FROM pgsurge.chunks WHERE load_id = 'second'",
      );
      assert.deepEqual(chunks.rows[0], { c: chunks.rows[0]!.d, d: chunks.rows[0]!.d, l: 600 });
      // The reject carries its chunk's first element: the chunk holding element 450.
      const reject = await other.query<{ ok: boolean }>(
        `SELECT r.first_record = (SELECT max(first_record) FROM pgsurge.chunks WHERE load_id = 'second' AND first_record <= 450) AS ok FROM pgsurge.rejects r WHERE load_id = 'second'`,
      );
      assert.deepEqual(reject.rows, [{ ok: true }]);
    } finally {
      await other.end();
      await client.query(`DROP DATABASE IF EXISTS ${db}`);
    }
  });

  it('6. -w 1000 --truncate is refused (exit 2) before the table is emptied: not enough free connections', async () => {
    const q = await table('many');
    const { csv, records } = rows(100);
    const file = path.join(dir, 'many.csv');
    await fs.writeFile(file, csv);
    await client.query(`INSERT INTO ${q} SELECT g, 'value ' || g FROM generate_series(1, 100) g`);
    for (const durability of [[], ['--durability', 'fast']]) {
      const r = await runCli(['load', file, '-t', 'many', '-f', 'csv', '-w', '1000', '--truncate', ...durability, ...target()]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /--workers 1000 needs 1000 more connections, and the server has \d+ free .*nothing was changed/);
      assert.deepEqual(await state(q), { count: 100, digest: digest(records) }, 'not truncated');
    }
  });

  it('7. a reject file on a full disk fails the load and says the file is incomplete; freed, a resume writes it in full', { skip: firstServerOnly('the reject file is pgsurge\'s') }, async (t) => {
    const q = await table('full');
    const mnt = path.join(dir, 'full');
    await fs.mkdir(mnt);
    const mounted = await new Promise<boolean>((resolve) => {
      const p = spawn('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mnt], { stdio: 'ignore' });
      p.on('close', (code) => resolve(code === 0));
      p.on('error', () => resolve(false));
    });
    if (!mounted) return t.skip('cannot mount a tmpfs here (needs root)');
    try {
      const ids = Array.from({ length: 600 }, (_, i) => i + 1);
      const bad = (id: number): boolean => id % 2 === 0;
      const line = (id: number): string => (bad(id) ? `x${id},${'bad '.repeat(100)}\n` : `${id},value ${id}\n`);
      const file = path.join(dir, 'full.csv');
      await fs.writeFile(file, ids.map(line).join(''));
      const args = ['load', file, '-t', 'full', '-f', 'csv', '--chunk-size', '8KB', '--max-rejects', '10000', '--reject-file', path.join(mnt, 'full.rejects'), ...target()];
      const r = await runCli(args);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /could not write the reject file .*full\.rejects: .*the reject file is INCOMPLETE/);
      assert.match(r.stderr, /every rejected row is kept in the ledger/);
      const good = ids.filter((id) => !bad(id)).map((id) => `${id}|value ${id}`);
      // Stopped part way: the table holds what the ledger says, no more.
      const ledger = await client.query(`SELECT coalesce(sum(rows_loaded), 0)::int AS l, coalesce(sum(rows_rejected), 0)::int AS r FROM pgsurge.chunks WHERE table_oid = '${q}'::regclass`);
      assert.equal((await state(q)).count, ledger.rows[0].l);
      // The message says what the file holds (its whole rows), of how many, and what stays loaded.
      const whole = (await fs.readFile(path.join(mnt, 'full.rejects'), 'utf8')).split('\n').length - 1;
      const said = /INCOMPLETE \(it holds (\d+) of the (\d+) rows? rejected/.exec(r.stderr);
      assert.ok(said, r.stderr);
      assert.deepEqual([Number(said[1]), Number(said[2])], [whole, ledger.rows[0].r], r.stderr);
      assert.ok(whole > 0, 'the disk took some rows before it was full');
      assert.match(r.stderr, new RegExp(`the ${ledger.rows[0].l} rows loaded by committed chunks stay in the table, the chunks in flight were rolled back`));
      // Without the ledger nothing keeps the rows the file lacks, and there is no resume: the message says so.
      const qn = await table('full_nl');
      const nl = await runCli(['load', file, '-t', 'full_nl', '-f', 'csv', '--chunk-size', '8KB', '--max-rejects', '10000', '--no-ledger', '--reject-file', path.join(mnt, 'nl.rejects'), ...target()]);
      assert.equal(nl.code, 1, nl.stderr);
      const nlSaid = /INCOMPLETE \(it holds 0 of the (\d+) rows? rejected\); the load stopped there: the (\d+) rows? loaded by committed chunks stay/.exec(nl.stderr);
      assert.ok(nlSaid, nl.stderr);
      assert.equal(Number(nlSaid[2]), (await state(qn)).count);
      assert.match(nl.stderr, new RegExp(`hint: without the ledger the ${nlSaid[1]} rows? missing from the file are kept nowhere, and the load cannot be resumed: .* --truncate`));
      assert.doesNotMatch(nl.stderr, /then resume|resume with|a resume/);
      await new Promise((resolve) => spawn('umount', [mnt], { stdio: 'ignore' }).on('close', resolve));
      // Room again: the same command (it resumes) writes the whole reject file from the ledger.
      const again = await runCli(args);
      assert.equal(again.code, 3, again.stderr);
      assert.equal(await fs.readFile(path.join(mnt, 'full.rejects'), 'utf8'), ids.filter(bad).map(line).join(''));
      assert.deepEqual(await state(q), { count: 300, digest: digest(good) });
    } finally {
      await new Promise((resolve) => spawn('umount', [mnt], { stdio: 'ignore' }).on('close', resolve));
    }
  });

  it('10. SIGTERM and SIGHUP stop a load like Ctrl-C: message, resume command, exit 130; the resume ends exact', { skip: firstServerOnly('the signal handling is pgsurge\'s; Ctrl-C mid-load runs on every version in resume.test') }, async () => {
    for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
      const name = `sig_${signal.toLowerCase()}`;
      const q = await table(name);
      await client.query(`CREATE OR REPLACE FUNCTION ${SCHEMA}.slow_chunk() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.05); RETURN NULL; END $$`);
      await client.query(`CREATE TRIGGER slow AFTER INSERT ON ${q} FOR EACH STATEMENT EXECUTE FUNCTION ${SCHEMA}.slow_chunk()`);
      const { csv, records } = rows(3000);
      const file = path.join(dir, `${name}.csv`);
      await fs.writeFile(file, csv);
      const run = startCli(['load', file, '-t', name, '-f', 'csv', '--chunk-size', '1KB', '-w', '1', ...target()]);
      await run.waitFor(/pgsurge: load /);
      // Once some chunks are in (a busy machine may take a while to commit the first).
      for (let waited = 0; (await state(q)).count === 0; waited += 50) {
        assert.ok(waited < 30_000, run.stderr());
        await sleep(50);
      }
      run.child.kill(signal);
      const e = await run.exited;
      assert.equal(e.code, 130, run.stderr());
      assert.match(run.stderr(), new RegExp(`interrupted \\(${signal}\\)`));
      const m = /resume with: pgsurge (.*)\n/.exec(run.stderr());
      assert.ok(m, run.stderr());
      const before = (await state(q)).count;
      assert.ok(before > 0 && before < 3000, `stopped part way (${before} rows)`);
      const resumed = await runCli(m[1]!.split(' ').map((a) => a.replace(/^'(.*)'$/, '$1')));
      assert.equal(resumed.code, 0, resumed.stderr);
      assertAccounting(resumed, 3000 - before, 3000 - before, 0);
      assert.deepEqual(await state(q), { count: 3000, digest: digest(records) });
    }
  });

  it('8, 9. --max-rejects stops: the message says what was rejected and where (or that nothing was written, and why); the summary says what the ledger holds', { skip: firstServerOnly('the reject budget and its messages are pgsurge\'s') }, async () => {
    for (const [name, badIds] of [['mr_some', [100, 1500]], ['mr_none', [1500, 1501]]] as const) {
      const q = await table(name);
      const ids = Array.from({ length: 2000 }, (_, i) => i + 1);
      const bad = new Set<number>(badIds);
      const line = (id: number): string => (bad.has(id) ? `x${id},bad\n` : `${id},value ${id}\n`);
      const file = path.join(dir, `${name}.csv`);
      await fs.writeFile(file, ids.map(line).join(''));
      const args = ['load', file, '-t', name, '-f', 'csv', '--chunk-size', '4KB', '-w', '1', ...target()];
      const r = await runCli([...args, '--max-rejects', '1']);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /more than 1 rows rejected .*the chunk at .* bytes \d+–\d+ was rolled back, so its rejected rows are not in any reject file/);
      if (name === 'mr_some') assert.match(r.stderr, /the 1 rows rejected by chunks that committed are in .*mr_some\..*\.rejects/);
      else assert.match(r.stderr, /no reject file was written: no chunk with rejected rows committed before it/);
      const inTable = (await state(q)).count;
      assert.match(r.stdout, new RegExp(`the ledger holds, for this load \\(all runs\\): ${inTable.toLocaleString('en-US')} rows loaded, ${name === 'mr_some' ? 1 : 0} rejected`));
      const m = /resume with: pgsurge (.*)\n/.exec(r.stderr);
      assert.ok(m, r.stderr);
      const resumed = await runCli([...m[1]!.split(' ').map((a) => a.replace(/^'(.*)'$/, '$1')), '--max-rejects', '5']);
      assert.equal(resumed.code, 3, resumed.stderr);
      assert.deepEqual(await state(q), { count: 1998, digest: digest(ids.filter((id) => !bad.has(id)).map((id) => `${id}|value ${id}`)) });
      assert.equal(await fs.readFile(rejectFileOf(resumed), 'utf8'), [...bad].map(line).join(''));
    }
  });

  it("a server error keeps its DETAIL and HINT: --truncate of a table another references", async () => {
    await client.query(`CREATE TABLE ${SCHEMA}.orders (id int PRIMARY KEY, v text); CREATE TABLE ${SCHEMA}.lines (o int REFERENCES ${SCHEMA}.orders)`);
    await client.query(`INSERT INTO ${SCHEMA}.orders VALUES (1, 'value 1'); INSERT INTO ${SCHEMA}.lines VALUES (1)`);
    const file = path.join(dir, 'orders.csv');
    await fs.writeFile(file, rows(10).csv);
    const r = await runCli(['load', file, '-t', 'orders', '-f', 'csv', '--truncate', ...target()]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /cannot truncate a table referenced in a foreign key constraint/);
    assert.match(r.stderr, /detail: Table "lines" references "orders"/);
    assert.match(r.stderr, /hint: Truncate table "lines" at the same time, or use TRUNCATE \.\.\. CASCADE/);
    assert.deepEqual(await state(`${SCHEMA}.orders`), { count: 1, digest: digest(['1|value 1']) }, 'nothing changed');
  });

  it("13. the table name does not steer the default reject file's path (`..`, `/`, a newline)", { skip: firstServerOnly('the reject file\'s path is pgsurge\'s') }, async () => {
    const sub = path.join(dir, 'in');
    await fs.mkdir(sub, { recursive: true });
    const file = path.join(sub, 'x.csv');
    await fs.writeFile(file, '1,one\nnot a number,two\n3,three\n');
    const outside = path.resolve(sub, '../../../tmp/x.rejects');
    await fs.rm(outside, { force: true });
    for (const name of ['../../../tmp/x', 'a\nb']) {
      await client.query(`CREATE TABLE ${SCHEMA}.${client.escapeIdentifier(name)} (id int, v text)`);
      // -t takes names as psql writes them: quoted, so the dots, slashes and newline are the table's.
      const r = await runCli(['load', file, '-t', client.escapeIdentifier(name), '-f', 'csv', ...target()]);
      assert.equal(r.code, 3, r.stderr);
      assertAccounting(r, 3, 2, 1);
      const written = (await fs.readdir(sub)).filter((f) => f.endsWith('.rejects'));
      assert.equal(written.length, 1, `one reject file in the input's folder: ${written.join(', ')}`);
      assert.doesNotMatch(written[0]!, /[\n/]|^\./);
      assert.equal(await fs.readFile(path.join(sub, written[0]!), 'utf8'), 'not a number,two\n');
      await fs.rm(path.join(sub, written[0]!));
      await fs.rm(path.join(sub, `${written[0]!}.log`));
      assert.deepEqual((await state(`${SCHEMA}.${client.escapeIdentifier(name)}`)).digest, digest(['1|one', '3|three']));
    }
    await assert.rejects(fs.stat(outside), 'nothing written outside');
  });
});

/** The test server's URL for another role and database (it trusts its socket: the password is there only to be leaked). */
function urlAs(role: string, database: string, password?: string): string {
  return testUrl().replace(/^postgresql:\/\/[^@/]*@\/[^?]*/, `postgresql://${role}${password ? `:${password}` : ''}@/${database}`);
}

describe('roles and secrets', () => {
  it('15. a role without CREATE on the database loads with the ledger once an owner made schema pgsurge and granted its use', async () => {
    const role = 'exact_nocreate';
    const db = 'exact_nocreate_db';
    await client.query(`DROP DATABASE IF EXISTS ${db}`);
    await client.query(`DROP ROLE IF EXISTS ${role}`);
    await client.query(`CREATE ROLE ${role} LOGIN`);
    await client.query(`CREATE DATABASE ${db}`);
    const owner = new pg.Client({ connectionString: urlAs('postgres', db) });
    await owner.connect();
    try {
      await owner.query(`REVOKE CREATE ON DATABASE ${db} FROM PUBLIC; REVOKE CREATE ON SCHEMA public FROM PUBLIC`);
      await owner.query(`CREATE TABLE public.t (id int, v text); GRANT SELECT, INSERT ON public.t TO ${role}`);
      const { csv, records } = rows(500);
      const file = path.join(dir, 'nocreate.csv');
      await fs.writeFile(file, csv);
      const args = ['load', file, '-t', 't', '-f', 'csv', '--chunk-size', '4KB', '--db', urlAs(role, db)];
      // Before: refused, with the hint that says what an owner must do.
      const refused = await runCli(args);
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, /cannot create the load ledger/);
      assert.match(refused.stderr, /CREATE SCHEMA pgsurge; GRANT USAGE, CREATE ON SCHEMA pgsurge TO/);
      // The workaround, as the hint says it.
      await owner.query(`CREATE SCHEMA pgsurge; GRANT USAGE, CREATE ON SCHEMA pgsurge TO ${role}`);
      const r = await runCli(args);
      assert.equal(r.code, 0, r.stderr);
      assertAccounting(r, 500, 500, 0);
      const recs = await tableRecords(owner, 'public.t');
      assert.deepEqual({ count: recs.length, digest: digest(recs) }, { count: 500, digest: digest(records) });
      // And again: resumed from that ledger, nothing twice.
      const again = await runCli(args);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /^load t-\S+ completed .*: 500 rows loaded, 0 rejected; nothing to load/);
      assert.equal((await tableRecords(owner, 'public.t')).length, 500);
    } finally {
      await owner.end();
      await client.query(`DROP DATABASE IF EXISTS ${db}`);
      await client.query(`DROP ROLE IF EXISTS ${role}`);
    }
  });

  it('a role without rights on the ledger another user made is told what fixes it: the owner\'s GRANT (which then works), or --no-ledger', async () => {
    const role = 'exact_noledger';
    const db = 'exact_noledger_db';
    await client.query(`DROP DATABASE IF EXISTS ${db}`);
    await client.query(`DROP ROLE IF EXISTS ${role}`);
    await client.query(`CREATE ROLE ${role} LOGIN`);
    await client.query(`CREATE DATABASE ${db}`);
    const owner = new pg.Client({ connectionString: urlAs('postgres', db) });
    await owner.connect();
    try {
      await owner.query(`CREATE TABLE public.seed (id int, v text); CREATE TABLE public.t (id int, v text); GRANT SELECT, INSERT ON public.t TO ${role}`);
      const { csv, records } = rows(500);
      const file = path.join(dir, 'noledger-role.csv');
      await fs.writeFile(file, csv);
      // The ledger, made by the database's owner (a superuser here) with a load of its own.
      const seed = await runCli(['load', file, '-t', 'seed', '-f', 'csv', '-q', '--db', urlAs('postgres', db)]);
      assert.equal(seed.code, 0, seed.stderr);
      const args = ['load', file, '-t', 't', '-f', 'csv', '--chunk-size', '4KB', '--db', urlAs(role, db)];
      const refused = await runCli(args);
      assert.equal(refused.code, 1, refused.stderr);
      assert.match(refused.stderr, /^pgsurge: this user may not use the load ledger \(schema pgsurge\) in the target database: permission denied for (schema pgsurge|table \w+)$/m);
      const hint = /hint: have the owner of schema pgsurge run (GRANT .*<this user>); or load with --no-ledger/.exec(refused.stderr);
      assert.ok(hint, refused.stderr);
      assert.equal((await tableRecords(owner, 'public.t')).length, 0, 'nothing loaded');
      // --no-ledger, as the hint says.
      const without = await runCli([...args, '--no-ledger']);
      assert.equal(without.code, 0, without.stderr);
      assertAccounting(without, 500, 500, 0);
      assert.equal(digest(await tableRecords(owner, 'public.t')), digest(records));
      // The GRANT, as the hint says it: then the load keeps a ledger (and a rerun resumes, loading nothing twice).
      await owner.query('TRUNCATE public.t');
      await owner.query(hint[1]!.replaceAll('<this user>', role));
      const granted = await runCli(args);
      assert.equal(granted.code, 0, granted.stderr);
      assertAccounting(granted, 500, 500, 0);
      const again = await runCli(args);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /^load t-\S+ completed .*: 500 rows loaded, 0 rejected; nothing to load/);
      const recs = await tableRecords(owner, 'public.t');
      assert.deepEqual({ count: recs.length, digest: digest(recs) }, { count: 500, digest: digest(records) });
    } finally {
      await owner.end();
      await client.query(`DROP DATABASE IF EXISTS ${db}`);
      await client.query(`DROP ROLE IF EXISTS ${role}`);
    }
  });

  it('the password in --db appears in no message, log, reject file or report of a suite of failing loads', async () => {
    const role = 'exact_secret';
    const password = 'Pw-0f-exact-x7Q';
    await client.query(`DROP ROLE IF EXISTS ${role}`);
    await client.query(`CREATE ROLE ${role} LOGIN SUPERUSER PASSWORD '${password}'`);
    const out = path.join(dir, 'secret');
    await fs.mkdir(out);
    try {
      const url = urlAs(role, 'postgres', password);
      const good = path.join(out, 'in.csv');
      await fs.writeFile(good, '1,one\nx,bad\n3,three\n');
      const nd = path.join(out, 'in.ndjson');
      await fs.writeFile(nd, '{"id": 1, "v": "a"}\n{"id": 2, \n');
      await client.query(`CREATE TABLE ${SCHEMA}.sec (id int, v text)`);
      const db = ['--db', url, '--schema', SCHEMA];
      const runs: CliResult[] = [];
      const run = async (args: string[]): Promise<void> => void runs.push(await runCli(args));
      await run(['load', good, '-t', 'sec', '-f', 'csv', '--report', path.join(out, 'r.html'), ...db]); // a reject, a report
      await run(['load', good, '-t', 'sec', '-f', 'csv', '--json', '--truncate', '--reject-file', path.join(out, 'x.rejects'), ...db]);
      await run(['load', good, '-t', 'sec', '-f', 'csv', '--max-rejects', '0', '--truncate', ...db]); // stops: resume command
      await run(['load', nd, '-t', 'sec', ...db]); // an unframable line
      await run(['load', good, '-t', 'missing', '-f', 'csv', ...db]);
      await run(['load', good, '-t', 'sec', '-f', 'csv', '-w', '5000', ...db]);
      await run(['load', good, '-t', 'sec', '-f', 'csv', '--mode', 'insert', '--commit-every', '1', ...db]);
      await run(['load', good, '-t', 'sec', '-f', 'csv', '--db', urlAs(role, 'no_such_db', password), '--schema', SCHEMA]);
      await run(['load', good, '-t', 'sec', '-f', 'csv', '--db', url.replace('port=', 'port=1'), '--schema', SCHEMA]);
      await run(['load', path.join(out, 'nope.csv'), '-t', 'sec', '-f', 'csv', ...db]);
      await run(['load', good, '-t', 'sec', '-f', 'csv', '--resume', '--load-id', 'never', ...db]);
      assert.ok(runs.some((r) => r.code === 3) && runs.some((r) => r.code === 1) && runs.some((r) => r.code === 2), runs.map((r) => r.code).join(','));
      for (const r of runs) {
        assert.ok(!r.stdout.includes(password) && !r.stderr.includes(password), `the password leaked:\n${r.stdout}\n${r.stderr}`);
      }
      const files = (await fs.readdir(out, { recursive: true })) as string[];
      assert.ok(files.some((f) => f.endsWith('.rejects.log')) && files.some((f) => f.endsWith('.html')), files.join(', '));
      for (const f of files) {
        const text = await fs.readFile(path.join(out, f)).catch(() => Buffer.alloc(0));
        assert.ok(!text.includes(password), `the password is in ${f}`);
      }
    } finally {
      await client.query(`DROP ROLE IF EXISTS ${role}`);
    }
  });
});
