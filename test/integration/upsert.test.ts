import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { startCli, sleep } from '../helpers/cli-process.js';
import { closeTestSchema, copyFrom, digest, openTestSchema, rejectFileOf, runCli, tableRecords, testClient, testUrl, type CliResult } from '../helpers/test-db.js';
import { prng } from '../helpers/lineitem-data.js';

/**
 * `--on-conflict update` and `--mode delete`: the table after a load equals the server's own
 * sequential application of the file (COPY into a temporary table, then each row applied in
 * file order), at any -w, after a kill -9 and a resume, with rows that break another unique
 * key rejected with the server's message.
 */
const SCHEMA = 'it_upsert';
let client: pg.Client;
let dir: string;

const KEYS = 600;
const REPEATS = 6;
const EXISTING = 80; // keys 1..80 are in the table before the load, with a note the file does not touch

/** Every key REPEATS times, in a shuffled order: the same key lands in several chunks, far apart. */
function upsertLines(seed: number, last: (line: string, i: number) => string = (l) => l): string[] {
  const random = prng(seed);
  const keys: number[] = [];
  for (let r = 0; r < REPEATS; r++) for (let k = 1; k <= KEYS; k++) keys.push(k);
  for (let i = keys.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [keys[i], keys[j]] = [keys[j]!, keys[i]!];
  }
  return keys.map((k, i) => last(`${k}\tv${i}-${'x'.repeat(i % 7)}\t${(i / 3).toFixed(2)}\t${100_000 + i}`, i));
}

/**
 * The key's type picks the way: an integer (or text) key goes by key lanes (a key's rows all
 * on one session, in file order); a numeric one, whose equal values pgsurge does not tell
 * from their text, by the order table (each key's last position).
 */
type KeyType = 'int' | 'numeric';
const TABLE_DDL = (name: string, key: KeyType = 'int'): string =>
  `CREATE TABLE ${SCHEMA}.${name} (id ${key} PRIMARY KEY, v text NOT NULL, n numeric(12,2), u int UNIQUE, note text DEFAULT 'new')`;

async function freshTable(name: string, key: KeyType = 'int'): Promise<void> {
  await client.query(`DROP TABLE IF EXISTS ${SCHEMA}.${name}`);
  await client.query(TABLE_DDL(name, key));
  await client.query(`INSERT INTO ${SCHEMA}.${name} SELECT g, 'old', g, g, 'existing ' || g FROM generate_series(1, ${EXISTING}) g`);
}

/**
 * The reference: the server's COPY of the same bytes into a temporary table (each row's
 * place kept), then every row applied on its own, in file order; a row the server refuses
 * (another unique key) is left out, as pgsurge rejects it.
 */
async function reference(file: string, update: readonly string[] = ['v', 'n', 'u']): Promise<string> {
  await freshTable('ref');
  const columns = [['id', 'int'], ['v', 'text'], ['n', 'numeric(12,2)'], ['u', 'int']] as const;
  const set = update.map((c) => `${c} = excluded.${c}`).join(', ');
  await applyRowByRow(file, columns, `INSERT INTO ${SCHEMA}.ref (id, v, n, u) VALUES (r.id, r.v, r.n, r.u) ON CONFLICT (id) DO UPDATE SET ${set}`);
  return digest(await tableRecords(client, `${SCHEMA}.ref`));
}

/**
 * The server's COPY of `file` into a temporary table of `columns` (name, type; each row's place kept),
 * then `insert` run for each row `r` on its own, in file order; a row that breaks a unique
 * key, a NOT NULL or a CHECK is left out.
 */
async function applyRowByRow(file: string, columns: readonly (readonly [string, string])[], insert: string): Promise<void> {
  await client.query('DROP TABLE IF EXISTS pg_temp.ref_stage');
  await client.query(`CREATE TEMP TABLE ref_stage (${columns.map(([n, t]) => `${n} ${t}`).join(', ')}, pos bigint GENERATED ALWAYS AS IDENTITY)`);
  const stream = client.query(copyFrom(`COPY ref_stage (${columns.map(([n]) => n).join(', ')}) FROM STDIN`));
  stream.end(await fs.readFile(file));
  await finished(stream);
  await client.query(`DO $$ DECLARE r record; BEGIN
      FOR r IN SELECT * FROM ref_stage ORDER BY pos LOOP
        BEGIN
          ${insert};
        EXCEPTION WHEN unique_violation OR not_null_violation OR check_violation THEN NULL;
        END;
      END LOOP;
    END $$`);
}

interface Counts {
  read: number;
  loaded: number;
  rejected: number;
  skipped: number;
}

/** The table's counts from `--json`'s summary event (the last line). */
function summaryOf(stdout: string): Counts & { wire?: { wire: string; binaryChunks: number }[] } {
  const last = JSON.parse(stdout.trim().split('\n').at(-1)!) as { tables: Counts[]; wire?: { wire: string; binaryChunks: number }[] };
  return { ...last.tables[0]!, ...(last.wire ? { wire: last.wire } : {}) };
}

/**
 * `--update-columns v` into a fresh kv (numeric key: the order table) at -w 2 from two inputs, the first a named pipe
 * the caller writes `firstRows` into once the second input's chunk is in: the reference is both applied in order.
 */
async function firstInputPiped(suffix: string, firstRows: string, secondRows: string): Promise<{ first: string; second: string; want: string; run: Promise<CliResult> }> {
  const first = path.join(dir, `first${suffix}.pipe`);
  await fs.rm(first, { force: true });
  execFileSync('mkfifo', [first]);
  const second = path.join(dir, `second${suffix}.txt`);
  await fs.writeFile(second, secondRows);
  const both = path.join(dir, `both${suffix}.txt`);
  await fs.writeFile(both, firstRows + secondRows);
  const want = await reference(both, ['v']);
  await freshTable('kv', 'numeric');
  const run = runCli(['load', first, second, '-t', 'kv', '-f', 'text', '--columns', 'id,v,n,u', '--on-conflict', 'update', '--update-columns', 'v', '-w', '2', '--db', testUrl(), '--schema', SCHEMA, '--json']);
  return { first, second, want, run };
}

async function orderTables(): Promise<number> {
  const r = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'pgsurge' AND tablename LIKE 'order\\_%'");
  return r.rows[0]!.n;
}

const upsertArgs = (file: string, table: string, extra: readonly string[]): string[] => [
  'load', file, '-t', table, '-f', 'text', '--columns', 'id,v,n,u', '--on-conflict', 'update', '--chunk-size', '2KB', '--db', testUrl(), '--schema', SCHEMA, ...extra,
];

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-upsert-'));
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

describe('--on-conflict update: the last row of a key in the file wins, at any -w', () => {
  let file: string;
  let expected: string;
  before(async () => {
    file = path.join(dir, 'upsert.txt');
    await fs.writeFile(file, upsertLines(45).join('\n') + '\n');
    expected = await reference(file);
  });

  it(`the file repeats each of its ${KEYS} keys ${REPEATS} times, across chunks (the test's own check)`, async () => {
    const text = await fs.readFile(file, 'utf8');
    const byKey = new Map<string, number[]>();
    let at = 0;
    for (const line of text.split('\n').slice(0, -1)) {
      byKey.set(line.split('\t')[0]!, [...(byKey.get(line.split('\t')[0]!) ?? []), at]);
      at += Buffer.byteLength(line) + 1;
    }
    assert.equal(byKey.size, KEYS);
    // A key's rows more than a 2 KB chunk apart: in different chunks.
    const spread = [...byKey.values()].filter((offsets) => offsets.at(-1)! - offsets[0]! > 4096).length;
    assert.ok(spread > KEYS * 0.9, `${spread} keys spread over chunks`);
  });

  const ways = [
    ['1', 'text', 'int'],
    ['2', 'auto', 'int'],
    ['4', 'text', 'int'],
    ['4', 'binary', 'int'],
    ['1', 'text', 'numeric'],
    ['2', 'auto', 'numeric'],
    ['4', 'binary', 'numeric'],
  ] as const;
  for (const [workers, wire, keyType] of ways) {
    it(`-w ${workers}, --wire ${wire}, ${keyType} key (${keyType === 'int' ? 'key lanes' : 'the order table'}), 2 KB chunks: the table equals the rows applied in file order; columns not in the file keep their values`, async () => {
      await freshTable('kv', keyType);
      const r = await runCli(upsertArgs(file, 'kv', ['-w', workers, '--wire', wire, '--json']));
      assert.equal(r.code, 0, r.stderr);
      const s = summaryOf(r.stdout);
      assert.equal(s.read, KEYS * REPEATS);
      assert.equal(s.read, s.loaded + s.rejected + s.skipped);
      assert.equal(s.rejected, 0);
      assert.ok(s.loaded >= KEYS, `every key written at least once (${s.loaded})`);
      if (wire === 'binary') assert.ok((s.wire?.[0]?.binaryChunks ?? 0) > 0, `the staging COPY went binary: ${JSON.stringify(s.wire)}`);
      assert.equal(digest(await tableRecords(client, `${SCHEMA}.kv`)), expected);
      const notes = await client.query<{ note: string }>(`SELECT note FROM ${SCHEMA}.kv WHERE id IN (1, ${EXISTING}, ${EXISTING + 1}) ORDER BY id`);
      assert.deepEqual(notes.rows.map((row) => row.note), [`existing 1`, `existing ${EXISTING}`, 'new']);
      assert.equal(await orderTables(), 0, 'the order table is dropped when the load ends');
    });
  }

  it('CSV with a header and quoted fields (key lanes), -w 2 and -w 4, 2 KB chunks: the same table as the text file', async () => {
    const text = await fs.readFile(file, 'utf8');
    // The same rows as CSV, every third key and every fifth value quoted ("07" is 7 too: a key the server reads alike).
    const rows = text.split('\n').slice(0, -1).map((line, i) => {
      const [id, v, n, u] = line.split('\t');
      const key = i % 3 === 0 ? `"${id!.padStart(2, '0')}"` : id!;
      return [key, i % 5 === 0 ? `"${v}"` : v, n, u].join(',');
    });
    const csv = path.join(dir, 'upsert.csv');
    await fs.writeFile(csv, ['id,v,n,u', ...rows].join('\r\n') + '\r\n');
    for (const workers of ['2', '4']) {
      await freshTable('kv');
      const r = await runCli(['load', csv, '-t', 'kv', '-f', 'csv', '--header', 'match', '--on-conflict', 'update', '--chunk-size', '2KB', '-w', workers, '--db', testUrl(), '--schema', SCHEMA, '--json', '--again']);
      assert.equal(r.code, 0, r.stderr);
      const s = summaryOf(r.stdout);
      assert.deepEqual({ read: s.read, rejected: s.rejected }, { read: KEYS * REPEATS, rejected: 0 });
      assert.equal(s.read, s.loaded + s.rejected + s.skipped);
      assert.equal(digest(await tableRecords(client, `${SCHEMA}.kv`)), expected, `-w ${workers}`);
      assert.equal(await orderTables(), 0, 'key lanes: no order table');
    }
  });

  for (const keyType of ['int', 'numeric'] as const) {
  it(`${keyType} key: kill -9 in the middle (a chunk waits on a row lock while others committed), then --resume at another -w: the same table`, async () => {
    await freshTable('kv', keyType);
    // Key 1 is in the table; holding its row locked stops every chunk that writes key 1 until the lock goes.
    const holder = await testClient();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM ${SCHEMA}.kv WHERE id = 1 FOR UPDATE`);
      const run = startCli(upsertArgs(file, 'kv', ['-w', '2', '--load-id', `upsert-kill-${keyType}`]));
      await run.waitFor(/pgsurge: load upsert-kill/);
      let committed = 0;
      for (let i = 0; i < 300 && run.child.exitCode === null; i++) {
        committed = (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM pgsurge.chunks WHERE load_id = $1', [`upsert-kill-${keyType}`])).rows[0]!.n;
        const waiting = (await client.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name LIKE 'pgsurge%'")).rows[0]!.n;
        // Lanes: the lane of key 1 waits, the other's part of that chunk committed (applied again by the resume).
        if (committed > 0 && waiting === (keyType === 'int' ? 1 : 2)) break;
        await sleep(50);
      }
      assert.equal(run.child.exitCode, null, 'the load is still running when killed');
      assert.ok(committed > 0, 'some chunks committed before the kill');
      run.child.kill('SIGKILL');
      await run.exited;
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    assert.equal(await orderTables(), keyType === 'int' ? 0 : 1, keyType === 'int' ? 'key lanes make no order table' : 'the order table outlives the kill');
    const partial = digest(await tableRecords(client, `${SCHEMA}.kv`));
    assert.notEqual(partial, expected, 'the kill left the load unfinished');
    const r = await runCli(upsertArgs(file, 'kv', ['-w', '4', '--load-id', `upsert-kill-${keyType}`, '--resume', '--json']));
    assert.equal(r.code, 0, r.stderr);
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.kv`)), expected);
    assert.equal(await orderTables(), 0);
  });
  }

  for (const keyType of ['int', 'numeric'] as const) {
    it(`-w 1, ${keyType} key: rows of different keys that meet through another unique key meet in file order, not key order`, async () => {
      // Row by row key 70's row asks for u = 60, which key 60 still holds, and is refused; then key 60 moves to 1000.
      // In key order key 60 would move first and key 70's row would go in (a statement that fails is split in file order).
      const f = path.join(dir, 'file-order.txt');
      await fs.writeFile(f, '70\tfirst\t1.00\t60\n60\tsecond\t1.00\t1000\n');
      const want = await reference(f);
      await freshTable('kv', keyType);
      const r = await runCli(upsertArgs(f, 'kv', ['-w', '1', '--json']));
      assert.equal(r.code, 3, r.stderr);
      assert.match(await fs.readFile(rejectFileOf(r), 'utf8'), /^70\tfirst\t1\.00\t60\n$/);
      assert.equal(digest(await tableRecords(client, `${SCHEMA}.kv`)), want);
    });
  }

  // Above -w 1 rows of different keys may meet through another unique key in either order (each key's rows keep theirs).
  {
    const workers = '1';
    it(`-w 1, int key (key lanes): a row a later row of its key writes over still meets the table's other unique key, as one by one`, async () => {
      // Row by row: key 60 takes u = 500, so key 70's row asking for u = 500 is refused, then key 60 moves on to 600.
      // Applying only key 60's last row would let key 70's row in.
      const rows = ['60\tfirst\t1.00\t500', '70\tblocked\t1.00\t500', '60\tlast\t1.00\t600', '61\ta\t1.00\t501', '61\tb\t1.00\t502', '62\tc\t1.00\t503'];
      const f = path.join(dir, 'between.txt');
      await fs.writeFile(f, rows.join('\n') + '\n');
      const want = await reference(f);
      await freshTable('kv');
      const r = await runCli(upsertArgs(f, 'kv', ['-w', workers, '--json']));
      assert.equal(r.code, 3, r.stderr);
      const s = summaryOf(r.stdout);
      assert.deepEqual({ read: s.read, rejected: s.rejected }, { read: 6, rejected: 1 });
      assert.equal(s.read, s.loaded + s.rejected + s.skipped);
      assert.match(await fs.readFile(rejectFileOf(r), 'utf8'), /^70\tblocked\t1\.00\t500\n$/);
      assert.equal(digest(await tableRecords(client, `${SCHEMA}.kv`)), want);
      assert.deepEqual((await client.query(`SELECT id, v, u FROM ${SCHEMA}.kv WHERE id IN (60, 70) ORDER BY id`)).rows, [{ id: 60, v: 'last', u: 600 }, { id: 70, v: 'old', u: 70 }]);
    });
  }

  it('a row whose values break another unique key is rejected with the server\'s message; the rows around it are applied', async () => {
    // Key 5's last row takes u = 7, which key 7 holds (its last row keeps a u of its own): that row is refused.
    const lines = upsertLines(46);
    const last5 = lines.map((l) => l.split('\t')[0]).lastIndexOf('5');
    const bad = lines[last5]!.split('\t');
    lines[last5] = [bad[0], bad[1], bad[2], '7'].join('\t');
    const lines7 = lines.flatMap((l, i) => (l.startsWith('7\t') ? [i] : []));
    for (const i of lines7) lines[i] = lines[i]!.replace(/\t\d+$/, '\t7'); // every row of key 7 holds u = 7
    const badFile = path.join(dir, 'conflict.txt');
    await fs.writeFile(badFile, lines.join('\n') + '\n');
    const want = await reference(badFile);
    await freshTable('kv');
    const r = await runCli(upsertArgs(badFile, 'kv', ['-w', '2', '--json']));
    assert.equal(r.code, 3, r.stderr);
    const s = summaryOf(r.stdout);
    assert.equal(s.rejected, 1);
    assert.equal(s.read, s.loaded + s.rejected + s.skipped);
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.kv`)), want);
    const rejected = rejectFileOf(r);
    assert.equal(await fs.readFile(rejected, 'utf8'), lines[last5] + '\n', 'the refused row, verbatim');
    assert.match(await fs.readFile(`${rejected}.log`, 'utf8'), /duplicate key value violates unique constraint "kv_u_key"/);
  });

  for (const workers of ['1', '2']) {
    it(`-w ${workers}, one chunk: a key's last row refused (another row's unique value) leaves the key with its row before, from the same chunk, as row by row`, async () => {
      // Key 1 three times in one chunk: its last row takes u = 50, which key 50 holds (in the table, not in the file:
      // the file's own keys may meet in either order above -w 1). Row by row, key 1 ends with its second row.
      const lines = ['1\tfirst\t1.00\t101', '2\tx\t2.00\t102', '1\tsecond\t1.50\t111', ...Array.from({ length: 200 }, (_, i) => `${300 + i}\tpad\t0\t${1000 + i}`), '1\tthird\t3.00\t50'];
      const f = path.join(dir, `last-refused-${workers}.txt`);
      await fs.writeFile(f, lines.join('\n') + '\n');
      const want = await reference(f);
      await freshTable('kv');
      const r = await runCli(upsertArgs(f, 'kv', ['-w', workers, '--chunk-size', '1MB', '--json']));
      assert.equal(r.code, 3, r.stderr);
      const s = summaryOf(r.stdout);
      assert.deepEqual({ read: s.read, rejected: s.rejected }, { read: lines.length, rejected: 1 });
      assert.equal(s.read, s.loaded + s.rejected + s.skipped);
      assert.deepEqual((await client.query(`SELECT v, u FROM ${SCHEMA}.kv WHERE id = 1`)).rows, [{ v: 'second', u: 111 }]);
      assert.equal(digest(await tableRecords(client, `${SCHEMA}.kv`)), want);
    });
  }

  it('--key names a unique key; a table with several and no primary key names its candidates', async () => {
    await client.query(`DROP TABLE IF EXISTS ${SCHEMA}.two`);
    await client.query(`CREATE TABLE ${SCHEMA}.two (a int UNIQUE, b int UNIQUE, v text)`);
    const f = path.join(dir, 'two.txt');
    await fs.writeFile(f, '1\t1\tx\n1\t2\ty\n');
    const base = ['load', f, '-t', 'two', '-f', 'text', '--on-conflict', 'update', '--db', testUrl(), '--schema', SCHEMA, '-q'];
    const none = await runCli(base);
    assert.equal(none.code, 2, none.stderr);
    assert.match(none.stderr, /has no primary key and 2 unique keys: \(a\), \(b\)/);
    const wrong = await runCli([...base, '--key', 'v']);
    assert.match(wrong.stderr, /`--key v` is not a unique key of .*two"?: its unique keys are \(a\), \(b\)/);
    const byA = await runCli([...base, '--key', 'a', '--load-id', 'two-a']);
    assert.equal(byA.code, 0, byA.stderr);
    assert.deepEqual((await client.query(`SELECT a, b, v FROM ${SCHEMA}.two`)).rows, [{ a: 1, b: 2, v: 'y' }]);
  });

  it('a unique index that collates its column otherwise (k COLLATE a case-insensitive one) is no key: refused before a row moves', async () => {
    // Its = is not the index's: 'A' and 'a' would be two keys of one chunk conflicting on one row (SQLSTATE 21000, the load stopped).
    await client.query(`CREATE COLLATION IF NOT EXISTS ${SCHEMA}.ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)`);
    await client.query(`DROP TABLE IF EXISTS ${SCHEMA}.ci_key`);
    await client.query(`CREATE TABLE ${SCHEMA}.ci_key (k text, v text)`);
    await client.query(`CREATE UNIQUE INDEX ON ${SCHEMA}.ci_key (k COLLATE ${SCHEMA}.ci)`);
    const f = path.join(dir, 'ci.txt');
    await fs.writeFile(f, 'A\t1\na\t2\n');
    const r = await runCli(['load', f, '-t', 'ci_key', '-f', 'text', '--on-conflict', 'update', '--db', testUrl(), '--schema', SCHEMA, '-q']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /has no primary key and no unique key/);
    assert.equal((await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.ci_key`)).rows[0].n, 0);
  });

  it('a new key written twice in one chunk with equal values but other text (numeric 1.0, then 1) keeps the first row\'s text, as row by row', async () => {
    await client.query(`DROP TABLE IF EXISTS ${SCHEMA}.num_key`);
    await client.query(`CREATE TABLE ${SCHEMA}.num_key (k numeric PRIMARY KEY, v text)`);
    await client.query(`INSERT INTO ${SCHEMA}.num_key VALUES (3.00, 'old')`);
    const f = path.join(dir, 'num.txt');
    await fs.writeFile(f, '1.0\ta\n3\tb\n1\tc\n01.00\td\n2\te\n');
    const r = await runCli(['load', f, '-t', 'num_key', '-f', 'text', '--on-conflict', 'update', '--db', testUrl(), '--schema', SCHEMA, '-q', '-w', '1']);
    assert.equal(r.code, 0, r.stderr);
    const rows = await client.query(`SELECT k::text, v FROM ${SCHEMA}.num_key ORDER BY k`);
    // INSERT … ON CONFLICT (k) DO UPDATE SET v = excluded.v, one row at a time: the key keeps the text that first inserted it.
    assert.deepEqual(rows.rows, [
      { k: '1.0', v: 'd' },
      { k: '2', v: 'e' },
      { k: '3.00', v: 'b' },
    ]);
  });

  it('-w 2: a new key first written as 1.0 at the start of a big chunk, then as 1 by a small file that commits first, keeps 1.0', async () => {
    await client.query(`DROP TABLE IF EXISTS ${SCHEMA}.num_key2`);
    await client.query(`CREATE TABLE ${SCHEMA}.num_key2 (k numeric PRIMARY KEY, v text)`);
    const big = path.join(dir, 'num-big.txt');
    const small = path.join(dir, 'num-small.txt');
    await fs.writeFile(big, ['1.0\tfirst', ...Array.from({ length: 6000 }, (_, i) => `${i + 2}\t${'x'.repeat(30)}`)].join('\n') + '\n');
    await fs.writeFile(small, '1\tlast\n');
    const r = await runCli(['load', big, small, '-t', 'num_key2', '-f', 'text', '--on-conflict', 'update', '-w', '2', '--chunk-size', '1MB', '--db', testUrl(), '--schema', SCHEMA, '-q']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual((await client.query(`SELECT k::text, v FROM ${SCHEMA}.num_key2 WHERE k = 1`)).rows, [{ k: '1.0', v: 'last' }]);
  });

  it('an upsert\'s chunks are 2 MB unless --chunk-size says otherwise', async () => {
    await client.query(`DROP TABLE IF EXISTS ${SCHEMA}.big_rows`);
    await client.query(`CREATE TABLE ${SCHEMA}.big_rows (k int PRIMARY KEY, v text)`);
    const f = path.join(dir, 'big-rows.txt');
    // ~5 MB: three chunks of 2 MB, one of 8 MB.
    await fs.writeFile(f, Array.from({ length: 5000 }, (_, i) => `${i}\t${'x'.repeat(1000)}\n`).join(''));
    const chunks = async (extra: readonly string[]): Promise<number> => {
      const r = await runCli(['load', f, '-t', 'big_rows', '-f', 'text', '--on-conflict', 'update', '--db', testUrl(), '--schema', SCHEMA, '--json', '--again', ...extra]);
      assert.equal(r.code, 0, r.stderr);
      return (JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { total: { chunks: number } }).total.chunks;
    };
    assert.equal(await chunks([]), 3);
    assert.equal(await chunks(['--chunk-size', '8MB']), 1);
  });

  it('a GENERATED ALWAYS identity key: the file\'s values, the last row winning (the key never set by an UPDATE)', async () => {
    await client.query(`DROP TABLE IF EXISTS ${SCHEMA}.id_key`);
    await client.query(`CREATE TABLE ${SCHEMA}.id_key (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v text)`);
    const f = path.join(dir, 'id-key.txt');
    await fs.writeFile(f, '1\ta\n01\tb\n2\tc\n');
    const r = await runCli(['load', f, '-t', 'id_key', '-f', 'text', '--on-conflict', 'update', '--db', testUrl(), '--schema', SCHEMA, '-q']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual((await client.query(`SELECT id, v FROM ${SCHEMA}.id_key ORDER BY id`)).rows, [{ id: 1, v: 'b' }, { id: 2, v: 'c' }]);
  });

  for (const [workers, keyType] of [['1', 'int'], ['2', 'int'], ['4', 'int'], ['2', 'numeric'], ['4', 'numeric']] as const) {
    it(`--update-columns v, -w ${workers}, ${keyType} key: a new key keeps its first row's n and u, as row by row (the first row inserts, the later ones set v)`, async () => {
      const want = await reference(file, ['v']);
      await freshTable('kv', keyType);
      const r = await runCli(upsertArgs(file, 'kv', ['-w', workers, '--update-columns', 'v', '--json']));
      assert.equal(r.code, 0, r.stderr);
      const s = summaryOf(r.stdout);
      assert.deepEqual({ read: s.read, rejected: s.rejected }, { read: KEYS * REPEATS, rejected: 0 });
      assert.equal(s.read, s.loaded + s.rejected + s.skipped);
      assert.equal(digest(await tableRecords(client, `${SCHEMA}.kv`)), want);
    });
  }

  it('--update-columns v, numeric key (the order table): the chunk with a new key\'s first row commits after the chunk with its last; the key keeps its first row\'s n and u', async () => {
    // Two inputs, the first a named pipe written only once the second is in: key 9001's last row (the second
    // input's) commits first, its first row (the first input's) after, and that row's n and u are the key's.
    const firstRows = '9001\tfirst\t11.00\t9001\n2\ttwo\t2.00\t2\n';
    const { first, want, run } = await firstInputPiped('', firstRows, '9001\tlast\t99.00\t9999\n9002\tnew\t5.00\t9002\n');
    for (let i = 0; i < 400; i++) {
      if ((await client.query<{ v: string }>(`SELECT v FROM ${SCHEMA}.kv WHERE id = 9001`)).rows[0]?.v === 'last') break;
      await sleep(50);
    }
    assert.deepEqual((await client.query(`SELECT v, n::text, u FROM ${SCHEMA}.kv WHERE id = 9001`)).rows, [{ v: 'last', n: '99.00', u: 9999 }], 'the second input\'s row first');
    await fs.writeFile(first, firstRows);
    const r = await run;
    assert.equal(r.code, 0, r.stderr);
    const s = summaryOf(r.stdout);
    assert.equal(s.read, s.loaded + s.rejected + s.skipped);
    assert.deepEqual((await client.query(`SELECT v, n::text, u FROM ${SCHEMA}.kv WHERE id = 9001`)).rows, [{ v: 'last', n: '11.00', u: 9001 }]);
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.kv`)), want);
  });

  it('--update-columns v, numeric key (the order table), -w 2: a new key\'s first row committing after its last gives the key its first row\'s value of an identity column outside the key (GENERATED BY DEFAULT); a GENERATED ALWAYS one, which no UPDATE can set, needs -w 1 (exit 2 before a row moves)', async () => {
    // As above: key 9001's first row comes through a named pipe written only once the second input's last row is in.
    const first = path.join(dir, 'first-id.pipe');
    await fs.rm(first, { force: true });
    execFileSync('mkfifo', [first]);
    const second = path.join(dir, 'second-id.txt');
    await fs.writeFile(second, '9001\tlast\t99\n9002\tnew\t5\n');
    const load = (extra: readonly string[]): Promise<Awaited<ReturnType<typeof runCli>>> =>
      runCli(['load', first, second, '-t', 'idn', '-f', 'text', '--columns', 'id,v,s', '--on-conflict', 'update', '--update-columns', 'v', '--db', testUrl(), '--schema', SCHEMA, '-q', ...extra]);
    const table = async (how: string): Promise<void> => {
      await client.query(`DROP TABLE IF EXISTS ${SCHEMA}.idn`);
      await client.query(`CREATE TABLE ${SCHEMA}.idn (id numeric PRIMARY KEY, v text, s int GENERATED ${how} AS IDENTITY)`);
    };
    await table('BY DEFAULT');
    const run = load(['-w', '2']);
    for (let i = 0; i < 400; i++) {
      if ((await client.query<{ v: string }>(`SELECT v FROM ${SCHEMA}.idn WHERE id = 9001`)).rows[0]?.v === 'last') break;
      await sleep(50);
    }
    assert.deepEqual((await client.query(`SELECT v, s FROM ${SCHEMA}.idn WHERE id = 9001`)).rows, [{ v: 'last', s: 99 }], 'the second input\'s row first');
    await fs.writeFile(first, '9001\tfirst\t11\n');
    const r = await run;
    assert.equal(r.code, 0, r.stderr);
    // Row by row: the first row inserts (s = 11), the last sets v only.
    assert.deepEqual((await client.query(`SELECT id::text, v, s FROM ${SCHEMA}.idn ORDER BY id`)).rows, [
      { id: '9001', v: 'last', s: 11 },
      { id: '9002', v: 'new', s: 5 },
    ]);
    await table('ALWAYS');
    const refused = await load(['-w', '2']);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /s, a GENERATED ALWAYS identity column outside --update-columns/);
    assert.match(refused.stderr, /hint: load with -w 1/);
    assert.equal((await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.idn`)).rows[0].n, 0);
  });

  for (const [workers, keyType, unique] of [['1', 'int', true], ['2', 'int', true], ['1', 'int', false], ['2', 'int', false], ['1', 'numeric', true], ['2', 'numeric', true]] as const) {
    it(`--update-columns v,u, -w ${workers}, ${keyType} key (${keyType === 'int' ? 'key lanes' : 'the order table'}), ${unique ? 'u unique' : 'no other unique key'}, one chunk: a new key's first row the server refuses (a CHECK, a NOT NULL${unique ? ', another unique key' : ''}, all in the columns set) is rejected, and the key takes n from its first row the server takes, as row by row`, async () => {
      const ddl = (name: string): string => `CREATE TABLE ${SCHEMA}.${name} (id ${keyType} PRIMARY KEY, v text NOT NULL CHECK (v <> 'bad'), n int, u int${unique ? ' UNIQUE' : ''})`;
      const lines = [
        '1\tbad\t10\t101', // refused: CHECK
        '2\t\\N\t20\t201', // refused: NOT NULL
        '3\tx\t30\t500', // refused: key 50 holds u = 500
        '1\tok\t11\t102',
        '2\tok\t21\t202',
        '4\tone\t40\t401',
        '3\tok\t31\t301',
        '1\tlast\t12\t103',
        ...Array.from({ length: 50 }, (_, i) => `${100 + i}\tpad\t0\t${1000 + i}`),
      ];
      const f = path.join(dir, `first-refused-${workers}-${keyType}-${unique}.txt`);
      await fs.writeFile(f, lines.join('\n') + '\n');
      for (const name of ['chk', 'chk_ref']) {
        await client.query(`DROP TABLE IF EXISTS ${SCHEMA}.${name}`);
        await client.query(ddl(name));
        await client.query(`INSERT INTO ${SCHEMA}.${name} VALUES (50, 'old', 0, 500)`);
      }
      await applyRowByRow(f, [['id', keyType], ['v', 'text'], ['n', 'int'], ['u', 'int']], `INSERT INTO ${SCHEMA}.chk_ref VALUES (r.id, r.v, r.n, r.u) ON CONFLICT (id) DO UPDATE SET v = excluded.v, u = excluded.u`);
      const r = await runCli(['load', f, '-t', 'chk', '-f', 'text', '--on-conflict', 'update', '--update-columns', 'v,u', '-w', workers, '--db', testUrl(), '--schema', SCHEMA, '--json']);
      assert.equal(r.code, 3, r.stderr);
      const s = summaryOf(r.stdout);
      assert.deepEqual({ read: s.read, rejected: s.rejected }, { read: lines.length, rejected: unique ? 3 : 2 });
      assert.equal(s.read, s.loaded + s.rejected + s.skipped);
      assert.deepEqual((await client.query(`SELECT id::int, v, n, u FROM ${SCHEMA}.chk WHERE id < 10 ORDER BY id`)).rows, [
        { id: 1, v: 'last', n: 11, u: 103 },
        { id: 2, v: 'ok', n: 21, u: 202 },
        { id: 3, v: 'ok', n: unique ? 31 : 30, u: 301 },
        { id: 4, v: 'one', n: 40, u: 401 },
      ]);
      assert.equal(digest(await tableRecords(client, `${SCHEMA}.chk`)), digest(await tableRecords(client, `${SCHEMA}.chk_ref`)));
    });
  }

  it('--update-columns v, numeric key (the order table), -w 2: a new key\'s later row committing first, whose u (outside the columns set) another key holds, is applied as row by row (it only sets v there)', async (t) => {
    t.todo('the chunk committing first inserts the key with its own row whole, so its u meets the unique key though row by row that row only updates v: it is rejected, and the key ends with its first row\'s v');
    const firstRows = '9001\tfirst\t11.00\t9001\n';
    const { first, second, want, run } = await firstInputPiped('-u', firstRows, '9001\tlast\t99.00\t5\n');
    // The second input's chunk is done (rejected or applied) before the first input's row is written.
    for (let i = 0; i < 100; i++) {
      if (((await client.query(`SELECT 1 FROM pgsurge.chunks WHERE file = $1`, [second]).catch(() => undefined))?.rowCount ?? 0) > 0) break;
      await sleep(50);
    }
    await fs.writeFile(first, firstRows);
    const r = await run;
    const s = summaryOf(r.stdout);
    assert.equal(s.read, s.loaded + s.rejected + s.skipped);
    assert.deepEqual((await client.query(`SELECT v, n::text, u FROM ${SCHEMA}.kv WHERE id = 9001`)).rows, [{ v: 'last', n: '11.00', u: 9001 }]);
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.kv`)), want);
  });

  it('a GENERATED ALWAYS identity column outside the key: a new row takes the file\'s value, a row there keeps its own (no UPDATE sets one); named in --update-columns, refused (exit 2)', async () => {
    await client.query(`DROP TABLE IF EXISTS ${SCHEMA}.seqd, ${SCHEMA}.seqd_ref`);
    for (const t of ['seqd', 'seqd_ref']) {
      await client.query(`CREATE TABLE ${SCHEMA}.${t} (id int PRIMARY KEY, seq int GENERATED ALWAYS AS IDENTITY, v text)`);
      await client.query(`INSERT INTO ${SCHEMA}.${t} (id, v) SELECT g, 'old' FROM generate_series(1, 5) g`);
    }
    const f = path.join(dir, 'seqd.txt');
    await fs.writeFile(f, Array.from({ length: 40 }, (_, i) => `${(i % 10) + 1}\t${1000 + i}\tv${i}`).join('\n') + '\n');
    await applyRowByRow(f, [['id', 'int'], ['seq', 'int'], ['v', 'text']], `INSERT INTO ${SCHEMA}.seqd_ref OVERRIDING SYSTEM VALUE VALUES (r.id, r.seq, r.v) ON CONFLICT (id) DO UPDATE SET v = excluded.v`);
    const r = await runCli(['load', f, '-t', 'seqd', '-f', 'text', '--on-conflict', 'update', '-w', '2', '--chunk-size', '1KB', '--db', testUrl(), '--schema', SCHEMA, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const s = summaryOf(r.stdout);
    assert.equal(s.read, s.loaded + s.rejected + s.skipped);
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.seqd`)), digest(await tableRecords(client, `${SCHEMA}.seqd_ref`)));
    const named = await runCli(['load', f, '-t', 'seqd', '-f', 'text', '--on-conflict', 'update', '--update-columns', 'seq,v', '--db', testUrl(), '--schema', SCHEMA, '--again']);
    assert.equal(named.code, 2, named.stderr);
    assert.match(named.stderr, /`--update-columns` names seq, a GENERATED ALWAYS identity column, which no UPDATE can set/);
  });

  it('--update-columns: only those are set on a row that is there; the others keep their values', async () => {
    await freshTable('kv');
    const r = await runCli(upsertArgs(file, 'kv', ['-w', '2', '--update-columns', 'v', '--load-id', 'upsert-v-only', '-q']));
    assert.equal(r.code, 0, r.stderr);
    const row = await client.query<{ v: string; n: string; u: number }>(`SELECT v, n::text, u FROM ${SCHEMA}.kv WHERE id = 3`);
    assert.equal(row.rows[0]!.n, '3.00');
    assert.equal(row.rows[0]!.u, 3);
    assert.notEqual(row.rows[0]!.v, 'old');
  });
});

describe('--on-conflict update from several files: they count in the order the load started with', () => {
  it('a stopped load resumed with its files named in another order is refused (exit 2); named as before, it ends as the files applied in that order', async () => {
    await client.query(`DROP TABLE IF EXISTS ${SCHEMA}.two_files`);
    await client.query(`CREATE TABLE ${SCHEMA}.two_files (k int PRIMARY KEY, v text)`);
    const a = path.join(dir, 'two-a.txt');
    const b = path.join(dir, 'two-b.txt');
    // Key 1 early in a and late in b, key 5 late in a and early in b: any mix of two orders shows in one of them.
    await fs.writeFile(a, '1\ta-first\n2\ta\n3\ta\n4\ta\n5\ta-last\n');
    await fs.writeFile(b, '5\tb-first\n6\tb\nx\tbad\n1\tb-last\n');
    const args = (files: readonly string[], extra: readonly string[]): string[] => [
      'load', ...files, '-t', 'two_files', '-f', 'text', '--on-conflict', 'update', '-w', '1', '--load-id', 'two-files', '--db', testUrl(), '--schema', SCHEMA, '-q', ...extra,
    ];
    const stopped = await runCli(args([a, b], ['--max-rejects', '0']));
    assert.equal(stopped.code, 1, stopped.stderr); // a committed, b's bad row stopped the load
    // Key lanes commit a chunk's parts before the chunk is recorded: not "rolled back".
    assert.match(stopped.stderr, /was not recorded as loaded, so its rejected rows are not in any reject file .*by key lanes each lane commits its part of a chunk on its own, so rows of the chunks not recorded may be applied already: a resume applies those chunks again/);
    assert.doesNotMatch(stopped.stderr, /rolled back/);
    const swapped = await runCli(args([b, a], ['--resume']));
    assert.equal(swapped.code, 2, swapped.stderr);
    assert.match(swapped.stderr, /place among the files: "1 of 2" → "2 of 2"/);
    const resumed = await runCli(args([a, b], ['--resume']));
    assert.equal(resumed.code, 3, resumed.stderr);
    const rows = await client.query(`SELECT k, v FROM ${SCHEMA}.two_files ORDER BY k`);
    assert.deepEqual(rows.rows.map((r) => `${r.k}:${r.v}`), ['1:b-last', '2:a', '3:a', '4:a', '5:b-first', '6:b']);
  });
});

describe('--on-conflict update from NDJSON: a key a record leaves out keeps its value', () => {
  it('--missing default: each record sets the columns it names; a record without the key is rejected', async () => {
    await freshTable('kv');
    const file = path.join(dir, 'partial.ndjson');
    const lines = ['{"id":1,"v":"a"}', '{"id":90,"v":"b","n":2}', '{"id":1,"n":3}', '{"v":"no key"}'];
    await fs.writeFile(file, lines.join('\n') + '\n');
    const r = await runCli(['load', file, '-t', 'kv', '--on-conflict', 'update', '--missing', 'default', '-w', '1', '--db', testUrl(), '--schema', SCHEMA, '--json']);
    assert.equal(r.code, 3, r.stderr);
    const s = summaryOf(r.stdout);
    assert.deepEqual({ read: s.read, rejected: s.rejected }, { read: 4, rejected: 1 });
    const rows = await client.query(`SELECT id, v, n::text, u, note FROM ${SCHEMA}.kv WHERE id IN (1, 90) ORDER BY id`);
    assert.deepEqual(rows.rows, [
      { id: 1, v: 'a', n: '3.00', u: 1, note: 'existing 1' },
      { id: 90, v: 'b', n: '2.00', u: null, note: 'new' },
    ]);
    assert.equal(await fs.readFile(rejectFileOf(r), 'utf8'), `${lines[3]}\n`);
  });
});

describe('--on-conflict update from rows that fill different columns', () => {
  it('NDJSON under --missing default, and CSV files whose headers differ: each row sets its columns in file order at -w 1 and -w 2 (key lanes); by the order table (a numeric key) refused at -w 2 before a row moves', async () => {
    await freshTable('kv');
    // Key 1's first record (v) in a big chunk, its last (n) in a small one of its own (another key set cuts a chunk):
    // at -w 2 the small one commits first, and the big one's v lost on position, though no later record set v.
    const file = path.join(dir, 'mixed.ndjson');
    const records = [{ id: 1, v: 'a' }, ...Array.from({ length: 3000 }, (_, i) => ({ id: 100 + i, v: `row ${i}`.padEnd(30, '.') })), { id: 1, n: 3 }];
    await fs.writeFile(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const args = (workers: string): string[] => ['load', file, '-t', 'kv', '--on-conflict', 'update', '--missing', 'default', '-w', workers, '--chunk-size', '1MB', '--db', testUrl(), '--schema', SCHEMA, '-q', '--again'];
    for (const workers of ['2', '1']) {
      await freshTable('kv');
      const r = await runCli(args(workers));
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual((await client.query(`SELECT v, n::text FROM ${SCHEMA}.kv WHERE id = 1`)).rows, [{ v: 'a', n: '3.00' }], `-w ${workers}`);
    }
    const a = path.join(dir, 'hv.csv');
    const b = path.join(dir, 'hn.csv');
    await fs.writeFile(a, 'id,v\n2,x\n');
    await fs.writeFile(b, 'id,n\n2,5\n');
    const headers = await runCli(['load', a, b, '-t', 'kv', '--header', 'match', '--on-conflict', 'update', '-w', '2', '--db', testUrl(), '--schema', SCHEMA, '-q']);
    assert.equal(headers.code, 0, headers.stderr);
    assert.deepEqual((await client.query(`SELECT v, n::text FROM ${SCHEMA}.kv WHERE id = 2`)).rows, [{ v: 'x', n: '5.00' }]);
    // A numeric key goes by the order table: there, rows that fill different columns need -w 1.
    await freshTable('kvn', 'numeric');
    const ordered = await runCli(['load', a, b, '-t', 'kvn', '--header', 'match', '--on-conflict', 'update', '-w', '2', '--db', testUrl(), '--schema', SCHEMA, '-q']);
    assert.equal(ordered.code, 2, ordered.stderr);
    assert.match(ordered.stderr, /rows that fill different columns/);
  });
});

describe('--mode delete: each key deleted once, in parallel', () => {
  it('-w 2, small chunks: the table equals the server\'s own delete of the keys; read = deleted + not found; a rerun deletes nothing more', async () => {
    await client.query(`DROP TABLE IF EXISTS ${SCHEMA}.del`);
    await client.query(`CREATE TABLE ${SCHEMA}.del (id int PRIMARY KEY, v text)`);
    await client.query(`INSERT INTO ${SCHEMA}.del SELECT g, 'row ' || g FROM generate_series(1, 2000) g`);
    const random = prng(7);
    const keys = Array.from({ length: 1500 }, () => 1 + Math.floor(random() * 2400)); // repeats, and keys past 2000 that match nothing
    const file = path.join(dir, 'delete.tbl');
    await fs.writeFile(file, keys.map((k) => `${k}|`).join('\n') + '\n');
    // The reference: the same rows deleted by the server from the keys it reads itself.
    await client.query(`DROP TABLE IF EXISTS ${SCHEMA}.del_ref`);
    await client.query(`CREATE TABLE ${SCHEMA}.del_ref AS SELECT * FROM ${SCHEMA}.del`);
    await client.query('CREATE TEMP TABLE del_keys (id int, nothing text)');
    const stream = client.query(copyFrom("COPY del_keys FROM STDIN (DELIMITER '|')"));
    stream.end(await fs.readFile(file));
    await finished(stream);
    const gone = await client.query(`DELETE FROM ${SCHEMA}.del_ref WHERE id IN (SELECT id FROM del_keys)`);
    const args = ['load', file, '-t', 'del', '--mode', 'delete', '-w', '2', '--chunk-size', '1KB', '--db', testUrl(), '--schema', SCHEMA, '--json'];
    const r = await runCli(args);
    assert.equal(r.code, 0, r.stderr);
    const s = summaryOf(r.stdout);
    assert.deepEqual(s.read, keys.length);
    assert.equal(s.loaded, gone.rowCount, 'deleted: each key that matched a row, once');
    assert.equal(s.skipped, keys.length - gone.rowCount!, 'not found: the rest (repeats, keys of no row)');
    assert.equal(s.rejected, 0);
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.del`)), digest(await tableRecords(client, `${SCHEMA}.del_ref`)));
    const again = await runCli(args);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(summaryOf(again.stdout).loaded, 0, 'the rerun finds every chunk done');
    const fresh = await runCli([...args.filter((a) => a !== '--json'), '--load-id', 'delete-again', '-q']);
    assert.equal(fresh.code, 0, fresh.stderr);
    const n = keys.length.toLocaleString('en-US');
    assert.match(fresh.stdout, new RegExp(`^deleted 0 of ${n} keys read \\(read ${n} = deleted 0 \\+ rejected 0 \\+ not found ${n}\\)`), 'a new load of the same keys finds none');
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.del`)), digest(await tableRecords(client, `${SCHEMA}.del_ref`)));
  });
});

/** A load that must end within `ms` (a hang fails the test instead of the suite): killed then. */
async function runWithin(args: readonly string[], ms: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = startCli(args);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
  const ended = await Promise.race([run.exited, late]);
  clearTimeout(timer);
  if (ended === 'late') {
    run.child.kill('SIGKILL');
    await run.exited;
    assert.fail(`the load did not end within ${ms / 1000} s; stderr:\n${run.stderr()}`);
  }
  return { code: ended.code, stdout: run.stdout(), stderr: run.stderr() };
}

/** The table as `id|v` lines, by id. */
async function idValues(table: string): Promise<string[]> {
  return (await client.query<{ id: number; v: string }>(`SELECT id, v FROM ${SCHEMA}.${table} ORDER BY id`)).rows.map((r) => `${r.id}|${r.v}`);
}

describe('--on-conflict update by key lanes: the load ends, whatever stops a chunk', () => {
  for (const [what, tail] of [
    ['a key written twice', ['50\ty2\t1\t7000']],
    ['a row the server cannot read after them', ['70\tz\tnot-a-number\t7001']],
  ] as const) {
    it(`-w 1, one chunk with ${what}: rows of other keys meet another unique key in file order, as one by one`, async () => {
      await freshTable('kv');
      // Key 60's row takes u = 50, which key 50 holds until the next row moves it: row by row, the first is refused.
      const lines = ['60\tx\t1\t50', '50\ty\t1\t7000', ...tail];
      const f = path.join(dir, `unique-order-${tail.length}-${what.length}.txt`);
      await fs.writeFile(f, lines.join('\n') + '\n');
      const r = await runWithin(upsertArgs(f, 'kv', ['-w', '1', '--json']), 30_000);
      assert.equal(r.code, 3, r.stderr);
      const s = summaryOf(r.stdout);
      assert.equal(s.read, s.loaded + s.rejected + s.skipped);
      const rejected = (await fs.readFile(rejectFileOf(r), 'utf8')).split('\n').filter(Boolean);
      assert.equal(rejected[0], lines[0], 'key 60\'s row is refused: u = 50 is key 50\'s when it comes');
      assert.deepEqual((await client.query(`SELECT id, u FROM ${SCHEMA}.kv WHERE id IN (50, 60) ORDER BY id`)).rows, [
        { id: 50, u: 7000 },
        { id: 60, u: 60 },
      ]);
    });
  }

  for (const keyType of ['int', 'numeric'] as const) {
    it(`${keyType} key, -w 2: a row the server cannot read, written over by a later row of its key, is rejected (not counted as written over)`, async () => {
      await freshTable('kv', keyType);
      // Key 1's first row has a numeric that is no number; its second row is good. Row by row, the server refuses the first.
      const lines = ['1\tfirst\tnot-a-number\t201', '2\tx\t2.00\t202', '1\tsecond\t1.50\t203', ...Array.from({ length: 300 }, (_, i) => `${300 + i}\tpad\t0\t${1000 + i}`), '300\tlast\t9.00\t999'];
      const f = path.join(dir, `superseded-bad-${keyType}.txt`);
      await fs.writeFile(f, lines.join('\n') + '\n');
      const r = await runWithin(upsertArgs(f, 'kv', ['-w', '2', '--json']), 30_000);
      assert.equal(r.code, 3, r.stderr);
      const s = summaryOf(r.stdout);
      assert.deepEqual({ read: s.read, rejected: s.rejected }, { read: lines.length, rejected: 1 });
      assert.equal(s.read, s.loaded + s.rejected + s.skipped);
      assert.equal(await fs.readFile(rejectFileOf(r), 'utf8'), `${lines[0]}\n`, 'the refused row, verbatim');
      assert.match(await fs.readFile(`${rejectFileOf(r)}.log`, 'utf8'), /invalid input syntax for type numeric/);
      assert.deepEqual((await client.query(`SELECT id::int AS id, v, u FROM ${SCHEMA}.kv WHERE id IN (1, 300) ORDER BY id`)).rows, [
        { id: 1, v: 'second', u: 203 },
        { id: 300, v: 'last', u: 999 },
      ]);
    });
  }

  it('-w 2: a varchar(3) key written with more trailing spaces than fit (the server cuts them: one key) ends as the rows applied one by one', async () => {
    await client.query(`DROP TABLE IF EXISTS ${SCHEMA}.vc, ${SCHEMA}.vc_ref`);
    await client.query(`CREATE TABLE ${SCHEMA}.vc (k varchar(3) PRIMARY KEY, v text)`);
    await client.query(`CREATE TABLE ${SCHEMA}.vc_ref (k varchar(3) PRIMARY KEY, v text)`);
    const spellings = ['ab', 'ab ', 'ab  ', 'ab   ', 'ab\\040\\040', 'é', 'é  ', 'é    ', 'xyz', 'xyz ', 'xyz   '];
    const random = prng(49);
    const lines = Array.from({ length: 2000 }, (_, i) => `${spellings[Math.floor(random() * spellings.length)]}\tv${i}`);
    const f = path.join(dir, 'varchar-key.txt');
    await fs.writeFile(f, lines.join('\n') + '\n');
    // The reference: the server's COPY of the file, then each row applied on its own, in file order.
    await applyRowByRow(f, [['k', 'varchar(3)'], ['v', 'text']], `INSERT INTO ${SCHEMA}.vc_ref VALUES (r.k, r.v) ON CONFLICT (k) DO UPDATE SET v = excluded.v`);
    const r = await runWithin(['load', f, '-t', 'vc', '-f', 'text', '--on-conflict', 'update', '-w', '2', '--chunk-size', '2KB', '--db', testUrl(), '--schema', SCHEMA, '--json'], 30_000);
    assert.equal(r.code, 0, r.stderr);
    const s = summaryOf(r.stdout);
    assert.equal(s.read, lines.length);
    assert.equal(s.read, s.loaded + s.rejected + s.skipped);
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.vc`)), digest(await tableRecords(client, `${SCHEMA}.vc_ref`)));
  });

  it('-w 2: an NDJSON line that cannot be read, in the middle of many chunks, is rejected and the load goes on to the end (last row of each key wins)', async () => {
    await client.query(`DROP TABLE IF EXISTS ${SCHEMA}.unframable`);
    await client.query(`CREATE TABLE ${SCHEMA}.unframable (id int PRIMARY KEY, v text)`);
    const lines = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ id: i % 400, v: `r${i}` }));
    lines[1500] = '{"id": 3, broken';
    const f = path.join(dir, 'unframable.ndjson');
    await fs.writeFile(f, lines.join('\n') + '\n');
    const last = new Map<number, string>();
    for (const [i, line] of lines.entries()) if (i !== 1500) last.set(i % 400, `r${i}`);
    const r = await runWithin(['load', f, '-t', 'unframable', '--on-conflict', 'update', '-w', '2', '--chunk-size', '8KB', '--db', testUrl(), '--schema', SCHEMA, '--json'], 30_000);
    assert.equal(r.code, 3, r.stderr);
    const s = summaryOf(r.stdout);
    assert.deepEqual({ read: s.read, rejected: s.rejected }, { read: 3000, rejected: 1 });
    assert.equal(s.read, s.loaded + s.rejected + s.skipped);
    assert.deepEqual(await idValues('unframable'), [...last.entries()].sort((a, b) => a[0] - b[0]).map(([id, v]) => `${id}|${v}`));
  });

  it('-w 2: Ctrl-C while a lane waits on a row lock ends the load at once (the lanes\' parts rolled back too); --resume then ends as the file applied in order', async () => {
    const f = path.join(dir, 'interrupted.txt');
    await fs.writeFile(f, upsertLines(47).join('\n') + '\n');
    const want = await reference(f);
    await freshTable('kv');
    const holder = await testClient();
    try {
      // Key 1 is in the table: its lane waits on this lock, and every chunk after its part with it.
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM ${SCHEMA}.kv WHERE id = 1 FOR UPDATE`);
      const run = startCli(upsertArgs(f, 'kv', ['-w', '2', '--load-id', 'upsert-ctrl-c']));
      await run.waitFor(/pgsurge: load upsert-ctrl-c/);
      for (let i = 0; i < 200 && run.child.exitCode === null; i++) {
        const waiting = (await client.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name LIKE 'pgsurge upsert-ctrl-c%'")).rows[0]!.n;
        if (waiting > 0) break;
        await sleep(50);
      }
      assert.equal(run.child.exitCode, null, 'the load waits on the lock');
      run.child.kill('SIGINT');
      const ended = await Promise.race([run.exited, sleep(10_000).then(() => 'late' as const)]);
      if (ended === 'late') run.child.kill('SIGKILL');
      assert.notEqual(ended, 'late', `Ctrl-C did not end the load within 10 s (the lock still held); stderr:\n${run.stderr()}`);
      assert.equal((ended as { code: number | null }).code, 130, run.stderr());
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    const r = await runWithin(upsertArgs(f, 'kv', ['-w', '2', '--load-id', 'upsert-ctrl-c', '--resume', '--json']), 60_000);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.kv`)), want);
  });
});

/**
 * A proxy in front of the test server that loses, once, the reply to the `nth` COMMIT on
 * the first connection whose application_name ends in ` <name>` (a worker's `w0`, a
 * lane's `wL0`): the server committed, the client sees its connection lost.
 */
async function commitReplyLoser(name: string, nth: number): Promise<{ url: string; lost(): boolean; close(): Promise<void> }> {
  const u = new URL(testUrl().replace('@/', '@localhost/'));
  const socket = path.join(u.searchParams.get('host')!, `.s.PGSQL.${u.searchParams.get('port') ?? '5432'}`);
  const sockets: net.Socket[] = [];
  // CommandComplete "COMMIT": 'C', its length (4 + 7), the tag.
  const commit = Buffer.concat([Buffer.from([0x43, 0, 0, 0, 11]), Buffer.from('COMMIT\0')]);
  let seen = 0;
  let lost = false;
  const proxy = net.createServer((c) => {
    const s = net.connect(socket);
    sockets.push(c, s);
    c.on('error', () => {});
    s.on('error', () => {});
    c.once('data', (first: Buffer) => {
      const watched = !lost && first.includes(Buffer.from(` ${name}\0`));
      s.write(first);
      c.pipe(s);
      s.on('data', (d: Buffer) => {
        if (watched && !lost && d.includes(commit) && ++seen === nth) {
          lost = true;
          c.destroy();
          s.destroy();
          return;
        }
        if (!c.destroyed) c.write(d);
      });
    });
    c.on('close', () => s.destroy());
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const port = (proxy.address() as net.AddressInfo).port;
  return {
    url: `postgresql://${u.username || 'postgres'}@127.0.0.1:${port}${u.pathname}`,
    lost: () => lost,
    close: async () => {
      for (const x of sockets) x.destroy();
      await new Promise((r) => proxy.close(r));
    },
  };
}

describe('--on-conflict update by key lanes: a COMMIT whose reply is lost', () => {
  for (const [name, what] of [
    ['w0', "a worker's ledger row (the retry finds it in the ledger)"],
    ['wL0', "a lane's part (applied again on a new session)"],
  ] as const) {
    it(`-w 2: the reply to ${what} lost: the load goes on to the end, as the file applied in order`, async () => {
      const f = path.join(dir, `lost-commit-${name}.txt`);
      await fs.writeFile(f, upsertLines(48).join('\n') + '\n');
      const want = await reference(f);
      await freshTable('kv');
      const proxy = await commitReplyLoser(name, 3);
      try {
        const args = ['load', f, '-t', 'kv', '-f', 'text', '--columns', 'id,v,n,u', '--on-conflict', 'update', '--chunk-size', '2KB', '-w', '2', '--db', proxy.url, '--schema', SCHEMA, '--json'];
        const r = await runWithin(args, 60_000);
        assert.ok(proxy.lost(), 'a COMMIT reply was lost');
        assert.equal(r.code, 0, r.stderr);
        const s = summaryOf(r.stdout);
        assert.equal(s.read, KEYS * REPEATS);
        assert.equal(s.read, s.loaded + s.rejected + s.skipped);
        assert.equal(digest(await tableRecords(client, `${SCHEMA}.kv`)), want);
      } finally {
        await proxy.close();
      }
    });
  }
});
