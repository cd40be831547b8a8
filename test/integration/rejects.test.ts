import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { csvLine, DAMAGE_KINDS, damage, lineitemFields, prng, tableRecord, tblLine, type DamageKind } from '../helpers/lineitem-data.js';
import { closeTestSchema, digest, freshSchema, rejectFileOf, runCli, tableRecords, testClient, testUrl, openTestSchema } from '../helpers/test-db.js';
import { parseRejectLog as parseLog, summaryCounts } from '../helpers/reject-log.js';

const SCHEMA = 'it_rejects';
let client: pg.Client;
let dir: string;

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-rejects-'));
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

const db = (): string[] => ['--db', testUrl(), '--schema', SCHEMA, '-q'];

interface Corrupted {
  readonly content: Buffer;
  /** Damaged records: 1-based first physical line, bytes, kind. */
  readonly bad: { line: number; offset: number; bytes: Buffer; kind: DamageKind }[];
  /** Table records the good rows make. */
  readonly expected: string[];
}

/** n rows; k of them (never the first) damaged in each way in turn, at seeded random places. */
function corrupt(n: number, k: number, seed: number, format: 'tbl' | 'csv'): Corrupted {
  const rows = lineitemFields(n, { newlines: format === 'csv' });
  const write = format === 'tbl' ? tblLine : csvLine;
  const kinds: DamageKind[] = format === 'csv' ? [...DAMAGE_KINDS, 'stray quotes'] : [...DAMAGE_KINDS];
  const random = prng(seed);
  const picked = new Map<number, DamageKind>();
  while (picked.size < k) {
    const i = 1 + Math.floor(random() * (n - 2));
    if (!picked.has(i)) picked.set(i, kinds[picked.size % kinds.length]!);
  }
  const parts: Buffer[] = [];
  const bad: Corrupted['bad'] = [];
  const expected: string[] = [];
  let line = 1;
  let offset = 0;
  rows.forEach((fields, i) => {
    const kind = picked.get(i);
    let bytes = kind ? damage(fields, kind, write) : write(fields);
    if (format === 'csv' && i === n - 1) {
      // A quote that never closes, on the last line: the rest of the input is that one record.
      bytes = Buffer.from(bytes.toString().replace(/,([^,]*)\n$/, ',"$1\n'));
      bad.push({ line, offset, bytes, kind: 'stray quotes' });
    } else if (kind) bad.push({ line, offset, bytes, kind });
    else expected.push(tableRecord(fields));
    parts.push(bytes);
    offset += bytes.length;
    line += bytes.toString('latin1').split('\n').length - 1;
  });
  return { content: Buffer.concat(parts), bad, expected };
}

async function tableDigest(table: string): Promise<{ count: number; digest: string }> {
  const count = (await client.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n as number;
  return { count, digest: digest(await tableRecords(client, table)) };
}

describe('a corrupted input: exactly the damaged lines are rejected, verbatim, and the rest loads', () => {
  for (const format of ['tbl', 'csv'] as const) {
    for (const workers of [1, 4]) {
      it(`${format}, ${workers} worker${workers > 1 ? 's' : ''}: 14 damaged lines of 3000`, async () => {
        const { content, bad, expected } = corrupt(3000, 14, 42 + workers, format);
        const file = path.join(dir, `lineitem.${format}`);
        await fs.writeFile(file, content);
        const r = await runCli(['load', file, '-t', 'lineitem', '--create', '--truncate', '-w', String(workers), '--chunk-size', '8KB', ...db()]);
        assert.equal(r.code, 3, `exit 3 means rejects\n${r.stderr}`);

        // Its log: file, line, byte offset, SQLSTATE and message of each.
        const rejectFile = rejectFileOf(r);
        const log = parseLog(await fs.readFile(`${rejectFile}.log`, 'utf8'));
        assert.deepEqual(log.map((l) => [l.line, l.offset]), bad.map((b) => [b.line, b.offset]));
        // The reject file: the damaged records, byte for byte, in input order.
        const rejects = await fs.readFile(rejectFile);
        assert.deepEqual(rejects, Buffer.concat(bad.map((b) => b.bytes)));
        assert.equal((await fs.stat(rejectFile)).mode & 0o777, 0o600);
        for (const [i, l] of log.entries()) {
          assert.equal(l.file, file);
          const kind = bad[i]!.kind;
          const want = { 'extra column': '22P04', 'missing column': '22P04', 'bad date': '22008', 'bad number': '22P02', 'overlong varchar': '22001', 'invalid UTF-8': '22021', 'stray quotes': bad[i]!.line === bad[bad.length - 1]!.line && format === 'csv' ? '22P04' : '22P02' }[kind];
          assert.equal(l.sqlstate, want, `${kind} at line ${l.line}: ${l.message}`);
          assert.ok(l.message.length > 0);
          if (kind === 'bad date') assert.equal(l.column, 'l_shipdate');
        }

        // The table holds every good row once, and the summary accounts for every row.
        const t = await tableDigest(`${SCHEMA}.lineitem`);
        assert.equal(t.count, expected.length);
        assert.equal(t.digest, digest(expected));
        const c = summaryCounts(r.stdout, 'lineitem');
        assert.deepEqual(c, { read: 3000, loaded: expected.length, rejected: bad.length, skipped: 0 });
        assert.equal(c.read, c.loaded + c.rejected + c.skipped);
      });
    }
  }

  it('a rerun of the same command loads nothing twice and rejects nothing twice', async () => {
    const { content, bad, expected } = corrupt(1000, 5, 7, 'tbl');
    const file = path.join(dir, 'again.tbl');
    await fs.writeFile(file, content);
    const args = ['load', file, '-t', 'lineitem', '--create', '-w', '3', '--chunk-size', '4KB', '--db', testUrl(), '--schema', SCHEMA];
    await client.query(`TRUNCATE ${SCHEMA}.lineitem`);
    const first = await runCli([...args, '--truncate']);
    assert.equal(first.code, 3);
    // The load completed: one line, nothing read, the reject file as the load left it.
    const r = await runCli(args);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^load \S+ completed .*: 995 rows loaded, 5 rejected; nothing to load/);
    assert.deepEqual(await fs.readFile(rejectFileOf(first)), Buffer.concat(bad.map((b) => b.bytes)));
    const t = await tableDigest(`${SCHEMA}.lineitem`);
    assert.equal(t.count, expected.length);
    assert.equal(t.digest, digest(expected));
  });

  it('--no-ledger: rejects still work, nothing goes to the ledger, and --resume is refused', async () => {
    const { content, bad, expected } = corrupt(1000, 4, 11, 'tbl');
    const file = path.join(dir, 'noledger.tbl');
    await fs.writeFile(file, content);
    const ledgerRows = async (): Promise<number> =>
      (await client.query(`SELECT count(*)::int AS n FROM pgsurge.chunks WHERE table_oid = '${SCHEMA}.lineitem'::regclass`)).rows[0].n as number;
    const r = await runCli(['load', file, '-t', 'lineitem', '--create', '--truncate', '-w', '2', '--chunk-size', '4KB', '--no-ledger', ...db()]);
    assert.equal(r.code, 3, r.stderr);
    assert.deepEqual(summaryCounts(r.stdout, 'lineitem'), { read: 1000, loaded: 996, rejected: 4, skipped: 0 });
    assert.doesNotMatch(r.stdout, /load id/);
    const rejects = await fs.readFile(rejectFileOf(r));
    assert.equal(rejects.length, Buffer.concat(bad.map((b) => b.bytes)).length);
    const t = await tableDigest(`${SCHEMA}.lineitem`);
    assert.equal(t.digest, digest(expected));
    const r2 = await runCli(['load', file, '-t', 'lineitem', '--no-ledger', '--resume', ...db()]);
    assert.equal(r2.code, 2);
    assert.match(r2.stderr, /--resume and --load-id need the ledger/);
    // Stopped by --max-rejects: nothing promises a resume that cannot be; it says what to do instead.
    const r3 = await runCli(['load', file, '-t', 'lineitem', '--truncate', '-w', '1', '--chunk-size', '4KB', '--no-ledger', '--max-rejects', '1', ...db()]);
    assert.equal(r3.code, 1, r3.stderr);
    const c3 = summaryCounts(r3.stdout, 'lineitem');
    assert.equal(c3.read, c3.loaded + c3.rejected + c3.skipped);
    assert.equal((await tableDigest(`${SCHEMA}.lineitem`)).count, c3.loaded);
    assert.match(r3.stderr, /more than 1 rows rejected/);
    assert.match(r3.stderr, /without the ledger nothing keeps them/);
    assert.match(r3.stderr, /hint: .*without the ledger the load cannot be resumed: .*--truncate/);
    assert.match(r3.stderr, /this load cannot be resumed/);
    assert.doesNotMatch(r3.stderr.replace(/cannot be resumed/g, ''), /resum/, 'no word of a resume that cannot be');
    assert.equal(await ledgerRows(), 0, 'no ledger rows (--truncate forgot the earlier ones, --no-ledger wrote none)');
  });

  it('two loads never share a reject file: each summary names its own, which keeps its rows (default name, --no-ledger, --reject-file)', async () => {
    const shared = path.join(dir, 'shared');
    await fs.mkdir(shared);
    const a = corrupt(600, 3, 101, 'tbl');
    const b = corrupt(700, 5, 102, 'tbl');
    const fileA = path.join(shared, 'a.tbl');
    const fileB = path.join(shared, 'b.tbl');
    await fs.writeFile(fileA, a.content);
    await fs.writeFile(fileB, b.content);
    // Without the ledger the rows are in the order their chunks committed: compared as sets of lines.
    const bytesOf = (x: typeof a): string => x.bad.map((r) => r.bytes.toString('latin1')).sort().join('|');
    const readRows = async (file: string): Promise<string> => ((await fs.readFile(file, 'latin1')).match(/[^\n]*\n/g) ?? []).sort().join('|');
    const load = (file: string, ...more: string[]) => runCli(['load', file, '-t', 'lineitem', '--create', '-w', '2', '--chunk-size', '4KB', ...more, ...db()]);
    const accounted = (r: { stdout: string }, read: number, rejected: number): void => {
      const c = summaryCounts(r.stdout, 'lineitem');
      assert.deepEqual(c, { read, loaded: read - rejected, rejected, skipped: 0 });
    };
    for (const ledger of [[], ['--no-ledger']]) {
      await client.query(`TRUNCATE ${SCHEMA}.lineitem`);
      const ra = await load(fileA, ...ledger);
      const rb = await load(fileB, ...ledger);
      assert.equal(ra.code, 3, ra.stderr);
      assert.equal(rb.code, 3, rb.stderr);
      accounted(ra, 600, 3);
      accounted(rb, 700, 5);
      assert.notEqual(rejectFileOf(ra), rejectFileOf(rb), `${ledger.join(' ')}: one file each`);
      assert.equal(path.dirname(rejectFileOf(ra)), shared);
      assert.match(ra.stderr, new RegExp(`^pgsurge: 3 rows rejected: see ${rejectFileOf(ra).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} and its \\.log$`, 'm'));
      assert.deepEqual(await readRows(rejectFileOf(ra)), bytesOf(a), `${ledger.join(' ')}: the first load's rejects are still there`);
      assert.deepEqual(await readRows(rejectFileOf(rb)), bytesOf(b));
      const t = await tableDigest(`${SCHEMA}.lineitem`);
      assert.equal(t.digest, digest([...a.expected, ...b.expected]));
    }
    // Without the ledger a rerun of the same command is a new load (nothing to resume): its rejects go beside the first run's, not over them.
    await client.query(`TRUNCATE ${SCHEMA}.lineitem`);
    const first = await load(fileA, '--no-ledger');
    const again = await load(fileA, '--no-ledger');
    assert.equal(again.code, 3, again.stderr);
    assert.notEqual(rejectFileOf(again), rejectFileOf(first));
    assert.deepEqual(await readRows(rejectFileOf(first)), bytesOf(a));
    assert.deepEqual(await readRows(rejectFileOf(again)), bytesOf(a));
    // --reject-file: a load takes a file that is free or its own (a resume writes every run's rows again), never another load's.
    const named = path.join(shared, 'mine.rejects');
    await client.query(`TRUNCATE ${SCHEMA}.lineitem`);
    const own = await load(fileA, '--reject-file', named, '--load-id', 'named-a');
    assert.equal(own.code, 3, own.stderr);
    assert.equal(rejectFileOf(own), named);
    const other = await load(fileB, '--reject-file', named);
    assert.equal(other.code, 2, other.stderr);
    assert.match(other.stderr, /--reject-file .*mine\.rejects already holds the rejected rows of load named-a/);
    assert.deepEqual(await readRows(named), bytesOf(a), 'left as it was');
    const resumed = await load(fileA, '--reject-file', named, '--load-id', 'named-a');
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, /^load named-a completed .*: 597 rows loaded, 3 rejected; nothing to load/);
    assert.deepEqual(await readRows(named), bytesOf(a), 'the completed load\'s file as it was, its rows once');
    assert.equal((await tableDigest(`${SCHEMA}.lineitem`)).digest, digest(a.expected));
  });

  it('--max-rejects: past it the load stops (exit 1), what was committed stays and is accounted', async () => {
    const { content } = corrupt(2000, 30, 3, 'tbl');
    const file = path.join(dir, 'many.tbl');
    await fs.writeFile(file, content);
    const r = await runCli(['load', file, '-t', 'lineitem', '--create', '--truncate', '-w', '2', '--chunk-size', '4KB', '--max-rejects', '10', '--reject-dir', path.join(dir, 'rj'), ...db()]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /more than 10 rows rejected \(--max-rejects 10\)/);
    assert.match(r.stderr, /resume with: pgsurge load .*--max-rejects 10 .*--resume --load-id lineitem-/);
    const c = summaryCounts(r.stdout, 'lineitem');
    assert.ok(c.rejected <= 10, `rejected ${c.rejected}`);
    assert.equal(c.read, c.loaded + c.rejected + c.skipped);
    assert.equal((await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.lineitem`)).rows[0].n, c.loaded);
    const rejectFile = rejectFileOf(r);
    assert.equal(path.dirname(rejectFile), path.join(dir, 'rj'));
    const log = parseLog(await fs.readFile(`${rejectFile}.log`, 'utf8'));
    assert.equal(log.length, c.rejected);
  });

  it('a column-count mismatch in the first record stops before anything is written', async () => {
    const file = path.join(dir, 'region.tbl');
    await fs.writeFile(file, '0|AFRICA|\n1|AMERICA|x|\n');
    const r = await runCli(['load', file, '--create', ...db()]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /region\.tbl:1: table it_rejects\.region has 3 columns, the first record has 2 fields \(format tbl\)/);
    assert.match(r.stderr, /hint: check the table/);
    assert.equal((await client.query("SELECT to_regclass('it_rejects.region') AS t")).rows[0].t, null, '--create rolled back');
  });
});

describe('errors without a line: bisected', () => {
  it('foreign-key violations are found by bisection and rejected with SQLSTATE 23503', async () => {
    await client.query(`CREATE TABLE ${SCHEMA}.parent (id int PRIMARY KEY)`);
    await client.query(`INSERT INTO ${SCHEMA}.parent SELECT generate_series(1, 100)`);
    await client.query(`CREATE TABLE ${SCHEMA}.child (id int, parent_id int REFERENCES ${SCHEMA}.parent, note text)`);
    const lines: string[] = [];
    const badLines: number[] = [];
    for (let i = 1; i <= 600; i++) {
      const orphan = i % 97 === 0;
      if (orphan) badLines.push(i);
      lines.push(`${i}\t${orphan ? 1000 + i : (i % 100) + 1}\tnote ${i}`);
    }
    const file = path.join(dir, 'child.txt');
    await fs.writeFile(file, lines.join('\n') + '\n');
    const r = await runCli(['load', file, '-t', 'child', '-w', '2', '--chunk-size', '2KB', ...db()]);
    assert.equal(r.code, 3, r.stderr);
    const log = parseLog(await fs.readFile(`${rejectFileOf(r)}.log`, 'utf8'));
    assert.deepEqual(log.map((l) => l.line), badLines);
    assert.ok(log.every((l) => l.sqlstate === '23503' && /foreign key/.test(l.message)));
    assert.equal(await fs.readFile(rejectFileOf(r), 'utf8'), badLines.map((i) => lines[i - 1] + '\n').join(''));
    const got = await client.query(`SELECT count(*)::int AS n, count(DISTINCT id)::int AS d FROM ${SCHEMA}.child`);
    assert.deepEqual(got.rows[0], { n: 600 - badLines.length, d: 600 - badLines.length });
  });

  it('a duplicate key: the second occurrence is rejected (23505), the first stays', async () => {
    await client.query(`CREATE TABLE ${SCHEMA}.keyed (id int PRIMARY KEY, v text)`);
    const lines = Array.from({ length: 300 }, (_, i) => `${i}\tv${i}`);
    lines.push('17\tduplicate');
    lines.push('300\tlast');
    const file = path.join(dir, 'keyed.txt');
    await fs.writeFile(file, lines.join('\n') + '\n');
    const r = await runCli(['load', file, '-t', 'keyed', '-w', '1', '--chunk-size', '1KB', ...db()]);
    assert.equal(r.code, 3, r.stderr);
    assert.equal(await fs.readFile(rejectFileOf(r), 'utf8'), '17\tduplicate\n');
    assert.match(await fs.readFile(`${rejectFileOf(r)}.log`, 'utf8'), /\t301\t\d+\t23505\t/);
    assert.equal((await client.query(`SELECT v FROM ${SCHEMA}.keyed WHERE id = 17`)).rows[0].v, 'v17');
  });
});

describe('identifiers and secrets', () => {
  it('a table and columns named with quotes, spaces, semicolons and upper case; the password never shows', async () => {
    const schema = 'It "Odd"; Schema';
    const table = 'We"ird; Table';
    const q = (s: string): string => `"${s.replace(/"/g, '""')}"`;
    await client.query(`DROP SCHEMA IF EXISTS ${q(schema)} CASCADE`);
    await client.query(`CREATE SCHEMA ${q(schema)}`);
    try {
      await client.query(`CREATE TABLE ${q(schema)}.${q(table)} (${q('Col "A"')} int, ${q('b; DROP TABLE x')} text, ${q(' sp ace')} date)`);
      const file = path.join(dir, 'odd.csv');
      await fs.writeFile(file, '1,"a; DROP TABLE x",2020-01-01\n2,b,2020-02-30\n3,"c ""q""",2020-03-01\n');
      // A password in the URL: the test server trusts the socket, so it is ignored, but it must never be printed.
      const url = testUrl().replace(/^postgresql:\/\/([^@:]*)@/, 'postgresql://$1:S3cretPw@');
      assert.match(url, /S3cretPw/);
      // -t as psql users write it (a quoted name keeps its quotes doubled); --schema is taken as the exact name.
      const r = await runCli(['load', file, '-t', q(table), '--schema', schema, '-w', '2', '--db', url, '--max-rejects', '0']);
      assert.equal(r.code, 1, r.stderr);
      assert.doesNotMatch(r.stdout + r.stderr, /S3cretPw/);
      assert.match(r.stderr, /--db 'postgresql:\/\/postgres:\*\*\*@/);
      const r2 = await runCli(['load', file, '-t', q(table), '--schema', schema, '-w', '2', '--db', url]);
      assert.equal(r2.code, 3, r2.stderr);
      assert.doesNotMatch(r2.stdout + r2.stderr, /S3cretPw/);
      const rows = await client.query(`SELECT ${q('Col "A"')} AS a, ${q('b; DROP TABLE x')} AS b FROM ${q(schema)}.${q(table)} ORDER BY 1`);
      assert.deepEqual(rows.rows, [
        { a: 1, b: 'a; DROP TABLE x' },
        { a: 3, b: 'c "q"' },
      ]);
      assert.ok(path.basename(rejectFileOf(r2)).startsWith(`${table}.`), rejectFileOf(r2));
      assert.equal(await fs.readFile(rejectFileOf(r2), 'utf8'), '2,b,2020-02-30\n');
      const ledger = await client.query("SELECT count(*)::int AS n FROM pgsurge.chunks WHERE table_name = format('%I.%I', $1::text, $2::text)", [schema, table]);
      assert.ok(ledger.rows[0].n >= 1);
      const leaked = await client.query("SELECT count(*)::int AS n FROM pgsurge.chunks c, pgsurge.load_files f WHERE c::text LIKE '%S3cretPw%' OR f::text LIKE '%S3cretPw%'");
      assert.equal(leaked.rows[0].n, 0);
    } finally {
      await client.query(`DROP SCHEMA ${q(schema)} CASCADE`);
    }
  });
});
