import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { startCli, sleep } from '../helpers/cli-process.js';
import { assertLedgerTiles as ledgerTiles, assertNoHalfChunk as noHalfChunk } from '../helpers/ledger-checks.js';
import { damage, lineitemFields, prng, tableRecord, tblLine } from '../helpers/lineitem-data.js';
import { FIRST_SERVER, firstServerOnly } from '../helpers/temp-cluster.js';
import { closeTestSchema, digest, freshSchema, openTestSchema, PGSURGE, rejectFileOf, runCli, tableRecords, testClient, testUrl } from '../helpers/test-db.js';

const SCHEMA = 'it_resume';
let client: pg.Client;
let dir: string;

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-resume-'));
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

/** 4000 lineitem rows, three of them with a bad date: what the table and the reject file must end up holding. */
async function input(name: string): Promise<{ file: string; size: number; expected: string; badBytes: Buffer }> {
  const rows = lineitemFields(4000);
  const bad = new Set([1234, 3333, 3999]);
  const parts = rows.map((f, i) => (bad.has(i) ? damage(f, 'bad date', tblLine) : tblLine(f)));
  const file = path.join(dir, name);
  const content = Buffer.concat(parts);
  await fs.writeFile(file, content);
  return { file, size: content.length, expected: digest(rows.filter((_, i) => !bad.has(i)).map(tableRecord)), badBytes: Buffer.concat([...bad].sort((a, b) => a - b).map((i) => parts[i]!)) };
}

async function tableState(): Promise<{ count: number; digest: string }> {
  const count = (await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.lineitem`)).rows[0].n as number;
  return { count, digest: digest(await tableRecords(client, `${SCHEMA}.lineitem`)) };
}

const assertLedgerTiles = (loadId: string, size: number): Promise<void> => ledgerTiles(client, `${SCHEMA}.lineitem`, loadId, size);
const assertNoHalfChunk = (loadId: string): Promise<number> => noHalfChunk(client, `${SCHEMA}.lineitem`, loadId);

const target = (): string[] => ['--db', testUrl(), '--schema', SCHEMA];

/** Loads killed by the first test: ten in the runner's first phase, four on each other PostgreSQL version (the same crash, fewer moments). */
const KILLS = FIRST_SERVER ? 10 : 4;

describe('exactly once across crashes', () => {
  it(`SIGKILL at ${KILLS} random moments, then --resume (with other workers and chunk sizes): the table equals the input, once`, async () => {
    const { file, size, expected, badBytes } = await input('lineitem.tbl');
    const random = prng(20261130);
    let kills = 0;
    // The moments are drawn from the load's own length: a load that ended before its kill
    // (a quiet, fast machine) narrows the span, so the later draws fall inside a load.
    let span = 400;
    for (let round = 0; kills < KILLS && round < 25; round++) {
      const loadId = `crash-${round}`;
      const run = startCli(['load', file, '-t', 'lineitem', '--create', '--truncate', '-w', '3', '--chunk-size', '4KB', '--load-id', loadId, ...target()]);
      await run.waitFor(/pgsurge: load crash-\d+/);
      const started = Date.now();
      const endedAt = run.exited.then(() => Date.now());
      await sleep(Math.floor(random() * span));
      if (run.child.exitCode === null) {
        run.child.kill('SIGKILL');
        kills++;
      }
      await run.exited;
      if (run.child.signalCode !== 'SIGKILL') span = Math.max(20, Math.min(span, Math.floor(((await endedAt) - started) * 0.8)));
      await assertNoHalfChunk(loadId);

      const [w, chunk] = round % 2 === 0 ? ['2', '5KB'] : ['4', '16KB'];
      const r = await runCli(['load', file, '-t', 'lineitem', '-w', w, '--chunk-size', chunk, '--resume', '--load-id', loadId, '-q', ...target()]);
      // A load that ended before its kill completed: the resume says so and loads nothing (exit 0).
      assert.equal(r.code, /^load \S+ completed /.test(r.stdout) ? 0 : 3, `round ${round}: ${r.stdout}${r.stderr}`);
      const after = await tableState();
      assert.equal(after.count, 3997, `round ${round}: row count`);
      assert.equal(after.digest, expected, `round ${round}: content`);
      assert.deepEqual(await fs.readFile(path.join(dir, `lineitem.${loadId}.rejects`)), badBytes, `round ${round}: the reject file holds each bad row once`);
      await assertLedgerTiles(loadId, size);
    }
    assert.equal(kills, KILLS, `${KILLS} loads were killed mid-way`);
  });

  it('a worker whose backend is terminated mid-load: its chunk is retried on a fresh connection, the load ends exact', async () => {
    const { file, expected } = await input('terminate.tbl');
    const run = startCli(['load', file, '-t', 'lineitem', '--create', '--truncate', '-w', '3', '--chunk-size', '2KB', '--load-id', 'terminate-me', ...target()]);
    await run.waitFor(/pgsurge: load terminate-me/);
    let terminated = 0;
    const deadline = Date.now() + 10_000;
    while (terminated === 0 && Date.now() < deadline && run.child.exitCode === null) {
      const r = await client.query(
        "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name LIKE 'pgsurge terminate-me w%' AND state IN ('active', 'idle in transaction') LIMIT 1",
      );
      terminated = r.rows.filter((x) => x.ok === true).length;
      if (terminated === 0) await sleep(5);
    }
    assert.equal(terminated, 1, 'a worker backend was terminated while loading');
    const { code } = await run.exited;
    assert.equal(code, 3, run.stderr());
    assert.match(run.stderr(), /lost the connection loading .*terminate\.tbl at byte \d+ \(.+\); retry 1 in \d+ ms on a new connection/);
    const t = await tableState();
    assert.equal(t.count, 3997);
    assert.equal(t.digest, expected);
  });

  it('Ctrl-C: stops within seconds (exit 130), keeps no half chunk, prints the resume command that finishes the load', async () => {
    const { file, size, expected } = await input('interrupt.tbl');
    const run = startCli(['load', file, '-t', 'lineitem', '--create', '--truncate', '-w', '2', '--chunk-size', '2KB', '--load-id', 'ctrl-c', ...target()]);
    await run.waitFor(/pgsurge: load ctrl-c/);
    await sleep(150);
    const sentAt = Date.now();
    run.child.kill('SIGINT');
    const { code } = await run.exited;
    assert.ok(Date.now() - sentAt < 3000, `stopped in ${Date.now() - sentAt} ms`);
    assert.equal(code, 130, run.stderr());
    const m = /resume with: pgsurge (.*)\n/.exec(run.stderr());
    assert.ok(m, run.stderr());
    const t = await assertNoHalfChunk('ctrl-c');
    assert.ok(t < 3997, 'interrupted before the end');
    // The printed command, as a shell would split it (single-quoted words).
    const args = [...m[1]!.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((x) => (x[1] !== undefined ? x[1].replace(/'\\''/g, "'") : x[2]!));
    const r = await runCli(args);
    assert.equal(r.code, 3, r.stderr);
    const done = await tableState();
    assert.equal(done.count, 3997);
    assert.equal(done.digest, expected);
    await assertLedgerTiles('ctrl-c', size);
    assert.ok(PGSURGE.length > 0);
  });

  it('the server out of disk space (53100, raised here by a trigger): a clear message, nothing half-committed, the resume finishes', async () => {
    const { file, size, expected } = await input('diskfull.tbl');
    // The table, created by pgsurge itself from a one-line file.
    const one = path.join(dir, 'one.tbl');
    await fs.writeFile(one, (await fs.readFile(file)).subarray(0, (await fs.readFile(file)).indexOf(10) + 1));
    assert.equal((await runCli(['load', one, '-t', 'lineitem', '--create', '--no-ledger', '-q', ...target()])).code, 0);
    await client.query(`CREATE FUNCTION ${SCHEMA}.full_disk() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.l_orderkey = 2500 THEN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END IF; RETURN NEW; END $$`);
    await client.query(`CREATE TRIGGER full_disk BEFORE INSERT ON ${SCHEMA}.lineitem FOR EACH ROW EXECUTE FUNCTION ${SCHEMA}.full_disk()`);
    try {
      const r = await runCli(['load', file, '-t', 'lineitem', '--truncate', '-w', '2', '--chunk-size', '8KB', '--load-id', 'disk-full', ...target()]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /pgsurge: the server is out of disk space: loading .*diskfull\.tbl \(bytes \d+–\d+\).*No space left on device.*\[SQLSTATE 53100\]/);
      assert.match(r.stderr, /resume with: pgsurge load .* --resume --load-id disk-full/);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace without --verbose');
      const kept = await assertNoHalfChunk('disk-full');
      assert.ok(kept > 0 && kept < 3997, `kept ${kept}`);
    } finally {
      await client.query(`DROP TRIGGER full_disk ON ${SCHEMA}.lineitem`);
    }
    const r2 = await runCli(['load', file, '-t', 'lineitem', '-w', '3', '--resume', '--load-id', 'disk-full', '-q', ...target()]);
    assert.equal(r2.code, 3, r2.stderr);
    const t = await tableState();
    assert.equal(t.count, 3997);
    assert.equal(t.digest, expected);
    await assertLedgerTiles('disk-full', size);
  });

  it('stdin: a stopped load resumes from the same bytes piped again, committed records dropped', { skip: firstServerOnly('the stdin spool and its resume are pgsurge\'s') }, async () => {
    const { file, expected, badBytes } = await input('stdin.tbl');
    const data = await fs.readFile(file);
    const args = ['load', '-', '-f', 'tbl', '-t', 'lineitem', '-w', '2', '--chunk-size', '4KB', '--load-id', 'from-stdin', '--reject-dir', dir, ...target()];
    const r1 = await runCli([...args, '--create', '--truncate', '--max-rejects', '0'], { stdin: data });
    assert.equal(r1.code, 1, r1.stderr);
    assert.match(r1.stderr, /resume with: pgsurge load - .*--resume --load-id from-stdin/);
    const kept = await assertNoHalfChunk('from-stdin');
    assert.ok(kept > 0 && kept < 3997, `kept ${kept}`);
    // The resume reads the same bytes, with chunks cut elsewhere (--chunk-size differs), and skips what is in.
    const r2 = await runCli([...args.map((a) => (a === '4KB' ? '7KB' : a)), '--resume', '-q'], { stdin: data });
    assert.equal(r2.code, 3, r2.stderr);
    assert.match(r2.stdout, new RegExp(`earlier runs of this load had committed ${kept.toLocaleString('en-US')} rows`));
    const t = await tableState();
    assert.equal(t.count, 3997);
    assert.equal(t.digest, expected);
    assert.deepEqual(await fs.readFile(rejectFileOf(r2)), badBytes);
  });

  it('resuming onto a changed file is refused with a clear message', { skip: firstServerOnly('the file check is pgsurge\'s, before any load') }, async () => {
    const { file } = await input('changing.tbl');
    const r1 = await runCli(['load', file, '-t', 'lineitem', '--create', '--truncate', '-w', '2', '--load-id', 'changes', '-q', ...target()]);
    assert.equal(r1.code, 3, r1.stderr);
    // Changed in place (its first byte), not appended to: the part loaded is not what was loaded.
    const content = await fs.readFile(file);
    content[0] = content[0] === 0x39 ? 0x38 : 0x39;
    await fs.writeFile(file, content);
    const r2 = await runCli(['load', file, '-t', 'lineitem', '--resume', '--load-id', 'changes', '-q', ...target()]);
    assert.equal(r2.code, 1);
    assert.match(r2.stderr, /changing\.tbl is not the file load changes began with: modified .*its first or last 64 KB differ/);
    assert.equal((await tableState()).count, 3997, 'the refused resume loaded nothing');
    // Without --load-id too: a file whose loaded part changed is refused (exit 2), with the choices, before anything is loaded.
    const r4 = await runCli(['load', file, '-t', 'lineitem', '-w', '2', '-q', ...target()]);
    assert.equal(r4.code, 2, r4.stderr);
    assert.match(r4.stderr, /changing\.tbl changed since load changes put it into it_resume\.lineitem \(.*\); its runs committed 3,997 rows of it .*nothing was loaded/);
    assert.match(r4.stderr, /hint: --truncate .*--again/);
    assert.equal((await tableState()).count, 3997, 'the refused load loaded nothing');
    await client.query(`TRUNCATE ${SCHEMA}.lineitem`);
    const r3 = await runCli(['load', file, '-t', 'lineitem', '--resume', '--load-id', 'never-ran', '-q', ...target()]);
    assert.equal(r3.code, 2, 'a wrong --load-id is a command-line error: nothing was done');
    assert.match(r3.stderr, /there is no earlier load with id never-ran to resume/);
    assert.equal((await tableState()).count, 0, 'nothing was loaded by the refused resume');
  });

  it('a rerun after the table was emptied behind the load\'s back is refused, not taken as done; --truncate starts over, --resume trusts the ledger', async () => {
    const { file, expected } = await input('emptied.tbl');
    const args = ['load', file, '-t', 'lineitem', '--create', '-w', '2', '--chunk-size', '64KB', '-q', ...target()];
    assert.equal((await runCli([...args, '--truncate'])).code, 3);
    assert.equal((await tableState()).digest, expected);
    // The same command again: the ledger says it is all in, and it is: nothing to do.
    const again = await runCli(args);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^load \S+ completed .*: 3,997 rows loaded, 3 rejected; nothing to load/);
    assert.equal((await tableState()).digest, expected);

    await client.query(`TRUNCATE ${SCHEMA}.lineitem`);
    const refused = await runCli(args);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /it_resume\.lineitem was emptied or rewritten since load \S+ put 3,997 rows of .*emptied\.tbl into it \(TRUNCATE, VACUUM FULL, CLUSTER or ALTER TABLE gave it a new file\)/);
    assert.match(refused.stderr, /hint: start over with --truncate/);
    assert.equal((await tableState()).count, 0, 'the refused rerun loaded nothing');
    const over = await runCli([...args, '--truncate']);
    assert.equal(over.code, 3, over.stderr);
    assert.equal((await tableState()).digest, expected);

    // VACUUM FULL keeps the rows but gives the table a new file: --resume says the rows are still there.
    await client.query(`VACUUM FULL ${SCHEMA}.lineitem`);
    assert.equal((await runCli(args)).code, 2);
    const resumed = await runCli([...args, '--resume']);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, /^load \S+ completed .*: 3,997 rows loaded, 3 rejected; nothing to load/);
    assert.equal((await tableState()).digest, expected, 'still every row once');
    assert.equal((await runCli(args)).code, 0, 'after --resume the ledger follows the table to its new file: completed, not refused');
  });
});
