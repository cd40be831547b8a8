import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { closeTestSchema, digest, freshSchema, openTestSchema, rejectFileOf, runCli, tableRecords, tblRecords, testClient, testUrl } from '../helpers/test-db.js';

const SCHEMA = 'it_load';
let client: pg.Client;
let dir: string;

/** lineitem-shaped rows with the awkward bits: varying widths, spaces, non-ASCII. */
function lineitemRows(n: number): string {
  const out: string[] = [];
  for (let i = 1; i <= n; i++) {
    const day = String((i % 28) + 1).padStart(2, '0');
    out.push(
      `${i}|${i % 200}|${i % 10}|${(i % 7) + 1}|${(i % 50) + 1}.00|${(i * 7.31).toFixed(2)}|0.0${i % 10}|0.0${i % 8}|${'RAN'[i % 3]}|${'OF'[i % 2]}|1995-03-${day}|1995-04-${day}|1995-05-${day}|DELIVER IN PERSON|TRUCK|${i % 5 === 0 ? 'héllo wörld ' : 'c'}${'x'.repeat(i % 30)}|`,
    );
  }
  return out.join('\n') + '\n';
}

async function writeFile(name: string, content: string | Buffer): Promise<string> {
  const p = path.join(dir, name);
  await fs.writeFile(p, content);
  return p;
}

const db = (): string[] => ['--db', testUrl(), '--schema', SCHEMA];

async function expectTable(table: string, expected: string[]): Promise<void> {
  const count = await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.${table}`);
  assert.equal(count.rows[0].n, expected.length, 'row count');
  assert.equal(digest(await tableRecords(client, `${SCHEMA}.${table}`)), digest(expected), 'content digest');
}

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-load-'));
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

describe('pgsurge load (COPY) against a real server', () => {
  const content = lineitemRows(3000);
  const expected = tblRecords(content);

  for (const workers of [1, 2, 7]) {
    for (const chunk of ['8MB', '1KB', '777']) {
      it(`lineitem with --workers ${workers} --chunk-size ${chunk}: rows and digest equal the file`, async () => {
        const file = await writeFile('lineitem.tbl', content);
        const r = await runCli(['load', file, '--create', '--truncate', '-w', String(workers), '--chunk-size', chunk, ...db()]);
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, /lineitem\s+3,000/);
        await expectTable('lineitem', expected);
      });
    }
  }

  const edge: { name: string; content: string }[] = [
    { name: 'no final newline', content: content.slice(0, -1) },
    { name: 'CRLF line endings', content: content.replace(/\n/g, '\r\n') },
    { name: 'a one-line file', content: content.split('\n')[0]! + '\n' },
    { name: 'an empty file', content: '' },
  ];
  for (const e of edge) {
    it(`${e.name}`, async () => {
      const file = await writeFile('lineitem.tbl', e.content);
      const r = await runCli(['load', file, '--create', '--truncate', '-w', '2', '--chunk-size', '1KB', ...db()]);
      assert.equal(r.code, 0, r.stderr);
      await expectTable('lineitem', tblRecords(e.content).filter((l) => l !== ''));
    });
  }

  it('stdin with -f tbl -t lineitem', async () => {
    const r = await runCli(['load', '-', '-f', 'tbl', '-t', 'lineitem', '--create', '--truncate', '-w', '2', '--chunk-size', '4KB', ...db()], { stdin: content });
    assert.equal(r.code, 0, r.stderr);
    await expectTable('lineitem', expected);
  });

  it('split files lineitem.tbl.1 and .2 go to one table', async () => {
    const lines = content.split('\n');
    const a = await writeFile('lineitem.tbl.1', lines.slice(0, 1000).join('\n') + '\n');
    const b = await writeFile('lineitem.tbl.2', lines.slice(1000).join('\n'));
    const r = await runCli(['load', a, b, '--create', '--truncate', '-w', '2', ...db()]);
    assert.equal(r.code, 0, r.stderr);
    await expectTable('lineitem', expected);
  });

  it('CSV with quoted newlines, delimiters and doubled quotes, framed by one reader for several workers', async () => {
    await client.query(`CREATE TABLE ${SCHEMA}.notes (id int, body text, tag text)`);
    const rows: string[] = [];
    for (let i = 0; i < 400; i++) {
      const body = i % 4 === 0 ? `"line one\nline two, with comma"` : i % 4 === 1 ? `"say ""hi"""` : i % 4 === 2 ? '""' : `plain ${i}`;
      rows.push(`${i},${body},${i % 3 === 0 ? '' : 't' + i}`);
    }
    const file = await writeFile('notes.csv', rows.join('\n') + '\n');
    const r = await runCli(['load', file, '-w', '3', '--chunk-size', '200', ...db()]);
    assert.equal(r.code, 0, r.stderr);
    const got = await client.query(`SELECT count(*)::int n, count(*) FILTER (WHERE body LIKE '%\n%')::int nl, count(*) FILTER (WHERE body = '')::int empty, count(*) FILTER (WHERE tag IS NULL)::int nulls, count(*) FILTER (WHERE body = 'say "hi"')::int quotes FROM ${SCHEMA}.notes`);
    assert.deepEqual(got.rows[0], { n: 400, nl: 100, empty: 100, nulls: 134, quotes: 100 });
    const records = await tableRecords(client, `${SCHEMA}.notes`, '(FORMAT csv)');
    // Server CSV output of the same rows, compared record by record after re-joining quoted newlines.
    const joined = records.join('\n');
    assert.equal(digest(joined.split(/\n(?=\d+,)/)), digest(rows));
  });
});

describe('bad input stops with a clear message', () => {
  it('a missing file: nothing loaded, exit 1', async () => {
    const r = await runCli(['load', path.join(dir, 'nope.tbl'), '--create', ...db()]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /cannot read .*nope\.tbl: no such file/);
  });

  it('a missing table says to use --create', async () => {
    const file = await writeFile('orders.tbl', '1|2|O|3.00|1996-01-02|5-LOW|Clerk#1|0|c|\n');
    const r = await runCli(['load', file, ...db()]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /table "it_load"\."orders" does not exist/);
    assert.match(r.stderr, /hint: add --create/);
  });

  it('a --schema the database lacks: a usage error naming it, with the CREATE SCHEMA to run, nothing created (exit 2)', async () => {
    const file = await writeFile('orders.tbl', '1|2|O|3.00|1996-01-02|5-LOW|Clerk#1|0|c|\n');
    const r = await runCli(['load', file, '--create', '--db', testUrl(), '--schema', 'it_no_such_schema']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--schema it_no_such_schema: database \S+ has no schema "it_no_such_schema"/);
    assert.match(r.stderr, /hint: create it first \(CREATE SCHEMA "it_no_such_schema";\)/);
    assert.equal((await client.query("SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = 'it_no_such_schema'")).rows[0].n, 0);
  });

  it('a bad row goes to the reject file with its line, column and SQLSTATE; the rest loads (exit 3)', async () => {
    const content = lineitemRows(500);
    const lines = content.split('\n');
    lines[436] = lines[436]!.replace('1995-03-', '1995-13-');
    const file = await writeFile('lineitem.tbl', lines.join('\n'));
    for (const workers of ['1', '3']) {
      const r = await runCli(['load', file, '--create', '--truncate', '-w', workers, '--chunk-size', '2KB', ...db()]);
      assert.equal(r.code, 3, r.stderr);
      assert.match(r.stdout, /lineitem\s+500\s+499\s+1\s+0/);
      assert.equal(await fs.readFile(rejectFileOf(r), 'utf8'), lines[436] + '\n');
      const log = (await fs.readFile(`${rejectFileOf(r)}.log`, 'utf8')).split('\n');
      assert.match(log[2]!, /lineitem\.tbl\t437\t\d+\t22008\tl_shipdate\t.*date/);
      await expectTable('lineitem', tblRecords(content).filter((_, i) => i !== 436));
    }
  });

  it('--max-rejects 0 stops at the first bad row, keeps what was committed and says how to resume', async () => {
    const lines = lineitemRows(500).split('\n');
    lines[436] = lines[436]!.replace('1995-03-', '1995-13-');
    const file = await writeFile('lineitem.tbl', lines.join('\n'));
    const r = await runCli(['load', file, '--create', '--truncate', '-w', '1', '--chunk-size', '2KB', '--max-rejects', '0', ...db()]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /more than 0 rows rejected \(--max-rejects 0\)/);
    assert.match(r.stderr, /resume with: pgsurge load .* --resume --load-id lineitem-/);
    const count = await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.lineitem`);
    const loaded = Number(/lineitem\s+(\d+)\s+(\d+)/.exec(r.stdout)?.[2]);
    assert.equal(count.rows[0].n, loaded, 'the summary counts what is in the table');
    assert.ok(loaded > 0 && loaded < 436, `loaded ${loaded}: the chunks before the bad row`);
  });

  it('an unreachable server is one line with a hint', async () => {
    const file = await writeFile('region.tbl', '1|x|y|\n');
    const r = await runCli(['load', file, '--db', 'postgresql://nobody:secret@127.0.0.1:1/x', '-q']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /cannot connect to server at "127\.0\.0\.1", port 1, database "x", user "nobody": /);
    assert.doesNotMatch(r.stderr + r.stdout, /secret/);
  });

  it('bad option values exit 2 and name the flag', async () => {
    const r = await runCli(['load', 'x.tbl', '--workers', 'zero']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /Expected `--workers` to be a whole number from 1 up, got `zero`/);
  });
});
