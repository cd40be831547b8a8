import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { Readable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { startCli, sleep, type RunningCli } from '../helpers/cli-process.js';
import { closeTestSchema, copyFrom, digest, freshSchema, openTestSchema, PGSURGE, rejectFileOf, runCli, tableRecords, testClient, testUrl } from '../helpers/test-db.js';

const SCHEMA = 'it_inputs';
let client: pg.Client;
let dir: string;

const db = (): string[] => ['--db', testUrl(), '--schema', SCHEMA];
const TEXT = '(FORMAT text)';

async function writeFile(name: string, content: string | Buffer): Promise<string> {
  const p = path.join(dir, name);
  await fs.writeFile(p, content);
  return p;
}

/** COPY text escaping, written here independently of the loader. */
const esc = (s: string): string => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t');

interface Row {
  id: number;
  name: string | null;
  price: string;
  tags: string[] | null;
  doc: { n: number; s: string } | null;
  flag: boolean;
  day: string;
}

/** Rows with the awkward bits: tabs, newlines, backslashes, quotes, commas, non-ASCII, NULLs, arrays, JSON. */
function makeRows(n: number): Row[] {
  const rows: Row[] = [];
  for (let i = 1; i <= n; i++) {
    const names = [`plain ${i}`, `tab\there ${i}`, `new\nline ${i}`, `back\\slash ${i}`, `"quoted", comma ${i}`, `héllo wörld ${i} ✓`, null];
    rows.push({
      id: i,
      name: names[i % names.length]!,
      price: (i * 7.31).toFixed(2),
      tags: i % 5 === 0 ? null : i % 5 === 1 ? [] : Array.from({ length: i % 5 }, (_, k) => `t${k}${i}`),
      doc: i % 4 === 0 ? null : { n: i, s: `v${i}` },
      flag: i % 2 === 0,
      day: `2024-0${(i % 9) + 1}-${String((i % 28) + 1).padStart(2, '0')}`,
    });
  }
  return rows;
}

/** What the server prints for each row with COPY … (FORMAT text). */
function expectedRecords(rows: readonly Row[]): string[] {
  return rows.map((r) =>
    [
      String(r.id),
      r.name === null ? '\\N' : esc(r.name),
      r.price,
      r.tags === null ? '\\N' : `{${r.tags.join(',')}}`,
      r.doc === null ? '\\N' : `{"n": ${r.doc.n}, "s": "${r.doc.s}"}`,
      r.flag ? 't' : 'f',
      r.day,
    ].join('\t'),
  );
}

function asCsv(rows: readonly Row[]): string {
  const q = (s: string): string => `"${s.replace(/"/g, '""')}"`;
  return rows
    .map((r) => [r.id, r.name === null ? '' : q(r.name), r.price, r.tags === null ? '' : q(`{${r.tags.join(',')}}`), r.doc === null ? '' : q(JSON.stringify(r.doc)), r.flag, r.day].join(','))
    .map((l) => l + '\n')
    .join('');
}

/** NDJSON with the price as a JSON number written with its trailing zero, the way an exporter would. */
function asNdjson(rows: readonly Row[]): string {
  return rows.map((r) => JSON.stringify(r).replace(/"price":"([^"]+)"/, '"price":$1') + '\n').join('');
}

function asJsonArray(rows: readonly Row[], pretty = false): string {
  return `[\n${rows.map((r) => JSON.stringify(r, null, pretty ? 2 : undefined).replace(/"price": ?"([^"]+)"/, '"price": $1')).join(',\n')}\n]\n`;
}

const TABLE_DDL = `(id int, name text, price numeric(12,2), tags text[], doc jsonb, flag boolean, day date)`;

async function expectTable(table: string, expected: string[]): Promise<void> {
  const count = await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.${table}`);
  assert.equal(count.rows[0].n, expected.length, 'row count');
  assert.equal(digest(await tableRecords(client, `${SCHEMA}.${table}`, TEXT)), digest(expected), 'content digest');
}

async function count(table: string): Promise<number> {
  return (await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.${table}`)).rows[0].n as number;
}

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-inputs-'));
  await client.query(`CREATE TABLE ${SCHEMA}.items ${TABLE_DDL}`);
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

describe('the same rows as CSV, NDJSON and JSON arrays, plain and gzipped, make the same table', () => {
  const rows = makeRows(1500);
  const expected = expectedRecords(rows);
  const inputs: { name: string; content: () => string | Buffer }[] = [
    { name: 'items.csv', content: () => asCsv(rows) },
    { name: 'items.ndjson', content: () => asNdjson(rows) },
    { name: 'items.jsonl', content: () => asNdjson(rows).replace(/\n/g, '\r\n') + '\n\n' },
    { name: 'items.json', content: () => asJsonArray(rows) },
    { name: 'items.json', content: () => asJsonArray(rows, true) },
    { name: 'items.csv.gz', content: () => gzipSync(asCsv(rows)) },
    { name: 'items.ndjson.gz', content: () => gzipSync(asNdjson(rows)) },
    { name: 'items.json.gz', content: () => gzipSync(asJsonArray(rows)) },
  ];
  for (const input of inputs) {
    for (const workers of [1, 3]) {
      it(`${input.name}${input.name.endsWith('.json') ? ` (${inputs.indexOf(input) === 4 ? 'pretty' : 'compact'})` : ''} with ${workers} worker(s): rows and digest equal the input`, async () => {
        const file = await writeFile(input.name, input.content());
        const r = await runCli(['load', file, '--truncate', '-w', String(workers), '--chunk-size', '8KB', ...db()]);
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, /items\s+1,500/);
        await expectTable('items', expected);
      });
    }
  }

  it('NDJSON from stdin (plain and gzipped) and a JSON array under --json-path', async () => {
    let r = await runCli(['load', '-', '-f', 'ndjson', '-t', 'items', '--truncate', '-w', '2', '--chunk-size', '4KB', ...db()], { stdin: asNdjson(rows) });
    assert.equal(r.code, 0, r.stderr);
    await expectTable('items', expected);
    r = await runCli(['load', '-', '-f', 'ndjson', '--compression', 'gzip', '-t', 'items', '--truncate', '-w', '2', '--chunk-size', '4KB', ...db()], { stdin: gzipSync(asNdjson(rows)) });
    assert.equal(r.code, 0, r.stderr);
    await expectTable('items', expected);
    const doc = `{"meta": {"skip": [1, {"items": [{"id": -1}]}], "note": "${'x'.repeat(100_000)}"}, "data": {"count": 1500, "items": ${asJsonArray(rows)}}, "after": [1,2,3]}`;
    const file = await writeFile('export.json', doc);
    r = await runCli(['load', file, '-t', 'items', '--json-path', 'data.items', '--truncate', '-w', '2', '--chunk-size', '4KB', ...db()]);
    assert.equal(r.code, 0, r.stderr);
    await expectTable('items', expected);
  });
});

describe('JSON values become what json_populate_record makes of them', () => {
  const DDL = `(i int, b bigint, n numeric, f float8, t text, v varchar(20), ok boolean, d date, ia int[], ta text[], m int[][], j json, jb jsonb, jba jsonb[])`;
  // Every kind of JSON value in every column where PostgreSQL accepts it.
  const objects = [
    '{"i":1,"b":9223372036854775807,"n":12345678901234567890.123456789,"f":1.5e300,"t":"tab\\there\\nnewline \\\\ \\"q\\" \\u00e9","v":"short","ok":true,"d":"2024-02-29"}',
    '{"i":null,"b":null,"n":1.10,"f":-0.0,"t":1.50,"v":true,"ok":false,"d":null}',
    '{"t":{"a":[1,2.0,{"b":null}]},"v":[1,2],"ia":[1,null,3],"ta":["a","b c","x\\"y","back\\\\slash",null,"NULL",""],"m":[[1,2],[3,4]]}',
    '{"j":{"k":[1,2.50,"s",null,true]},"jb":{"k":[1,2.50,"s",null,true]},"jba":[{"a":1},"s",2,null,[3]]}',
    '{"j":"a string","jb":"a string","ia":[],"ta":[]}',
    '{"j":12.50,"jb":12.50,"n":0.000001,"f":3}',
    '{"j":[1,"x"],"jb":null,"t":null,"i":-42}',
    '{"j":null,"t":"\\\\N","v":"\\\\N","ta":["\\\\N"]}',
    '{}',
  ];

  it('NDJSON and a JSON array give the table json_populate_record gives, value for value', async () => {
    await client.query(`CREATE TABLE ${SCHEMA}.kinds ${DDL}`);
    await client.query(`CREATE TABLE ${SCHEMA}.kinds_ref ${DDL}`);
    for (const o of objects) await client.query(`INSERT INTO ${SCHEMA}.kinds_ref SELECT * FROM json_populate_record(null::${SCHEMA}.kinds, $1::json)`, [o]);
    const reference = await tableRecords(client, `${SCHEMA}.kinds_ref`, TEXT);
    assert.equal(reference.length, objects.length);

    const nd = await writeFile('kinds.ndjson', objects.join('\n') + '\n');
    let r = await runCli(['load', nd, '-w', '2', '--chunk-size', '200', ...db()]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual((await tableRecords(client, `${SCHEMA}.kinds`, TEXT)).sort(), [...reference].sort());

    const arr = await writeFile('kinds.json', `[${objects.join(',\n')}]`);
    r = await runCli(['load', arr, '--truncate', '-w', '2', '--chunk-size', '200', ...db()]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual((await tableRecords(client, `${SCHEMA}.kinds`, TEXT)).sort(), [...reference].sort());
  });

  it('a json column keeps an NDJSON value\'s own text, spaces included, as json_populate_record does', async () => {
    const line = '{"j": {"a" :  [1, 2.0]  }, "jb": {"a" :  [1, 2.0]}}';
    const ref = await client.query<{ j: string; jb: string }>(`SELECT j::text, jb::text FROM json_populate_record(null::${SCHEMA}.kinds, $1::json)`, [line]);
    const nd = await writeFile('kinds.ndjson', line + '\n');
    const r = await runCli(['load', nd, '--truncate', ...db()]);
    assert.equal(r.code, 0, r.stderr);
    const got = await client.query(`SELECT j::text, jb::text FROM ${SCHEMA}.kinds`);
    assert.deepEqual(got.rows, ref.rows);
  });

  it('--missing default: a missing key takes the column default, a JSON null stays NULL', async () => {
    await client.query(`CREATE TABLE ${SCHEMA}.defaults (id int, city text DEFAULT 'Paris', n int DEFAULT 7)`);
    const lines = ['{"id":1}', '{"id":2,"city":"Oslo"}', '{"id":3,"city":null}', '{"id":4,"n":1}', '{"id":5}', '{"id":6}'];
    const file = await writeFile('defaults.ndjson', lines.join('\n') + '\n');
    for (const [name, args] of [
      ['ndjson', [file]],
      ['json', [await writeFile('defaults.json', `[${lines.join(',')}]`)]],
    ] as const) {
      const r = await runCli(['load', ...args, '-t', 'defaults', '--truncate', '--missing', 'default', '-w', '2', '--chunk-size', '1', ...db()]);
      assert.equal(r.code, 0, `${name}: ${r.stderr}`);
      assert.deepEqual((await tableRecords(client, `${SCHEMA}.defaults`, TEXT)).sort(), ['1\tParis\t7', '2\tOslo\t7', '3\t\\N\t7', '4\tParis\t1', '5\tParis\t7', '6\tParis\t7']);
    }
    const r = await runCli(['load', file, '-t', 'defaults', '--truncate', ...db()]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual((await tableRecords(client, `${SCHEMA}.defaults`, TEXT)).sort(), ['1\t\\N\t\\N', '2\tOslo\t\\N', '3\t\\N\t\\N', '4\t\\N\t1', '5\t\\N\t\\N', '6\t\\N\t\\N'], 'without --missing default a missing key is NULL');
  });
});

describe('headers, column lists, delimiters, NULL strings, quotes', () => {
  before(async () => {
    await client.query(`CREATE TABLE ${SCHEMA}.people (id int, name text, city text DEFAULT 'nowhere')`);
  });

  it('--header skips the first line only in the range that starts the file, whatever the workers', async () => {
    const lines = Array.from({ length: 800 }, (_, i) => `${i + 1}|name ${i + 1}|city ${i % 7}|`);
    const file = await writeFile('people.tbl', `id|name|city|\n${lines.join('\n')}\n`);
    for (const workers of ['1', '4']) {
      const r = await runCli(['load', file, '--header', '--truncate', '-w', workers, '--chunk-size', '1KB', ...db()]);
      assert.equal(r.code, 0, r.stderr);
      await expectTable('people', lines.map((l) => l.replace(/\|$/, '').replace(/\|/g, '\t')));
    }
  });

  it('--header skips a title line of any width, as COPY (HEADER) does: the data loads as the server loads it', async () => {
    const data = Array.from({ length: 300 }, (_, i) => ({ id: i + 1, name: `name, ${i + 1}`, city: `city ${i % 7}` }));
    const cases: { name: string; content: string; copy: string }[] = [
      { name: 'title.csv', content: `People export 2024\n${data.map((r) => `${r.id},"${r.name}",${r.city}`).join('\n')}\n`, copy: '(FORMAT csv, HEADER)' },
      { name: 'title.txt', content: `a\tb\tc\td\te\n${data.map((r) => `${r.id}\t${r.name}\t${r.city}`).join('\n')}\n`, copy: '(FORMAT text, HEADER)' },
      { name: 'title.tbl', content: `people|\n${data.map((r) => `${r.id}|${r.name}|${r.city}|`).join('\n')}\n`, copy: '' },
    ];
    await client.query(`CREATE TABLE ${SCHEMA}.people_by_server (LIKE ${SCHEMA}.people)`);
    for (const c of cases) {
      const file = await writeFile(c.name, c.content);
      const r = await runCli(['load', file, '-t', 'people', '--header', '--truncate', '-w', '2', '--json', '--db', testUrl(), '--schema', SCHEMA]);
      assert.equal(r.code, 0, `${c.name}: ${r.stderr}`);
      const s = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
      assert.deepEqual([s.total.read, s.total.loaded, s.total.rejected, s.total.skipped], [300, 300, 0, 0], `${c.name}: read = loaded + rejected + skipped`);
      // The server's own COPY of the same bytes (a .tbl is text with '|' and a trailing '|' per line: the server reads it with the header cut off by hand).
      await client.query(`TRUNCATE ${SCHEMA}.people_by_server`);
      const bytes = c.copy === '' ? c.content.slice(c.content.indexOf('\n') + 1).replace(/\|$/gm, '') : c.content;
      const sql = `COPY ${SCHEMA}.people_by_server FROM STDIN ${c.copy === '' ? "(FORMAT text, DELIMITER '|')" : c.copy}`;
      await pipeline(Readable.from([Buffer.from(bytes)]), client.query(copyFrom(sql)));
      const server = await tableRecords(client, `${SCHEMA}.people_by_server`, TEXT);
      assert.equal(server.length, 300);
      assert.equal(digest(await tableRecords(client, `${SCHEMA}.people`, TEXT)), digest(server), `${c.name}: the table equals the server's COPY of the file`);
    }
  });

  it('--header match maps columns by the header\'s names; a header naming no column stops before anything is truncated', async () => {
    const file = await writeFile('people.csv', 'city,"id"\r\n"Oslo, NO",1\r\nParis,2\r\n');
    let r = await runCli(['load', file, '--header', 'match', '--truncate', '-w', '2', ...db()]);
    assert.equal(r.code, 0, r.stderr);
    await expectTable('people', ['1\t\\N\tOslo, NO', '2\t\\N\tParis']);
    const bad = await writeFile('people.csv', 'id,nickname\n3,x\n');
    r = await runCli(['load', bad, '--header', 'match', '--truncate', ...db()]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /the header of .*people\.csv names column "nickname", which table "it_inputs"\."people" does not have/);
    assert.match(r.stderr, /hint: the table's columns are: id, name, city/);
    await expectTable('people', ['1\t\\N\tOslo, NO', '2\t\\N\tParis']); // not truncated, nothing loaded
  });

  it('--columns loads a subset in another order; the rest get their defaults; an unknown name exits 2', async () => {
    const file = await writeFile('people.txt', 'Ann\t10\nBob\t\\N\n');
    let r = await runCli(['load', file, '-t', 'people', '--columns', 'name,id', '--truncate', ...db()]);
    assert.equal(r.code, 0, r.stderr);
    await expectTable('people', ['10\tAnn\tnowhere', '\\N\tBob\tnowhere']);
    r = await runCli(['load', file, '-t', 'people', '--columns', 'name,ident', ...db()]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--columns names column "ident", which table "it_inputs"\."people" does not have/);
    await expectTable('people', ['10\tAnn\tnowhere', '\\N\tBob\tnowhere']);
  });

  it('--delimiter, --null, --quote and --escape mean what COPY means by them', async () => {
    const csv = await writeFile('people.csv', "1;'it''s; here';NA\n2;'back\\'s';''\n3;NA;'multi\nline'\n");
    let r = await runCli(['load', csv, '--delimiter', ';', '--quote', "'", '--escape', '\\', '--null', 'NA', '--truncate', '-w', '2', ...db()]);
    assert.equal(r.code, 0, r.stderr);
    // With ESCAPE other than QUOTE, '' is not a quote inside quotes: it closes and reopens the quoted part, as in COPY.
    await expectTable('people', ['1\tits; here\t\\N', "2\tback's\t", '3\t\\N\tmulti\\nline']);
    const txt = await writeFile('people.txt', '1,Ann,-\n2,-,Rome\n');
    r = await runCli(['load', txt, '-t', 'people', '--delimiter', ',', '--null', '-', '--truncate', ...db()]);
    assert.equal(r.code, 0, r.stderr);
    await expectTable('people', ['1\tAnn\t\\N', '2\t\\N\tRome']);
  });

  it('--skip and --limit cut at record boundaries (CSV records spanning lines too)', async () => {
    const csv = await writeFile('people.csv', 'id,name,city\n1,"a\nb",x\n2,b,y\n3,"c\n\nc",z\n4,d,w\n5,e,v\n');
    const r = await runCli(['load', csv, '--header', '--skip', '1', '--limit', '2', '--truncate', '-w', '3', '--chunk-size', '1', ...db()]);
    assert.equal(r.code, 0, r.stderr);
    await expectTable('people', ['2\tb\ty', '3\tc\\n\\nc\tz']);
    const nd = await writeFile('people.ndjson', Array.from({ length: 50 }, (_, i) => `{"id":${i + 1}}`).join('\n'));
    const r2 = await runCli(['load', nd, '--skip', '10', '--limit', '5', '--truncate', '-w', '3', ...db()]);
    assert.equal(r2.code, 0, r2.stderr);
    assert.deepEqual((await client.query(`SELECT array_agg(id ORDER BY id) a FROM ${SCHEMA}.people`)).rows[0].a, [11, 12, 13, 14, 15]);
    const arr = await writeFile('people.json', JSON.stringify(Array.from({ length: 50 }, (_, i) => ({ id: i + 1 }))));
    const r3 = await runCli(['load', arr, '--skip', '48', '--limit', '5', '--truncate', ...db()]);
    assert.equal(r3.code, 0, r3.stderr);
    assert.deepEqual((await client.query(`SELECT array_agg(id ORDER BY id) a FROM ${SCHEMA}.people`)).rows[0].a, [49, 50]);
  });
});

describe('encodings and byte-order marks', () => {
  const names = ['José', 'Zoë', 'naïve café', '€ 5 — “quoted”', 'Œuvre'];
  before(async () => {
    await client.query(`CREATE TABLE ${SCHEMA}.enc (id int, name text)`);
  });
  it('WIN1252 and LATIN1 input are converted to UTF-8, in CSV, text (byte ranges) and NDJSON', async () => {
    // Windows-1252 bytes, written out by hand: Latin-1 below 0x100, plus the few 0x80–0x9F characters used here.
    const SPECIAL: Record<number, number> = { 0x20ac: 0x80, 0x2014: 0x97, 0x201c: 0x93, 0x201d: 0x94, 0x152: 0x8c };
    const win1252 = (s: string): Buffer => Buffer.from([...s].map((c) => SPECIAL[c.codePointAt(0)!] ?? c.codePointAt(0)!));
    const rows = names.map((n, i) => ({ id: i + 1, name: n }));
    const expected = rows.map((r) => `${r.id}\t${r.name}`);
    const cases: [string, Buffer, string][] = [
      ['enc.csv', win1252(rows.map((r) => `${r.id},"${r.name}"\n`).join('')), 'WIN1252'],
      ['enc.txt', win1252(rows.map((r) => `${r.id}\t${r.name}\n`).join('')), 'windows-1252'],
      ['enc.ndjson', win1252(rows.map((r) => JSON.stringify(r) + '\n').join('')), 'cp1252'],
      ['enc.json', win1252(JSON.stringify(rows)), 'WIN1252'],
    ];
    for (const [name, bytes, encoding] of cases) {
      const file = await writeFile(name, bytes);
      const r = await runCli(['load', file, '-t', 'enc', '--encoding', encoding, '--truncate', '-w', '2', '--chunk-size', '16', ...db()]);
      assert.equal(r.code, 0, `${name}: ${r.stderr}`);
      await expectTable('enc', expected);
    }
    // LATIN1 is ISO-8859-1: byte 0x80 is the control character U+0080, not the euro sign.
    const latin1 = await writeFile('enc.txt', Buffer.concat([Buffer.from('1\t', 'latin1'), Buffer.from('Jos\u00e9 \u00ff', 'latin1'), Buffer.from([0x0a])]));
    const r = await runCli(['load', latin1, '-t', 'enc', '--encoding', 'LATIN1', '--truncate', ...db()]);
    assert.equal(r.code, 0, r.stderr);
    await expectTable('enc', ['1\tJosé ÿ']);
  });

  it('UTF-16 and UTF-32 input (a byte-order mark says so) is refused before anything is written, with how to convert it: a file, gzipped, stdin; --create and schema too', async () => {
    const text = 'id,name\r\n1,José\r\n2,Zoë\r\n';
    const utf16le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const utf16be = Buffer.from(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]).swap16());
    const utf32le = Buffer.alloc(4 * (text.length + 1));
    [0xfeff, ...[...text].map((c) => c.codePointAt(0)!)].forEach((cp, i) => utf32le.writeUInt32LE(cp, 4 * i));
    await client.query(`TRUNCATE ${SCHEMA}.enc`);
    await client.query(`INSERT INTO ${SCHEMA}.enc VALUES (9, 'kept')`);
    const cases: [string, Buffer, string][] = [
      ['wide16.csv', utf16le, 'UTF-16LE'],
      ['wide16be.csv', utf16be, 'UTF-16BE'],
      ['wide32.csv', utf32le, 'UTF-32LE'],
      ['wide16.csv.gz', gzipSync(utf16le), 'UTF-16LE'],
    ];
    for (const [name, bytes, encoding] of cases) {
      const file = await writeFile(name, bytes);
      const r = await runCli(['load', file, '-t', 'enc', '-f', 'csv', '--header', '--truncate', '-w', '2', ...db()]);
      assert.equal(r.code, 1, `${name}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`${name.replace(/\./g, '\\.')} is ${encoding} text .*PostgreSQL reads no UTF-16 or UTF-32, and nothing was loaded\n  hint: convert it to UTF-8 first: .*iconv -f ${encoding.slice(0, 6)} -t UTF-8`));
      await expectTable('enc', ['9\tkept']); // refused before --truncate
    }
    const piped = await runCli(['load', '-', '-t', 'enc', '-f', 'csv', '--header', '--json', ...db()], { stdin: utf16le });
    assert.equal(piped.code, 1, piped.stderr);
    assert.match(piped.stderr, /stdin is UTF-16LE text/);
    // Stopped at its first bytes: nothing read, nothing loaded (read = loaded + rejected + skipped = 0).
    const total = (JSON.parse(piped.stdout.trim().split('\n').at(-1)!) as { total: { read: number; loaded: number; rejected: number; skipped: number } }).total;
    assert.deepEqual({ read: total.read, loaded: total.loaded, rejected: total.rejected, skipped: total.skipped }, { read: 0, loaded: 0, rejected: 0, skipped: 0 });
    await expectTable('enc', ['9\tkept']);
    const file = await writeFile('wide_new.csv', utf16le);
    for (const args of [['load', file, '--create', ...db()], ['schema', file]]) {
      const r = await runCli(args);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /wide_new\.csv is UTF-16LE text/);
    }
    assert.equal((await client.query(`SELECT to_regclass('${SCHEMA}.wide_new') AS t`)).rows[0].t, null);
  });

  it('a UTF-8 byte-order mark is dropped (and the line numbers stay right)', async () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    for (const [name, body] of [
      ['enc.csv', '1,José\n2,Zoë\n'],
      ['enc.tbl', '1|José|\n2|Zoë|\n'],
      ['enc.ndjson', '{"id":1,"name":"José"}\n{"id":2,"name":"Zoë"}\n'],
      ['enc.json', '[{"id":1,"name":"José"},{"id":2,"name":"Zoë"}]'],
    ] as const) {
      const file = await writeFile(name, Buffer.concat([bom, Buffer.from(body)]));
      const r = await runCli(['load', file, '-t', 'enc', '--truncate', '-w', '2', ...db()]);
      assert.equal(r.code, 0, `${name}: ${r.stderr}`);
      await expectTable('enc', ['1\tJosé', '2\tZoë']);
    }
    // A bad row after a BOM is rejected with its true line number (3), the rest loads: read 3 = 2 loaded + 1 rejected.
    const bad = await writeFile('enc.tbl', Buffer.concat([bom, Buffer.from('1|a|\n2|b|\nx|c|\n')]));
    const r = await runCli(['load', bad, '-t', 'enc', '--truncate', '--reject-dir', path.join(dir, 'bom-rejects'), '--db', testUrl(), '--schema', SCHEMA]);
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stdout, /enc\s+3\s+2\s+1\s+0/);
    const log = await fs.readFile(`${rejectFileOf(r)}.log`, 'utf8');
    assert.match(log, /enc\.tbl\t3\t\d+\t22P02\tid\t.*integer/);
    assert.equal(await fs.readFile(rejectFileOf(r), 'utf8'), 'x|c|\n');
    await expectTable('enc', ['1\ta', '2\tb']);
  });
});

describe('bad input stops with its place named, and nothing of its chunk is committed', () => {
  before(async () => {
    await client.query(`CREATE TABLE ${SCHEMA}.ids (id int PRIMARY KEY, name text)`);
  });
  const lines = (n: number): string[] => Array.from({ length: n }, (_, i) => JSON.stringify({ id: i + 1, name: `row ${i + 1}` }));

  /** The rows loaded before the stop are a prefix of the input that ends before the bad line. */
  async function expectPrefixBefore(badLine: number): Promise<number> {
    const got = await client.query<{ n: number; max: number | null }>(`SELECT count(*)::int n, max(id) max FROM ${SCHEMA}.ids`);
    const { n, max } = got.rows[0]!;
    assert.ok(n < badLine, `loaded ${n} rows, all before line ${badLine}`);
    assert.equal(max ?? 0, n, 'the loaded rows are the first ones, none missing');
    return n;
  }

  it('a malformed NDJSON line is rejected verbatim with its line and column, the rest loads, with 1 and 3 workers', async () => {
    const all = lines(600);
    all[436] = '{"id": 437, "name": "row 437"'; // no closing brace
    const file = await writeFile('ids.ndjson', all.join('\n') + '\n');
    for (const workers of ['1', '3']) {
      const rejectDir = path.join(dir, `malformed-${workers}`);
      const r = await runCli(['load', file, '-w', workers, '--chunk-size', '1KB', '--truncate', '--reject-dir', rejectDir, ...db()]);
      assert.equal(r.code, 3, r.stderr);
      assert.match(r.stdout, /read 600 = loaded 599 \+ rejected 1 \+ skipped 0/);
      assert.equal(await count('ids'), 599);
      assert.equal((await client.query(`SELECT count(*)::int n FROM ${SCHEMA}.ids WHERE id = 437`)).rows[0].n, 0);
      assert.equal(await fs.readFile(rejectFileOf(r), 'utf8'), `${all[436]}\n`);
      assert.match(await fs.readFile(`${rejectFileOf(r)}.log`, 'utf8'), /ids\.ndjson\t437\t\d+\t\t\tcannot be read as an NDJSON line \(at character 30\): malformed JSON: expected `,` or `}`, found end of input/);
    }
  });

  it('a key that is not a column stops (or is left out with --ignore-extra-keys)', async () => {
    const all = lines(50);
    all[9] = '{"id": 10, "name": "x", "nickname": "y"}';
    const file = await writeFile('ids.ndjson', all.join('\n'));
    await client.query(`TRUNCATE ${SCHEMA}.ids`);
    // NDJSON: that line is rejected, the others load.
    let r = await runCli(['load', file, '--truncate', '--reject-dir', path.join(dir, 'extra-key'), ...db()]);
    assert.equal(r.code, 3, r.stderr);
    assert.match(await fs.readFile(`${rejectFileOf(r)}.log`, 'utf8'), /\t10\t\d+\t\t\tcannot be read as an NDJSON line \(at character 25\): key "nickname" is not a column of ids \(--ignore-extra-keys leaves such keys out\)/);
    assert.equal(await count('ids'), 49);
    await client.query(`TRUNCATE ${SCHEMA}.ids`);
    const arr = await writeFile('ids.json', `[${all.join(',')}]`);
    r = await runCli(['load', arr, ...db()]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /ids\.json: array element 10 .*key "nickname" is not a column of ids/);
    assert.equal(await count('ids'), 0);
    r = await runCli(['load', file, '--ignore-extra-keys', '--truncate', ...db()]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await count('ids'), 50);
  });

  it('a value of the wrong type: the server\'s message with the line (NDJSON) or the element (JSON array)', async () => {
    const all = lines(300);
    all[199] = '{"id": "two hundred", "name": "x"}';
    const nd = await writeFile('ids.ndjson', all.join('\n'));
    // The bad row is rejected with its line (NDJSON: the source line itself), the other 299 load.
    const loadedAllBut200 = async (): Promise<void> => {
      const got = await client.query<{ n: number; missing: number }>(`SELECT count(*)::int n, (SELECT count(*)::int FROM ${SCHEMA}.ids WHERE id = 200) missing FROM ${SCHEMA}.ids`);
      assert.deepEqual(got.rows[0], { n: 299, missing: 0 });
    };
    for (const workers of ['1', '3']) {
      await client.query(`TRUNCATE ${SCHEMA}.ids`);
      const rejectDir = path.join(dir, `wrong-type-${workers}`);
      const r = await runCli(['load', nd, '-w', workers, '--chunk-size', '1KB', '--truncate', '--reject-dir', rejectDir, ...db()]);
      assert.equal(r.code, 3, r.stderr);
      const log = await fs.readFile(`${rejectFileOf(r)}.log`, 'utf8');
      assert.match(log, /ids\.ndjson\t200\t\d+\t22P02\tid\tinvalid input syntax for type integer: "two hundred"/);
      assert.equal(await fs.readFile(rejectFileOf(r), 'utf8'), `${all[199]}\n`);
      await loadedAllBut200();
    }
    const arr = await writeFile('ids.json', `[${all.join(',\n')}]`);
    const rejectDir = path.join(dir, 'wrong-type-json');
    const r = await runCli(['load', arr, '-w', '1', '--chunk-size', '1KB', '--truncate', '--reject-dir', rejectDir, ...db()]);
    assert.equal(r.code, 3, r.stderr);
    const log = await fs.readFile(`${rejectFileOf(r)}.log`, 'utf8');
    assert.match(log, /ids\.json\t\t\d+\t22P02\tid\tinvalid input syntax for type integer: "two hundred"/);
    await loadedAllBut200();
  });

  it('malformed JSON in an array names its line and column', async () => {
    const all = lines(300);
    all[249] = '{"id": 250 "name": "x"}';
    const arr = await writeFile('ids.json', `[\n${all.join(',\n')}\n]`);
    await client.query(`TRUNCATE ${SCHEMA}.ids`);
    const r = await runCli(['load', arr, '-w', '2', '--chunk-size', '1KB', ...db()]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /ids\.json: malformed JSON at line 251, column 12: expected ','/);
    await expectPrefixBefore(250);
    const notArray = await writeFile('ids.json', '{"data": []}');
    const r2 = await runCli(['load', notArray, ...db()]);
    assert.equal(r2.code, 1);
    assert.match(r2.stderr, /ids\.json: the document is not a JSON array \(it starts with object\)/);
    assert.match(r2.stderr, /hint: give --json-path/);
    const r3 = await runCli(['load', notArray, '--json-path', 'data.items', ...db()]);
    assert.equal(r3.code, 1);
    assert.match(r3.stderr, /ids\.json: no value at --json-path data\.items/);
  });

  it('a truncated .gz stops with the file and what was read; the chunks before it stay', async () => {
    const all = lines(5000).join('\n') + '\n';
    const gz = gzipSync(all);
    const file = await writeFile('ids.ndjson.gz', gz.subarray(0, Math.floor(gz.length * 0.6)));
    await client.query(`TRUNCATE ${SCHEMA}.ids`);
    const r = await runCli(['load', file, '-w', '2', '--chunk-size', '4KB', ...db()]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /ids\.ndjson\.gz: the gzip data is truncated or corrupt after \d+ bytes of content \(unexpected end of file\)/);
    const n = await expectPrefixBefore(5000);
    assert.ok(n > 0, 'chunks before the damage were loaded');
  });
});

describe('a pipe named as a file (a named pipe, the shell\'s <(…)) is read once, as stdin is', () => {
  // A CSV with a header, quoted fields over two lines and one row the server refuses.
  const csvRows = Array.from({ length: 3000 }, (_, i) => (i === 1700 ? `x${i},"bad id"` : `${i},"row ${i}${i % 7 === 0 ? '\nsecond line' : ''}, ""q"""`));
  const csv = `id,name\n${csvRows.join('\n')}\n`;
  let fifo: string;
  let expected: string;
  before(async () => {
    await client.query(`CREATE TABLE ${SCHEMA}.piped (id int, name text)`);
    await client.query(`CREATE TABLE ${SCHEMA}.piped_ref (id int, name text)`);
    // The oracle: the server's COPY of the same bytes, the refused row left out.
    const stream = client.query(copyFrom(`COPY ${SCHEMA}.piped_ref FROM STDIN (FORMAT csv, HEADER)`));
    stream.end(`id,name\n${csvRows.filter((_, i) => i !== 1700).join('\n')}\n`);
    await finished(stream);
    expected = digest(await tableRecords(client, `${SCHEMA}.piped_ref`));
    fifo = path.join(dir, 'named.pipe');
    execFileSync('mkfifo', [fifo]);
  });

  it('a named pipe, -w 2, 1 KB chunks, --header: the server\'s table of the same bytes; the refused row in the reject file beside it; read = loaded + rejected', async () => {
    await client.query(`TRUNCATE ${SCHEMA}.piped`);
    const run = runCli(['load', fifo, '-t', 'piped', '-f', 'csv', '--header', '-w', '2', '--chunk-size', '1KB', '--json', ...db()]);
    await fs.writeFile(fifo, csv); // opens when the load opens it for reading, once
    const r = await run;
    assert.equal(r.code, 3, r.stderr);
    const s = JSON.parse(r.stdout.trim().split('\n').at(-1)!).tables[0] as { read: number; loaded: number; rejected: number; skipped: number };
    assert.deepEqual(s, { ...s, read: 3000, loaded: 2999, rejected: 1 });
    assert.equal(s.read, s.loaded + s.rejected + s.skipped);
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.piped`)), expected);
    assert.match(await fs.readFile(rejectFileOf(r), 'utf8'), /^x1700,"bad id"\n$/);
    assert.equal(path.dirname(rejectFileOf(r)), dir);
  });

  it('<(cat file) in bash (/dev/fd/N), NDJSON at -w 2: the same table; a reject file goes to the folder the load runs in, not /dev/fd', async () => {
    await client.query(`TRUNCATE ${SCHEMA}.piped`);
    const lines = Array.from({ length: 2000 }, (_, i) => (i === 999 ? '{"id": "nine", "name": "bad"}' : JSON.stringify({ id: i, name: `row ${i}` })));
    const file = await writeFile('piped.ndjson', lines.join('\n') + '\n');
    const cwd = await fs.mkdtemp(path.join(dir, 'cwd-'));
    const r = await runCli(['-c', `exec "$0" "$1" load <(cat "$2") -t piped -f ndjson -w 2 --chunk-size 2KB --db "$3" --schema ${SCHEMA}`, process.execPath, PGSURGE, file, testUrl()], { command: 'bash', cwd });
    assert.equal(r.code, 3, r.stderr);
    const got = await client.query<{ n: number; sum: number }>(`SELECT count(*)::int AS n, sum(id)::int AS sum FROM ${SCHEMA}.piped`);
    assert.deepEqual(got.rows[0], { n: 1999, sum: (1999 * 2000) / 2 - 999 });
    assert.equal(path.dirname(rejectFileOf(r)), await fs.realpath(cwd));
  });

  it('what would read a pipe before the load is refused, and nothing is read from it: --header match and Parquet (exit 2), --create (exit 1, as for stdin)', async () => {
    const cases: [readonly string[], number, RegExp][] = [
      [['-t', 'piped', '-f', 'csv', '--header', 'match'], 2, /`--header match` reads the first line before the load: it needs a regular file, and .*named\.pipe is a pipe or device, read once as it streams/],
      [['-t', 'piped_new', '-f', 'csv', '--header', '--create'], 1, /table .*piped_new.* does not exist and pgsurge cannot describe its input[\s\S]*stdin or a pipe cannot be described/],
      [['-t', 'piped', '-f', 'parquet'], 2, /named\.pipe \(a pipe or device\) cannot be read as Parquet: .*needs a regular file/],
    ];
    for (const [args, code, message] of cases) {
      const r = await runCli(['load', fifo, ...args, ...db()]);
      assert.equal(r.code, code, r.stderr);
      assert.match(r.stderr, message);
    }
  });

  // No writer feeds these pipes: a command that opened one to read would wait for ever, and `timeout` ends it with 124.
  const within = (args: readonly string[]): ReturnType<typeof runCli> => runCli(['-k', '5', '20', process.execPath, PGSURGE, ...args], { command: 'timeout' });
  const newPipe = async (name: string): Promise<string> => {
    const p = path.join(dir, name);
    await fs.rm(p, { force: true });
    execFileSync('mkfifo', [p]);
    return p;
  };

  it('SIGTERM while the input waits (a named pipe with no writer yet, a named pipe\'s or stdin\'s writer sending nothing more) ends the load at once: exit 130, the resume command', async () => {
    const stopWaiting = async (args: readonly string[], feed: (cli: RunningCli) => Promise<() => Promise<void>>): Promise<void> => {
      const cli = startCli(['load', ...args, '-t', 'piped', '-f', 'text', ...db()], {}, 'pipe');
      await cli.waitFor(/pgsurge: load /);
      const done = await feed(cli);
      await sleep(300);
      cli.child.kill('SIGTERM');
      const ended = await Promise.race([cli.exited, sleep(15_000).then(() => undefined)]);
      if (ended === undefined) cli.child.kill('SIGKILL');
      await done();
      assert.deepEqual(ended, { code: 130, signal: null }, `${args.join(' ')}: ${cli.stderr()}`);
      assert.match(cli.stderr(), /interrupted[\s\S]*resume with: pgsurge load /);
    };
    const nothing = async (): Promise<() => Promise<void>> => async () => undefined;
    await client.query(`TRUNCATE ${SCHEMA}.piped`);
    await stopWaiting([await newPipe('unfed.pipe')], nothing);
    const idle = await newPipe('idle.pipe');
    await stopWaiting([idle], async () => {
      const writer = await fs.open(idle, 'w'); // opens once the load has opened it to read
      await writer.write('1\ta\n2\tb\n');
      return async () => writer.close();
    });
    await stopWaiting(['-'], async (cli) => {
      cli.child.stdin!.write('3\tc\n');
      return async () => void cli.child.stdin!.destroy();
    });
  });

  it('pgsurge compare of a named pipe is refused before it is opened (each variant reads the input again: the second would wait for ever)', async () => {
    const r = await within(['compare', fifo, '-t', 'piped', '-f', 'text', '--variants', 'copy:w1,copy:w2', ...db()]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /compare reads its input once per run: .*named\.pipe is a pipe or device, read once as it streams/);
  });

  it('a named pipe named twice (its path, and a link to it) is refused before it is opened: two readers would split its bytes between them', async () => {
    const link = path.join(dir, 'named-link.pipe');
    await fs.rm(link, { force: true });
    await fs.symlink(fifo, link);
    for (const [a, b] of [[fifo, fifo], [fifo, link]] as const) {
      const r = await within(['load', a, b, '-t', 'piped', '-f', 'text', ...db()]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /named(-link)?\.pipe and .*named\.pipe are the same pipe or device: two readers would split its bytes between them/);
    }
  });

  it('- and /dev/stdin in one load (one pipe, two readers) are refused before either is read', async () => {
    const r = await runCli(['load', '-', '/dev/stdin', '-t', 'piped', '-f', 'text', ...db()], { stdin: '1\ta\n2\tb\n' });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /\/dev\/stdin and - are the same pipe or device: two readers would split its bytes between them/);
  });

  it('pgsurge schema of a named pipe is refused (exit 2), not an empty CREATE TABLE; a DBT-3 table\'s built-in DDL is still printed', async () => {
    const csvPipe = await newPipe('sniffed.csv');
    for (const json of [[], ['--json']]) {
      const r = await within(['schema', csvPipe, ...json]);
      assert.equal(r.code, 2, r.stdout + r.stderr);
      assert.match(r.stderr, /pgsurge schema reads a sample from across the file: it needs a regular file, and .*sniffed\.csv is a pipe or device/);
      assert.equal(r.stdout, '');
    }
    const builtIn = await within(['schema', await newPipe('region.tbl')]);
    assert.equal(builtIn.code, 0, builtIn.stderr);
    assert.match(builtIn.stdout, /CREATE TABLE "region" \(/);
  });

  it('a named pipe where a file loaded before was (its rows in the table): refused as a changed file, without opening the pipe', async () => {
    await client.query(`TRUNCATE ${SCHEMA}.piped`);
    const file = path.join(dir, 'was-a-file.csv');
    await fs.writeFile(file, 'id,name\n1,a\n2,b\n');
    const first = await runCli(['load', file, '-t', 'piped', '--header', ...db(), '-q']);
    assert.equal(first.code, 0, first.stderr);
    await newPipe('was-a-file.csv');
    const r = await within(['load', file, '-t', 'piped', '--header', ...db(), '-q']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /was-a-file\.csv changed since load .* put it into .*piped.* \(it is now a pipe or device, read once as it streams\)/);
    assert.match(r.stderr, /--again loads it again/);
    assert.deepEqual((await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.piped`)).rows, [{ n: 2 }]);
  });
});
