import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parquetWriteBuffer } from 'hyparquet-writer';
import type pg from 'pg';
import { duckRun, sqlString } from '../helpers/duckdb-parquet.js';
import { closeTestSchema, copyFrom, digest, openTestSchema, runCli, tableRecords, testUrl } from '../helpers/test-db.js';

/*
 * `load --create` of a table pgsurge has no DDL for: the table made from what the file
 * declares (a Parquet schema), its column types read back from the catalog, its values
 * compared with the server's own COPY of the same rows; `pgsurge schema` prints the same
 * CREATE TABLE without a database; `--dry-run` gives a real load's accounting and leaves
 * the table and the ledger as they were.
 */

const SCHEMA = 'it_create_from_file';
let client: pg.Client;
let dir: string;

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-create-'));
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

const db = (): string[] => ['--db', testUrl(), '--schema', SCHEMA];

/** The oracle: the server's own COPY (CSV) of a file into `into` (a table, with a column list when it has one). */
async function serverCopy(into: string, file: string): Promise<void> {
  const data = await fs.readFile(file);
  await new Promise<void>((resolve, reject) => {
    const stream = client.query(copyFrom(`COPY ${into} FROM STDIN (FORMAT csv)`));
    stream.on('finish', resolve).on('error', reject);
    stream.end(data);
  });
}

/** The last line of `--json`'s output: the summary event. */
function summaryOf(stdout: string): { total: Accounting; rejectFiles?: { path: string; rows: number }[]; hints?: string[]; sniffed?: string[]; dryRun?: boolean } {
  const s = JSON.parse(stdout.trim().split('\n').at(-1)!) as { total: Accounting; rejectFiles?: { path: string; rows: number }[]; hints?: string[]; sniffed?: string[]; dryRun?: boolean };
  const { read, loaded, rejected, skipped } = s.total;
  return { ...s, total: { read, loaded, rejected, skipped } };
}

interface Accounting {
  read: number;
  loaded: number;
  rejected: number;
  skipped: number;
}

/** Each column's type as the catalog prints it, and whether it is NOT NULL, in order. */
async function columnTypes(table: string): Promise<[string, string, boolean][]> {
  const r = await client.query<{ name: string; type: string; notnull: boolean }>(
    `SELECT attname AS name, format_type(atttypid, atttypmod) AS type, attnotnull AS notnull FROM pg_attribute
      WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
    [`${SCHEMA}.${table}`],
  );
  return r.rows.map((c) => [c.name, c.type, c.notnull]);
}

/** Rows of `i` in 0..n, each column a DuckDB expression, and the PostgreSQL text COPY reads the same value from. */
const COLUMNS: readonly (readonly [name: string, duck: string, pgType: string, asText: string])[] = [
  ['i8', '(i % 100)::TINYINT', 'smallint', '(i % 100)::VARCHAR'],
  ['i16', '(i * 7)::SMALLINT', 'smallint', '(i * 7)::VARCHAR'],
  ['i32', '(i * 1000003)::INTEGER', 'integer', '(i * 1000003)::VARCHAR'],
  ['i64', '(i * 1000000000007)::BIGINT', 'bigint', '(i * 1000000000007)::VARCHAR'],
  ['u8', '(i % 250)::UTINYINT', 'smallint', '(i % 250)::VARCHAR'],
  ['u16', '(i * 30)::USMALLINT', 'integer', '(i * 30)::VARCHAR'],
  ['u32', '(i * 2000000)::UINTEGER', 'bigint', '(i * 2000000)::VARCHAR'],
  ['u64', '(18446744073709551615 - i)::UBIGINT', 'numeric(20,0)', '(18446744073709551615 - i)::UBIGINT::VARCHAR'],
  ['amount', '(i / 7)::DECIMAL(12,3)', 'numeric(12,3)', '(i / 7)::DECIMAL(12,3)::VARCHAR'],
  ['f', '(i / 3)::FLOAT', 'real', '(i / 3)::FLOAT::VARCHAR'],
  ['g', '(i / 3)::DOUBLE', 'double precision', '(i / 3)::DOUBLE::VARCHAR'],
  ['flag', 'i % 3 = 0', 'boolean', "CASE WHEN i % 3 = 0 THEN 't' ELSE 'f' END"],
  ['label', "'x' || i", 'text', "'x' || i"],
  ['id', "('00000000-0000-4000-8000-' || lpad(i::VARCHAR, 12, '0'))::UUID", 'uuid', "'00000000-0000-4000-8000-' || lpad(i::VARCHAR, 12, '0')"],
  ['day', "DATE '2020-01-01' + i::INTEGER", 'date', "(DATE '2020-01-01' + i::INTEGER)::VARCHAR"],
  ['at', "TIME '01:02:03' + to_seconds(i::BIGINT)", 'time without time zone', "(TIME '01:02:03' + to_seconds(i::BIGINT))::VARCHAR"],
  ['ts', "TIMESTAMP '2020-01-01 00:00:00' + to_seconds(i::BIGINT)", 'timestamp without time zone', "(TIMESTAMP '2020-01-01 00:00:00' + to_seconds(i::BIGINT))::VARCHAR"],
  ['tz', "TIMESTAMPTZ '2020-01-01 00:00:00+00' + to_seconds(i::BIGINT)", 'timestamp with time zone', "strftime(TIMESTAMP '2020-01-01 00:00:00' + to_seconds(i::BIGINT), '%Y-%m-%d %H:%M:%S') || '+00'"],
  ['doc', `('{"n":' || i || '}')::JSON`, 'jsonb', `'{"n":' || i || '}'`],
  ['raw', "('ab' || i)::BLOB", 'bytea', "'\\x' || hex(('ab' || i)::BLOB)"],
  ['ints', '[i, i + 1]::BIGINT[]', 'bigint[]', "'{' || i || ',' || (i + 1) || '}'"],
  ['obj', "{'k': i}", 'jsonb', `'{"k":' || i || '}'`],
  ['kv', "MAP {'a': i}", 'jsonb', `'{"a":' || i || '}'`],
  ['Select', "'reserved'", 'text', "'reserved'"],
  ['My Col', 'i', 'bigint', 'i::VARCHAR'],
];

describe('load --create from the file', () => {
  it('makes each column the type the Parquet type maps to, and the rows equal the server\'s own COPY of the same values', async () => {
    const file = path.join(dir, 'every_type.parquet');
    const csv = path.join(dir, 'every_type.csv');
    const rows = 'FROM range(2000) t(i)';
    await duckRun(`COPY (SELECT ${COLUMNS.map(([name, duck]) => `${duck} AS "${name}"`).join(', ')} ${rows}) TO ${sqlString(file)} (FORMAT parquet, ROW_GROUP_SIZE 500)`);
    await duckRun(`COPY (SELECT ${COLUMNS.map(([name, , , text]) => `${text} AS "${name}"`).join(', ')} ${rows}) TO ${sqlString(csv)} (FORMAT csv, HEADER false)`);

    const r = await runCli(['load', file, '--create', '--json', '-w', '2', ...db()]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(summaryOf(r.stdout).total, { read: 2000, loaded: 2000, rejected: 0, skipped: 0 });
    assert.deepEqual(
      await columnTypes('every_type'),
      COLUMNS.map(([name, , type]) => [name, type, false]),
    );

    // The oracle: the same values, written by DuckDB as PostgreSQL's text, loaded by the server's COPY into a table of the same definition.
    await client.query(`CREATE TABLE ${SCHEMA}.oracle (LIKE ${SCHEMA}.every_type)`);
    await serverCopy(`${SCHEMA}.oracle`, csv);
    const loaded = await tableRecords(client, `${SCHEMA}.every_type`);
    const oracle = await tableRecords(client, `${SCHEMA}.oracle`);
    assert.equal(loaded.length, 2000);
    assert.equal(digest(loaded), digest(oracle));
  });

  it('pgsurge schema of a file that is not there says so (exit 1), not an empty CREATE TABLE', async () => {
    const r = await runCli(['schema', path.join(dir, 'no-such.csv')]);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stderr, /cannot read .*no-such\.csv: no such file/);
    assert.equal(r.stdout, '');
  });

  it('makes a REQUIRED field NOT NULL, quotes only the names that need it, and pgsurge schema prints the CREATE TABLE it runs', async () => {
    const buf = parquetWriteBuffer({
      columnData: [
        { name: 'id', data: [1, 2, 3], type: 'INT32', nullable: false },
        { name: 'Note', data: ['a', null, 'c'], type: 'STRING' },
        { name: 'order', data: [1.5, 2.5, null], type: 'DOUBLE' },
      ],
    });
    const file = path.join(dir, 'required.parquet');
    await fs.writeFile(file, Buffer.from(buf));
    const shown = await runCli(['schema', file, '--schema', SCHEMA]);
    assert.equal(shown.code, 0, shown.stderr);
    const ddl = `CREATE TABLE ${SCHEMA}.required (\n  id      integer NOT NULL,\n  "Note"  text,\n  "order" double precision\n);`;
    assert.ok(shown.stdout.endsWith(`${ddl}\n`), shown.stdout);
    assert.match(shown.stdout, /^-- load with: pgsurge load \S+required\.parquet --create$/m);
    const json = JSON.parse((await runCli(['schema', file, '--json', '-t', 'req2'])).stdout) as { createTable: string; columns: unknown[]; table: string };
    assert.equal(json.table, 'req2');
    assert.equal(json.columns.length, 3);
    assert.match(json.createTable, /^CREATE TABLE req2 \(/);

    const r = await runCli(['load', file, '--create', '--json', ...db()]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await columnTypes('required'), [
      ['id', 'integer', true],
      ['Note', 'text', false],
      ['order', 'double precision', false],
    ]);
    assert.deepEqual(await tableRecords(client, `${SCHEMA}.required`), ['1|a|1.5', '2|\\N|2.5', '3|c|\\N']);
  });

  it('parts started at once (of an NDJSON file) create the table once', async () => {
    const file = path.join(dir, 'at_once.ndjson');
    await fs.writeFile(file, Array.from({ length: 3000 }, (_, i) => `${JSON.stringify({ n: i, v: `v${i}` })}\n`).join(''));
    const runs = await Promise.all([1, 2, 3].map((k) => runCli(['load', file, '--create', '--part', `${k}/3`, '--json', ...db()])));
    for (const r of runs) assert.equal(r.code, 0, r.stderr);
    const n = await client.query<{ n: number; d: number }>(`SELECT count(*)::int AS n, count(DISTINCT n)::int AS d FROM ${SCHEMA}.at_once`);
    assert.deepEqual(n.rows[0], { n: 3000, d: 3000 });
  });
});

describe('load --create from a text or JSON file: the sniffed dialect and types', () => {
  it('a semicolon CSV in Windows-1252 with CRLF, a header, NA for NULL, DD/MM/YYYY dates and quoted newlines', async () => {
    const lines = ['Kunde;Betrag;Datum;Notiz;Aktiv'];
    const want: string[] = [];
    for (let i = 1; i <= 400; i++) {
      const day = `${String((i % 28) + 1).padStart(2, '0')}`;
      const month = `${String((i % 12) + 1).padStart(2, '0')}`;
      const note = i % 10 === 0 ? 'NA' : i % 7 === 0 ? '"zwei\r\nZeilen; mit ""Semikolon"""' : `Köln ${i}`;
      lines.push(`${i};${i}.25;${day}/${month}/2021;${note};${i % 2 ? 'ja' : 'nein'}`);
      const noteText = i % 10 === 0 ? '\\N' : i % 7 === 0 ? 'zwei\\r\\nZeilen; mit "Semikolon"' : `Köln ${i}`;
      want.push(`${i}|${i}.25|2021-${month}-${day}|${noteText}|${i % 2 ? 'ja' : 'nein'}`);
    }
    const file = path.join(dir, 'kunden.csv');
    await fs.writeFile(file, Buffer.from(`${lines.join('\r\n')}\r\n`, 'latin1'));
    const r = await runCli(['load', file, '--create', '--json', '-w', '2', ...db()]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(summaryOf(r.stdout).sniffed?.[0] ?? '', /kunden\.csv: csv, read as --header --delimiter ';' --encoding WIN1252 --null NA \(DateStyle ISO, DMY\)/);
    assert.deepEqual(summaryOf(r.stdout).total, { read: 400, loaded: 400, rejected: 0, skipped: 0 });
    assert.deepEqual(await columnTypes('kunden'), [
      ['kunde', 'integer', false],
      ['betrag', 'numeric', false],
      ['datum', 'date', false],
      ['notiz', 'text', false],
      ['aktiv', 'text', false],
    ]);
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.kunden`)), digest(want));

    // Run again: the file is sniffed the same way, the table is there, and every chunk is in the ledger already.
    const again = await runCli(['load', file, '--create', '--json', '-w', '2', ...db()]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(summaryOf(again.stdout).total.loaded, 0);
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.kunden`)), digest(want));

    // pgsurge schema says the same, as the load flags and as JSON.
    const shown = JSON.parse((await runCli(['schema', file, '--json'])).stdout) as { createTable: string; loadFlags: string[]; datestyle?: string; dialect: { encoding: string; lineEnding: string } };
    assert.deepEqual(shown.loadFlags, ['--header', "--delimiter ';'", '--encoding WIN1252', '--null NA']);
    assert.equal(shown.datestyle, 'ISO, DMY');
    assert.deepEqual([shown.dialect.encoding, shown.dialect.lineEnding], ['WIN1252', 'CRLF']);
    assert.match(shown.createTable, /^CREATE TABLE kunden \(\n {2}kunde +integer,/);
  });

  it('NDJSON: nested objects jsonb, arrays of one type arrays, mixed jsonb, a key seen once, keys made identifiers', async () => {
    const objects = Array.from({ length: 300 }, (_, i) => ({
      id: i,
      'Full Name': `n${i}`,
      tags: ['a', `t${i}`],
      meta: { k: i },
      mixed: i % 2 ? [1, 'x'] : [2],
      when: `2024-03-${String((i % 28) + 1).padStart(2, '0')}`,
      ok: i % 3 === 0,
      ...(i === 250 ? { late: 'yes' } : {}),
    }));
    const file = path.join(dir, 'things.ndjson');
    await fs.writeFile(file, objects.map((o) => `${JSON.stringify(o)}\n`).join(''));
    const r = await runCli(['load', file, '--create', '--json', '-w', '2', ...db()]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await columnTypes('things'), [
      ['id', 'integer', false],
      ['full_name', 'text', false],
      ['tags', 'text[]', false],
      ['meta', 'jsonb', false],
      ['mixed', 'jsonb', false],
      ['when_', 'date', false],
      ['ok', 'boolean', false],
      ['late', 'text', false],
    ]);
    const want = objects.map((o) => [o.id, o['Full Name'], `{a,t${o.id}}`, `{"k": ${o.id}}`, o.id % 2 ? '[1, "x"]' : '[2]', o.when, o.ok ? 't' : 'f', 'late' in o ? o.late : '\\N'].join('|'));
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.things`)), digest(want));
  });

  it('a JSON array: integers, text with nulls, uuids', async () => {
    const objects = Array.from({ length: 120 }, (_, i) => ({ a: i * 1000, b: i % 5 === 0 ? null : `v${i}`, u: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}` }));
    const file = path.join(dir, 'arr.json');
    await fs.writeFile(file, JSON.stringify(objects));
    const r = await runCli(['load', file, '--create', '--json', ...db()]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await columnTypes('arr'), [
      ['a', 'integer', false],
      ['b', 'text', false],
      ['u', 'uuid', false],
    ]);
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.arr`)), digest(objects.map((o) => `${o.a}|${o.b ?? '\\N'}|${o.u}`)));
  });

  it('a file named as a DBT-3 table with other columns (a user\'s orders.csv) gets a table of its own columns; one with the table\'s columns (a header naming them, or as many without one) gets the built-in DDL', async () => {
    const rows = Array.from({ length: 200 }, (_, i) => `${i + 1},cust ${i % 7},${i % 40},${(i * 1.25).toFixed(2)},2024-01-${String((i % 28) + 1).padStart(2, '0')}`);
    const own = path.join(dir, 'orders.csv');
    await fs.writeFile(own, `order_id,customer,qty,amount,placed\n${rows.join('\n')}\n`);
    const shown = JSON.parse((await runCli(['schema', own, '--json'])).stdout) as { builtIn: boolean; createTable: string };
    assert.equal(shown.builtIn, false);
    assert.match(shown.createTable, /^CREATE TABLE orders \(\n {2}order_id +integer,/);
    const r = await runCli(['load', own, '--create', '--json', ...db()]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(summaryOf(r.stdout).total, { read: 200, loaded: 200, rejected: 0, skipped: 0 });
    assert.deepEqual(await columnTypes('orders'), [
      ['order_id', 'integer', false],
      ['customer', 'text', false],
      ['qty', 'integer', false],
      ['amount', 'numeric', false],
      ['placed', 'date', false],
    ]);
    const named = path.join(dir, 'region.csv');
    await fs.writeFile(named, 'R_REGIONKEY,r_name,r_comment\n0,AFRICA,lar deposits\n1,AMERICA,hs use ironic\n');
    const headless = path.join(dir, 'nation.txt');
    await fs.writeFile(headless, '0\tALGERIA\t0\thaggle\n1\tARGENTINA\t1\tal foxes\n');
    // pgsurge schema --json: the columns the CREATE TABLE makes, not the types sniffed from the file.
    const shownRegion = JSON.parse((await runCli(['schema', named, '--json'])).stdout) as { builtIn: boolean; createTable: string; columns: { name: string; type: string }[] };
    assert.equal(shownRegion.builtIn, true);
    assert.deepEqual(shownRegion.columns, [
      { name: 'r_regionkey', type: 'integer' },
      { name: 'r_name', type: 'char(25)' },
      { name: 'r_comment', type: 'varchar(152)' },
    ]);
    assert.match(shownRegion.createTable, /"r_name" char\(25\)/);
    for (const [file, table, first] of [[named, 'region', ['r_regionkey', 'integer', false]], [headless, 'nation', ['n_nationkey', 'integer', false]]] as const) {
      const loaded = await runCli(['load', file, '--create', '--json', ...db()]);
      assert.equal(loaded.code, 0, loaded.stderr);
      assert.equal(summaryOf(loaded.stdout).total.loaded, 2);
      const types = await columnTypes(table);
      assert.deepEqual(types[0], first);
      assert.deepEqual(types[1], [`${table[0]}_name`, 'character(25)', false], `${table}: the built-in DDL`);
    }
  });

  it('--columns naming some columns of a DBT-3 table: the built-in table, those columns filled from the file', async () => {
    const rows = Array.from({ length: 300 }, (_, i) => `${i + 1},Supplier#${String(i + 1).padStart(9, '0')},${i % 3 === 0 ? `"quiet, even ${i}"` : `slyly ${i}`}`);
    const file = path.join(dir, 'supplier.csv');
    await fs.writeFile(file, `${rows.join('\n')}\n`);
    const r = await runCli(['load', file, '--create', '--columns', 's_suppkey,s_name,s_comment', '--json', ...db()]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(summaryOf(r.stdout).total, { read: 300, loaded: 300, rejected: 0, skipped: 0 });
    assert.deepEqual((await columnTypes('supplier')).map(([name]) => name), ['s_suppkey', 's_name', 's_address', 's_nationkey', 's_phone', 's_acctbal', 's_comment']);
    await client.query(`CREATE TABLE ${SCHEMA}.supplier_oracle (LIKE ${SCHEMA}.supplier)`);
    await serverCopy(`${SCHEMA}.supplier_oracle (s_suppkey, s_name, s_comment)`, file);
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.supplier`)), digest(await tableRecords(client, `${SCHEMA}.supplier_oracle`)));
  });

  it('--columns naming as many columns as a headerless file has fields names the table --create makes (else c1…cN, and the load refused)', async () => {
    const file = path.join(dir, 'scores.csv');
    await fs.writeFile(file, '1,ann,10\n2,bob,20\n3,"cy, jr",30\n');
    const r = await runCli(['load', file, '--create', '--columns', 'id,name,score', '--json', ...db()]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await columnTypes('scores'), [
      ['id', 'integer', false],
      ['name', 'text', false],
      ['score', 'integer', false],
    ]);
    await client.query(`CREATE TABLE ${SCHEMA}.scores_oracle (id int, name text, score int)`);
    await serverCopy(`${SCHEMA}.scores_oracle`, file);
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.scores`)), digest(await tableRecords(client, `${SCHEMA}.scores_oracle`)));
  });

  it('a value past the sample that does not fit the sniffed type is a reject with its row and a hint, in a dry run as in the load; --sample all types the column to hold it', async () => {
    const n = 60_000;
    const bad = Math.floor(n * 0.75);
    const rows = Array.from({ length: n }, (_, i) => (i === bad ? `${i},about 3` : `${i},${i}.5`));
    const file = path.join(dir, 'prices.csv');
    await fs.writeFile(file, `id,price\n${rows.join('\n')}\n`);
    const dry = await runCli(['load', file, '--create', '--sample', '300', '--dry-run', '--json', '-w', '2', ...db()]);
    assert.equal((await client.query(`SELECT to_regclass('${SCHEMA}.prices') AS t`)).rows[0].t, null);
    const r = await runCli(['load', file, '--create', '--sample', '300', '--json', '-w', '2', ...db()]);
    for (const run of [dry, r]) {
      assert.equal(run.code, 3, run.stderr);
      assert.deepEqual(summaryOf(run.stdout).total, { read: n, loaded: n - 1, rejected: 1, skipped: 0 });
      assert.match(run.stderr, /hint: the types of (it_create_from_file\.)?prices were sniffed from a sample .* --sample all .*ALTER TABLE (it_create_from_file\.)?prices ALTER COLUMN <column> TYPE text/);
      assert.match(summaryOf(run.stdout).hints?.[0] ?? '', /--sample all/);
      assert.equal(await fs.readFile(summaryOf(run.stdout).rejectFiles![0]!.path, 'utf8'), `${bad},about 3\n`);
    }
    assert.deepEqual(await columnTypes('prices'), [
      ['id', 'integer', false],
      ['price', 'numeric', false],
    ]);
    const all = await runCli(['load', file, '-t', 'prices_all', '--create', '--sample', 'all', '--json', ...db()]);
    assert.equal(all.code, 0, all.stderr);
    assert.deepEqual(await columnTypes('prices_all'), [
      ['id', 'integer', false],
      ['price', 'text', false],
    ]);
    assert.deepEqual(summaryOf(all.stdout).total, { read: n, loaded: n, rejected: 0, skipped: 0 });
  });
});

describe('load --dry-run', () => {
  /** A CSV of `rows` rows, one of which (line `bad`) holds a value its integer column cannot take. */
  async function csvWithBadRow(name: string, rows: number, bad: number): Promise<string> {
    const lines = Array.from({ length: rows }, (_, i) => (i + 1 === bad ? `oops,row ${i}` : `${i},row ${i}`));
    const file = path.join(dir, name);
    await fs.writeFile(file, `${lines.join('\n')}\n`);
    return file;
  }

  it('into an existing table: the accounting and the reject file of a real load, and the table and the ledger unchanged', async () => {
    await client.query(`CREATE TABLE ${SCHEMA}.dry (n integer, note text)`);
    await client.query(`INSERT INTO ${SCHEMA}.dry VALUES (-1, 'there before')`);
    const file = await csvWithBadRow('dry.csv', 5000, 4321);
    const before = digest(await tableRecords(client, `${SCHEMA}.dry`));
    const ledgerRows = async (): Promise<number> => {
      const have = (await client.query<{ ok: boolean }>("SELECT to_regclass('pgsurge.load_files') IS NOT NULL AS ok")).rows[0]!.ok;
      if (!have) return 0;
      return (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM pgsurge.load_files WHERE file = $1', [path.resolve(file)])).rows[0]!.n;
    };
    const dry = await runCli(['load', file, '-t', 'dry', '--dry-run', '--json', '-w', '2', '--chunk-size', '16KB', ...db()]);
    assert.equal(dry.code, 3, dry.stderr);
    const drySummary = summaryOf(dry.stdout);
    assert.equal(drySummary.dryRun, true);
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.dry`)), before);
    assert.equal(await ledgerRows(), 0);
    const dryRejects = await fs.readFile(drySummary.rejectFiles![0]!.path, 'utf8');

    const real = await runCli(['load', file, '-t', 'dry', '--json', '-w', '2', '--chunk-size', '16KB', ...db()]);
    assert.equal(real.code, 3, real.stderr);
    const realSummary = summaryOf(real.stdout);
    assert.deepEqual(drySummary.total, realSummary.total);
    assert.deepEqual(drySummary.total, { read: 5000, loaded: 4999, rejected: 1, skipped: 0 });
    assert.equal(dryRejects, 'oops,row 4320\n');
    assert.equal(await fs.readFile(realSummary.rejectFiles![0]!.path, 'utf8'), dryRejects);
    // The dry run did not count as an earlier run of the load: the real one loaded every row.
    const n = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${SCHEMA}.dry`);
    assert.equal(n.rows[0]!.n, 1 + 4999);
  });

  it('into a missing table with --create: checked against the table --create would make, which is not created', async () => {
    const file = path.join(dir, 'dry_new.parquet');
    await duckRun(`COPY (SELECT i::INTEGER AS n, CASE WHEN i = 777 THEN NULL ELSE 'v' || i END AS v FROM range(2500) t(i)) TO ${sqlString(file)} (FORMAT parquet, ROW_GROUP_SIZE 1000)`);
    const dry = await runCli(['load', file, '--create', '--dry-run', '--json', '-w', '2', ...db()]);
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal((await client.query(`SELECT to_regclass('${SCHEMA}.dry_new') AS t`)).rows[0].t, null);
    const told = await runCli(['load', file, '--create', '--dry-run', ...db()]);
    assert.equal(told.code, 0, told.stderr);
    assert.match(told.stdout, /^dry run: every chunk below was sent and rolled back; nothing was written to the table or the ledger$/m);
    assert.match(told.stderr, /^pgsurge: dry run: 2,500 rows would load and 0 would be rejected; nothing was written to the table or the ledger$/m);
    assert.equal((await client.query(`SELECT to_regclass('${SCHEMA}.dry_new') AS t`)).rows[0].t, null);
    const real = await runCli(['load', file, '--create', '--json', '-w', '2', ...db()]);
    assert.equal(real.code, 0, real.stderr);
    assert.deepEqual(summaryOf(dry.stdout).total, summaryOf(real.stdout).total);
    assert.equal(summaryOf(real.stdout).total.loaded, 2500);
  });

  it('refuses what it cannot do without writing: --truncate, --resume', async () => {
    const file = await csvWithBadRow('dry_refused.csv', 10, 0);
    for (const flag of ['--truncate', '--resume']) {
      const r = await runCli(['load', file, '-t', 'dry', '--dry-run', flag, ...db()]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`--dry-run .* cannot take ${flag}`));
    }
  });
});
