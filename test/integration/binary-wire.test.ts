import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { DBT3_TABLES } from '../../src/datasets/dbt3-schema.js';
import { generateDbt3 } from '../../src/datasets/dbt3/generate.js';
import { generateNarrow } from '../../src/datasets/narrow/generate.js';
import { createTableSql } from '../../src/datasets/table-ddl.js';
import type { TableWire } from '../../src/wire/wire-report.js';
import { sleep, startCli } from '../helpers/cli-process.js';
import { assertLedgerTiles, assertNoHalfChunk } from '../helpers/ledger-checks.js';
import { damage, lineitemFields, prng, tableRecord, tblLine } from '../helpers/lineitem-data.js';
import { closeTestSchema, digest, freshSchema, openTestSchema, runCli, tableRecords, tblRecords, testUrl } from '../helpers/test-db.js';

const SCHEMA = 'it_wire';
const OTHER = 'it_wire_b';
let client: pg.Client;
let dir: string;

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-wire-'));
  await freshSchema(client, OTHER);
});
after(async () => {
  await client.query(`DROP SCHEMA "${OTHER}" CASCADE`);
  await closeTestSchema(SCHEMA, client, dir);
});

interface Summary {
  read: number;
  loaded: number;
  rejected: number;
  wire?: TableWire[];
  total: { read: number; loaded: number; rejected: number; skipped: number };
}

/** The `--json` summary event of a run. */
function summaryOf(stdout: string): Summary {
  const line = stdout.split('\n').find((l) => l.includes('"event":"summary"'));
  assert.ok(line, `a summary event in ${stdout}`);
  return JSON.parse(line) as Summary;
}

function wireOf(s: Summary, table: string): TableWire {
  const w = s.wire?.find((x) => x.table === table);
  assert.ok(w, `the summary names the wire of ${table}: ${JSON.stringify(s.wire)}`);
  return w;
}

const contentOf = async (table: string): Promise<string> => digest(await tableRecords(client, table));

describe('binary wire: the same tables as text', () => {
  it('dbt3 load --wire binary and --wire text: identical digests for all eight tables, equal to the files', async () => {
    const data = path.join(dir, 'dbt3');
    await generateDbt3({ scale: 0.01, outDir: data });
    const runs: Record<string, Summary> = {};
    for (const [wire, schema] of [['text', SCHEMA], ['binary', OTHER]] as const) {
      const r = await runCli(['dbt3', 'load', data, '--db', testUrl(), '--schema', schema, '--wire', wire, '--no-keys', '--no-analyze', '-w', '2', '--chunk-size', '256KB', '--json']);
      assert.equal(r.code, 0, r.stderr);
      runs[wire] = summaryOf(r.stdout);
    }
    for (const table of DBT3_TABLES) {
      const expected = digest(tblRecords(await fs.readFile(path.join(data, `${table}.tbl`), 'utf8')));
      assert.equal(await contentOf(`${SCHEMA}.${table}`), expected, `${table} through text`);
      assert.equal(await contentOf(`${OTHER}.${table}`), expected, `${table} through binary`);
      assert.deepEqual(wireOf(runs.text!, table), { table, wire: 'text', why: '--wire text', binaryChunks: 0, fallbackChunks: 0, redoneChunks: 0 });
      const b = wireOf(runs.binary!, table);
      assert.equal(b.wire, 'binary', `${table}: ${JSON.stringify(b)}`);
      assert.equal(b.fallbackChunks, 0, `${table}: ${b.firstFallback}`);
      assert.ok(b.binaryChunks >= 1);
    }
    assert.ok(wireOf(runs.binary!, 'lineitem').binaryChunks > 3, 'lineitem went in several binary chunks');
  });

  it('narrow rows: the same through both wires', async () => {
    const file = path.join(dir, 'narrow.txt');
    await generateNarrow({ rows: 3000, keys: 'random', format: 'text', out: file });
    const expected = digest((await fs.readFile(file, 'utf8')).trimEnd().split('\n').map((l) => l.replaceAll('\t', '|')));
    for (const [wire, schema] of [['text', SCHEMA], ['binary', OTHER]] as const) {
      const r = await runCli(['load', file, '-t', 'narrow', '-f', 'text', '--create', '--db', testUrl(), '--schema', schema, '--wire', wire, '--chunk-size', '16KB', '--json']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(wireOf(summaryOf(r.stdout), 'narrow').wire, wire);
      assert.equal(await contentOf(`${schema}.narrow`), expected, `narrow through ${wire}`);
    }
  });

  it('text, CSV and NDJSON with escapes, quotes, NULLs and unicode: binary equals text', async () => {
    const ddl = (schema: string, t: string): string => `CREATE TABLE ${schema}.${t} (id int, a text, b varchar(20), n numeric, d date, k int8, c char(3))`;
    const inputs: [string, string, string][] = [
      [
        'esc',
        'text',
        [
          '1\ta\\tb\\\\c\\nd\tx\\101\\303\\251\t1.50\t2024-02-29\t-9223372036854775808\tab',
          '2\t\\N\t\t-0.000\t0001-01-01\t9223372036854775807\t\\N',
          '3\tünïcödé ✓ 日本\t\\x41\\|\t123456789012345678901234567890.5\t9999-12-31\t0\t  a',
        ].join('\n') + '\n',
      ],
      ['q', 'csv', ['1,"a,""b""\nc",,"1e0",2000-01-01,5,"x"', '2,"","",NaN,1999-12-31,-5,', '3,ä"ö,ü"ß,plain,0.10,1970-01-01,7,"   "'].join('\n') + '\n'],
      [
        'js',
        'ndjson',
        [
          '{"id":1,"a":"tab\\there \\"q\\" back\\\\slash","b":null,"n":2.5,"d":"2020-02-29","k":1,"c":"z"}',
          '{"id":2,"a":"\\u00e9\\ud83d\\ude00","b":"","n":-17,"d":"2021-01-01","k":-1,"c":null}',
          '{"id":3,"a":null,"b":"x\\ny","n":0,"d":"1900-03-01","k":42,"c":"abc"}',
        ].join('\n') + '\n',
      ],
    ];
    for (const [name, format, content] of inputs) {
      const file = path.join(dir, `${name}.${format === 'ndjson' ? 'ndjson' : format === 'csv' ? 'csv' : 'txt'}`);
      await fs.writeFile(file, content);
      const digests: string[] = [];
      for (const [wire, schema] of [['text', SCHEMA], ['binary', OTHER]] as const) {
        await client.query(ddl(schema, name));
        const r = await runCli(['load', file, '-t', name, '-f', format, '--db', testUrl(), '--schema', schema, '--wire', wire, '--json']);
        assert.equal(r.code, 0, `${name} ${wire}: ${r.stderr}`);
        const s = summaryOf(r.stdout);
        assert.equal(s.total.loaded, 3);
        digests.push(await contentOf(`${schema}.${name}`));
        if (wire === 'binary') {
          const w = wireOf(s, name);
          // A CSV numeric with an exponent is one the encoder does not take: that chunk falls back, and says so.
          if (name === 'q') assert.deepEqual([w.wire, w.fallbackChunks, w.firstFallback], ['binary', 1, 'record 1 of the chunk at byte 0, column n: "1e0" (a value its encoder cannot encode exactly)']);
          else assert.deepEqual([w.wire, w.fallbackChunks, w.binaryChunks], ['binary', 0, 1], `${name}: ${JSON.stringify(w)}`);
        }
      }
      assert.equal(digests[0], digests[1], `${name}: binary equals text`);
    }
  });
});

describe('binary wire: rejects and fallbacks as text gives them', () => {
  it('a row the server refuses in a binary chunk (char(n) too long, varchar too long, a CHECK): the same reject lines, messages and SQLSTATEs as text', async () => {
    const rows = lineitemFields(600);
    const bad = new Map<number, (f: string[]) => Buffer>([
      [17, (f) => damage(f, 'overlong varchar', tblLine)],
      [250, (f) => tblLine(f.map((v, i) => (i === 8 ? 'AB' : v)))],
      [599, (f) => tblLine(f.map((v, i) => (i === 4 ? '5000.00' : v)))],
    ]);
    const parts = rows.map((f, i) => bad.get(i)?.(f) ?? tblLine(f));
    const file = path.join(dir, 'refused.tbl');
    await fs.writeFile(file, Buffer.concat(parts));
    const expected = digest(rows.filter((_, i) => !bad.has(i)).map(tableRecord));
    await client.query(`DROP TABLE IF EXISTS ${SCHEMA}.lineitem`);
    await client.query(createTableSql('lineitem', SCHEMA)!);
    await client.query(`ALTER TABLE ${SCHEMA}.lineitem ADD CONSTRAINT small CHECK (l_quantity < 1000)`);
    const rejects: Record<string, [Buffer, string]> = {};
    for (const wire of ['text', 'binary'] as const) {
      const rejectFile = path.join(dir, `refused-${wire}.rejects`);
      const r = await runCli(['load', file, '-t', 'lineitem', '--truncate', '--db', testUrl(), '--schema', SCHEMA, '--wire', wire, '--chunk-size', '16KB', '-w', '2', '--reject-file', rejectFile, '--json']);
      assert.equal(r.code, 3, r.stderr);
      const s = summaryOf(r.stdout);
      assert.deepEqual([s.total.read, s.total.loaded, s.total.rejected, s.total.skipped], [600, 597, 3, 0], 'read = loaded + rejected + skipped');
      assert.equal(await contentOf(`${SCHEMA}.lineitem`), expected);
      if (wire === 'binary') {
        const w = wireOf(s, 'lineitem');
        assert.equal(w.wire, 'binary');
        assert.equal(w.redoneChunks, 3, `each refused chunk redone through text: ${JSON.stringify(w)}`);
        assert.equal(w.fallbackChunks, 0);
      }
      rejects[wire] = [await fs.readFile(rejectFile), await fs.readFile(`${rejectFile}.log`, 'utf8')];
    }
    assert.deepEqual(rejects.binary![0], Buffer.concat([...bad.keys()].map((i) => parts[i]!)), 'the reject file holds the original lines');
    assert.deepEqual(rejects.binary![0], rejects.text![0]);
    assert.equal(rejects.binary![1], rejects.text![1], 'the same log: line, offset, SQLSTATE, column, message');
    for (const code of ['22001', '23514']) assert.match(rejects.binary![1], new RegExp(`\\t${code}\\t`));
    await client.query(`DROP TABLE ${SCHEMA}.lineitem`);
  });

  it('a value the encoders do not take (infinity, a bad date): its chunk goes as text, counted and named; the table equals text', async () => {
    const rows = lineitemFields(800);
    const parts = rows.map((f, i) => (i === 100 ? tblLine(f.map((v, k) => (k === 10 ? 'infinity' : v))) : i === 700 ? damage(f, 'bad date', tblLine) : tblLine(f)));
    const file = path.join(dir, 'fallback.tbl');
    await fs.writeFile(file, Buffer.concat(parts));
    const digests: string[] = [];
    for (const wire of ['text', 'binary'] as const) {
      const r = await runCli(['load', file, '-t', 'lineitem', '--create', '--truncate', '--db', testUrl(), '--schema', SCHEMA, '--wire', wire, '--chunk-size', '16KB', '-w', '1']);
      assert.equal(r.code, 3, r.stderr);
      digests.push(await contentOf(`${SCHEMA}.lineitem`));
      if (wire === 'binary') {
        assert.match(r.stdout, /wire: lineitem: binary wire \(\d+ chunks binary; 2 fell back to text, the first for line 101, column l_shipdate: "infinity" \(a value its encoder cannot encode exactly\)\)/);
        assert.match(r.stdout, /loaded 799 of 800 rows read \(read 800 = loaded 799 \+ rejected 1 \+ skipped 0\)/);
      }
    }
    assert.equal(digests[0], digests[1]);
    const j = await runCli(['load', file, '-t', 'lineitem', '--truncate', '--db', testUrl(), '--schema', SCHEMA, '--wire', 'binary', '--chunk-size', '16KB', '--json']);
    const w = wireOf(summaryOf(j.stdout), 'lineitem');
    assert.equal(w.fallbackChunks, 2);
    assert.match(w.firstFallback ?? '', /infinity/);
  });

  it('a chunk sent a piece at a time: a value the encoders do not take after pieces went out fails that COPY and the chunk loads as text (a fallback); a row the server refuses in a later piece is redone as text; rejects as text gives them', async () => {
    const rows = lineitemFields(3000);
    const cases = [
      { name: 'infinity', at: 2900, counts: [0, 1, 0], first: /line 2901, column l_shipdate: "infinity"/ },
      { name: 'refused', at: undefined, counts: [0, 0, 1], first: undefined },
    ];
    for (const c of cases) {
      const parts = rows.map((f, i) => (i === c.at ? tblLine(f.map((v, k) => (k === 10 ? 'infinity' : v))) : i === 2950 ? damage(f, 'overlong varchar', tblLine) : tblLine(f)));
      const file = path.join(dir, `pieces-${c.name}.tbl`);
      await fs.writeFile(file, Buffer.concat(parts));
      assert.ok(Buffer.concat(parts.slice(0, 2900)).length > 3 * 64 * 1024, 'the refused value comes after several pieces');
      const digests: string[] = [];
      const logs: string[] = [];
      for (const wire of ['text', 'binary'] as const) {
        const rejectFile = path.join(dir, `pieces-${c.name}-${wire}.rejects`);
        const r = await runCli(['load', file, '-t', 'lineitem', '--create', '--truncate', '--db', testUrl(), '--schema', SCHEMA, '--wire', wire, '--chunk-size', '8MB', '-w', '1', '--reject-file', rejectFile, '--json']);
        assert.equal(r.code, 3, r.stderr);
        const s = summaryOf(r.stdout);
        assert.deepEqual([s.total.read, s.total.loaded, s.total.rejected, s.total.skipped], [3000, 2999, 1, 0], 'read = loaded + rejected + skipped');
        digests.push(await contentOf(`${SCHEMA}.lineitem`));
        logs.push(`${await fs.readFile(rejectFile, 'utf8')}\n${await fs.readFile(`${rejectFile}.log`, 'utf8')}`);
        if (wire === 'binary') {
          const w = wireOf(s, 'lineitem');
          assert.deepEqual([w.binaryChunks, w.fallbackChunks, w.redoneChunks], c.counts, JSON.stringify(w));
          if (c.first) assert.match(w.firstFallback ?? '', c.first);
        }
      }
      assert.equal(digests[0], digests[1], c.name);
      assert.equal(logs[1], logs[0], `${c.name}: the same reject file and log either way`);
    }
  });

  it('a table with a type that has no encoder goes as text, and the summary says which column', async () => {
    await client.query(`CREATE TABLE ${SCHEMA}.typed (id int, doc xml)`);
    const file = path.join(dir, 'typed.txt');
    await fs.writeFile(file, '1\t<a/>\n2\t\\N\n');
    const r = await runCli(['load', file, '-t', 'typed', '-f', 'text', '--db', testUrl(), '--schema', SCHEMA, '--wire', 'binary']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /wire: typed: text wire \(column doc is xml: no binary encoder\)/);
    assert.equal((await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.typed`)).rows[0].n, 2);
  });

  it('compare: copy:text and copy:binary side by side, each variant\'s wire in the notes', async () => {
    const file = path.join(dir, 'compare.tbl');
    await fs.writeFile(file, Buffer.concat(lineitemFields(300).map(tblLine)));
    const r = await runCli(['compare', file, '-t', 'lineitem', '--create', '--variants', 'copy:text,copy:binary', '--repeat', '1', '--db', testUrl(), '--schema', SCHEMA]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /copy:text: text wire \(--wire text\)/);
    assert.match(r.stdout, /copy:binary: binary wire \(1 chunk binary\)/);
  });

  it('bad --wire values and combinations name the flag and the value (exit 2)', async () => {
    const bad = await runCli(['load', 'x.tbl', '--wire', 'fast', '--db', testUrl()]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /Expected `--wire` to be one of text, binary, auto, got `fast`/);
    const insert = await runCli(['load', 'x.tbl', '--wire', 'binary', '--mode', 'insert', '--db', testUrl()]);
    assert.equal(insert.code, 2);
    assert.match(insert.stderr, /`--wire binary` applies only to --mode copy/);
  });
});

describe('binary wire: exactly once across crashes', () => {
  it('SIGKILL at 3 random moments with --wire binary, then --resume: the table equals the input, once', async () => {
    const rows = lineitemFields(4000);
    const bad = new Set([1234, 3333]);
    const parts = rows.map((f, i) => (bad.has(i) ? damage(f, 'overlong varchar', tblLine) : tblLine(f)));
    const file = path.join(dir, 'crash.tbl');
    const content = Buffer.concat(parts);
    await fs.writeFile(file, content);
    const expected = digest(rows.filter((_, i) => !bad.has(i)).map(tableRecord));
    const table = `${SCHEMA}.lineitem`;
    const random = prng(20261201);
    let kills = 0;
    for (let round = 0; kills < 3 && round < 10; round++) {
      const loadId = `wire-crash-${round}`;
      const run = startCli(['load', file, '-t', 'lineitem', '--create', '--truncate', '-w', '2', '--chunk-size', '4KB', '--wire', 'binary', '--load-id', loadId, '--db', testUrl(), '--schema', SCHEMA]);
      await run.waitFor(/pgsurge: load wire-crash-\d+/);
      await sleep(Math.floor(random() * 300));
      if (run.child.exitCode === null) {
        run.child.kill('SIGKILL');
        kills++;
      }
      await run.exited;
      await assertNoHalfChunk(client, table, loadId);
      const r = await runCli(['load', file, '-t', 'lineitem', '-w', '2', '--chunk-size', '6KB', '--wire', 'binary', '--resume', '--load-id', loadId, '-q', '--db', testUrl(), '--schema', SCHEMA]);
      assert.equal(r.code, 3, `round ${round}: ${r.stderr}`);
      assert.equal((await client.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n, 3998, `round ${round}: row count`);
      assert.equal(await contentOf(table), expected, `round ${round}: content`);
      assert.deepEqual(await fs.readFile(path.join(dir, `lineitem.${loadId}.rejects`)), Buffer.concat([...bad].map((i) => parts[i]!)), `round ${round}: each bad row once`);
      await assertLedgerTiles(client, table, loadId, content.length);
    }
    assert.equal(kills, 3);
  });
});
