import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { FIRST_SERVER, firstServerOnly } from '../helpers/temp-cluster.js';
import { closeTestSchema, digest, freshSchema, openTestSchema, rejectFileOf, runCli, tableRecords, testClient, testUrl } from '../helpers/test-db.js';

/**
 * The same file loaded by COPY and by every INSERT style must leave the same table:
 * NULLs, empty strings, escapes, quotes, non-ASCII, numeric extremes and special values.
 */
const SCHEMA = 'it_insert_eq';
let client: pg.Client;
let dir: string;

const COLUMNS = `
  id int, s smallint, i int, b bigint, n numeric, r real, d double precision, dt date, ok boolean,
  t text, vc varchar(40), ch char(5), arr int[], bt bit(3)`;

/** Values per column, cycled; null is SQL NULL. Every one must survive each format and mode. */
const VALUES: Record<string, (string | null)[]> = {
  s: ['-32768', '32767', '0', null],
  i: ['-2147483648', '2147483647', '42'],
  b: ['-9223372036854775808', '9223372036854775807', '0', null],
  n: ['123456789012345678901234567890.123456789012345678901234567890', '-0.000000000000000000001', 'NaN', '0', null],
  r: ['NaN', 'Infinity', '-Infinity', '3.4028235e+38', '1.4e-45', '-0'],
  d: ['NaN', 'Infinity', '-Infinity', '1.7976931348623157e+308', '5e-324', '-0', '0.1'],
  dt: ['4713-11-24 BC', '5874897-12-31', 'infinity', '-infinity', '2000-02-29'],
  ok: ['t', 'f', 'true', 'false', 'yes', '0', null],
  t: ['', null, 'back\\slash', 'tab\there', 'new\nline', 'cr\rhere', 'say "hi"', "it's", 'héllo wörld 日本 🎉', 'a,b', 'a|b', '\\N', 'NULL', ' padded ', '{x}'],
  vc: ['', 'x'.repeat(40), 'ünïcødé', null, '"', '\\'],
  ch: ['ab', '', 'abcde', null, 'é'],
  arr: ['{1,2,NULL}', '{}', null, '{-2147483648}'],
  bt: ['101', '000', null],
};
const NAMES = ['id', ...Object.keys(VALUES)];
const ROWS = 240;
const T = NAMES.indexOf('t');

function rows(): (string | null)[][] {
  return Array.from({ length: ROWS }, (_, k) => [String(k + 1), ...Object.values(VALUES).map((vals, c) => vals[(k + c) % vals.length]!)]);
}

/** COPY text escaping (tab or `|` delimiter): backslash, the delimiter, newline, CR and tab. */
function textField(v: string | null, delimiter: string): string {
  if (v === null) return '\\N';
  let out = v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t');
  if (delimiter === '|') out = out.replace(/\|/g, '\\|');
  return out;
}

function csvField(v: string | null): string {
  if (v === null) return '';
  return v === '' || /[",\n\r]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

function render(format: 'tbl' | 'text' | 'csv'): string {
  const lines = rows().map((r, k) => {
    if (format === 'csv') return r.map(csvField).join(',');
    const delimiter = format === 'tbl' ? '|' : '\t';
    const fields = r.map((v) => textField(v, delimiter));
    // Escapes a writer of COPY text may use for the same bytes: octal, hex, \b-style.
    if (k % 5 === 0 && r[T] === 'héllo wörld 日本 🎉') fields[T] = 'h\\303\\251llo w\\xc3\\xb6rld \\346\\227\\245\\346\\234\\254 🎉';
    if (k % 7 === 0 && r[T] === 'say "hi"') fields[T] = '\\s\\a\\y\\ "hi\\"';
    return format === 'tbl' ? `${fields.join('|')}|` : fields.join('\t');
  });
  return lines.join('\n') + '\n';
}

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-insert-eq-'));
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

const MODES: { name: string; args: string[] }[] = [
  { name: 'copy', args: ['--mode', 'copy'] },
  { name: 'insert:unnest', args: ['--mode', 'insert', '--batch-rows', '7'] },
  { name: 'insert:values', args: ['--mode', 'insert', '--insert-style', 'values', '--batch-rows', '7'] },
  { name: 'insert:row', args: ['--mode', 'insert', '--insert-style', 'row', '--batch-rows', '7'] },
];

async function loadInto(table: string, file: string, args: string[]): Promise<string> {
  await client.query(`DROP TABLE IF EXISTS ${SCHEMA}.${table}`);
  await client.query(`CREATE TABLE ${SCHEMA}.${table} (${COLUMNS})`);
  const r = await runCli(['load', file, '-t', table, '--schema', SCHEMA, '--db', testUrl(), '--chunk-size', '2KB', ...args]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`loaded ${ROWS} of ${ROWS} rows read`));
  const count = await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.${table}`);
  assert.equal(count.rows[0].n, ROWS);
  return digest(await tableRecords(client, `${SCHEMA}.${table}`, '(FORMAT text)'));
}

/**
 * Worker counts each mode runs with: both in the runner's first phase; on the other PostgreSQL
 * versions two only (the server sees the same statements either way; the types' input
 * functions, which the version could change, are what those phases check).
 */
const WORKER_COUNTS = FIRST_SERVER ? ['1', '2'] : ['2'];

describe('COPY and INSERT load the same table from the same file', () => {
  for (const format of ['tbl', 'text', 'csv'] as const) {
    describe(format, () => {
      let file: string;
      let reference: string;
      before(async () => {
        file = path.join(dir, `eq.${format === 'text' ? 'txt' : format}`);
        await fs.writeFile(file, render(format));
        reference = await loadInto(`ref_${format}`, file, ['--mode', 'copy', '-w', '1']);
      });

      it('COPY stored the values themselves (NULLs, empty strings, escapes, extremes)', async () => {
        const q = await client.query(
          `SELECT count(*) FILTER (WHERE t IS NULL)::int AS t_null, count(*) FILTER (WHERE t = '')::int AS t_empty,
                  count(*) FILTER (WHERE t = 'back\\slash')::int AS backslash, count(*) FILTER (WHERE t = E'tab\\there')::int AS tab,
                  count(*) FILTER (WHERE t = E'new\\nline')::int AS newline, count(*) FILTER (WHERE t = 'héllo wörld 日本 🎉')::int AS utf8,
                  count(*) FILTER (WHERE t = 'say "hi"')::int AS quotes, count(*) FILTER (WHERE t = '\\N')::int AS backslash_n,
                  count(*) FILTER (WHERE b = -9223372036854775808)::int AS bigmin, count(*) FILTER (WHERE d = 'NaN')::int AS nan,
                  count(*) FILTER (WHERE dt = '4713-11-24 BC')::int AS datemin, count(*) FILTER (WHERE ch = 'abcde')::int AS ch,
                  count(*) FILTER (WHERE arr = '{1,2,NULL}')::int AS arr, count(*) FILTER (WHERE vc = '\\')::int AS vc_backslash, count(*) FILTER (WHERE bt = B'101')::int AS bits
             FROM ${SCHEMA}.ref_${format}`,
        );
        const expect = (col: string, value: string | null): number => rows().filter((r) => r[NAMES.indexOf(col)] === value).length;
        assert.deepEqual(q.rows[0], {
          t_null: expect('t', null),
          t_empty: expect('t', ''),
          backslash: expect('t', 'back\\slash'),
          tab: expect('t', 'tab\there'),
          newline: expect('t', 'new\nline'),
          utf8: expect('t', 'héllo wörld 日本 🎉'),
          quotes: expect('t', 'say "hi"'),
          backslash_n: expect('t', '\\N'),
          bigmin: expect('b', '-9223372036854775808'),
          nan: expect('d', 'NaN'),
          datemin: expect('dt', '4713-11-24 BC'),
          ch: expect('ch', 'abcde'),
          arr: expect('arr', '{1,2,NULL}'),
          vc_backslash: expect('vc', '\\'),
          bits: expect('bt', '101'),
        });
        assert.ok(expect('t', null) > 0 && expect('t', '') > 0);
      });

      for (const mode of MODES) {
        for (const workers of WORKER_COUNTS) {
          it(`${mode.name} with ${workers} worker(s): same digest as COPY`, async () => {
            const got = await loadInto(`${format}_${mode.name.replace(':', '_')}_w${workers}`, file, [...mode.args, '-w', workers]);
            assert.equal(got, reference);
          });
        }
      }
    });
  }

  it('input without a backslash (the unnest and values fast paths: parameters built from the bytes) gives the same table as COPY', async () => {
    // Every value that needs no escape: quotes, braces, commas, spaces, NULL as a word, non-ASCII, empty strings.
    const plain = rows()
      .map((r) => r.map((v, c) => (v !== null && !/[\\\n\r\t|]/.test(v) ? v : ['t', 'vc'].includes(NAMES[c]!) ? 'x"{,} NULL' : VALUES[NAMES[c]!]![0]!)))
      .map((r) => `${r.join('|')}|`)
      .join('\n') + '\n';
    assert.doesNotMatch(plain, /\\/);
    const file = path.join(dir, 'plain.tbl');
    await fs.writeFile(file, plain);
    const reference = await loadInto('plain_ref', file, ['--mode', 'copy']);
    for (const workers of WORKER_COUNTS) {
      for (const style of ['unnest', 'values']) {
        assert.equal(await loadInto(`plain_${style}_w${workers}`, file, ['--mode', 'insert', '--insert-style', style, '--batch-rows', '9', '-w', workers]), reference, `${style} -w ${workers}`);
      }
    }
    const quoted = await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.plain_values_w2 WHERE t = 'x"{,} NULL'`);
    assert.ok(quoted.rows[0].n > 0);
  });

  it('--commit-every 0 (autocommit) and 2 leave the same table as one transaction per chunk', { skip: firstServerOnly('where the commits fall is pgsurge\'s; the same INSERTs run on every version above') }, async () => {
    const file = path.join(dir, 'eq-commit.tbl');
    await fs.writeFile(file, render('tbl'));
    const reference = await loadInto('commit_ref', file, ['--mode', 'copy']);
    for (const style of ['row', 'unnest']) {
      for (const every of ['0', '2']) {
        // --commit-every commits inside a chunk, which the ledger cannot account for: it goes with --no-ledger (refused otherwise).
        const got = await loadInto(`commit_${style}_${every}`, file, ['--mode', 'insert', '--insert-style', style, '--batch-rows', '5', '--commit-every', every, '--no-ledger', '-w', '2']);
        assert.equal(got, reference, `${style} --commit-every ${every}`);
      }
    }
  });
});

describe('INSERT mode refuses what COPY refuses', () => {
  it('a record with a missing field is rejected with its line, as COPY rejects it; the others load', async () => {
    await client.query(`CREATE TABLE ${SCHEMA}.short (a int, b text)`);
    const file = path.join(dir, 'short.txt');
    await fs.writeFile(file, '1\tx\n2\n3\tz\n4\tw\n');
    for (const style of ['unnest', 'values', 'row']) {
      await client.query(`TRUNCATE ${SCHEMA}.short`);
      const rejectDir = path.join(dir, `short-${style}`);
      const r = await runCli(['load', file, '-t', 'short', '--schema', SCHEMA, '--db', testUrl(), '-q', '--mode', 'insert', '--insert-style', style, '--no-ledger', '--reject-dir', rejectDir]);
      assert.equal(r.code, 3, r.stderr);
      assert.match(r.stdout, /read 4 = loaded 3 \+ rejected 1 \+ skipped 0/);
      assert.equal(await fs.readFile(rejectFileOf(r), 'utf8'), '2\n');
      assert.match(await fs.readFile(`${rejectFileOf(r)}.log`, 'utf8'), /short\.txt\t2\t\d+\t22P04\t\t.*missing data for column \(1 fields, the table has 2 columns\)/);
      const n = await client.query(`SELECT array_agg(a ORDER BY a) AS a FROM ${SCHEMA}.short`);
      assert.deepEqual(n.rows[0].a, [1, 3, 4]);
    }
  });

  it('a too-long value for varchar(n) or char(n) is an error, as in COPY, not cut short', async () => {
    await client.query(`CREATE TABLE ${SCHEMA}.narrow (c char(3), v varchar(3))`);
    for (const [content, type] of [['abcd|x|\n', 'character\\(3\\)'], ['ab|wxyz|\n', 'character varying\\(3\\)']] as const) {
      const file = path.join(dir, 'narrow.tbl');
      await fs.writeFile(file, content);
      for (const mode of [['--mode', 'copy'], ['--mode', 'insert'], ['--mode', 'insert', '--insert-style', 'values']]) {
        const rejectDir = path.join(dir, `too-long-${mode.join('')}-${type.length}`);
        const r = await runCli(['load', file, '--schema', SCHEMA, '--db', testUrl(), '-q', '--no-ledger', '--reject-dir', rejectDir, ...mode]);
        assert.equal(r.code, 3, mode.join(' '));
        assert.match(await fs.readFile(`${rejectFileOf(r)}.log`, 'utf8'), new RegExp(`\\t22001\\t.*value too long for type ${type}`), mode.join(' '));
        assert.equal(await fs.readFile(rejectFileOf(r), 'utf8'), content, mode.join(' '));
      }
    }
    const n = await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.narrow`);
    assert.equal(n.rows[0].n, 0);
  });

  it('INSERT-only flags with --mode copy exit 2 and name the flag', async () => {
    const r = await runCli(['load', 'x.tbl', '--batch-rows', '10', '--db', testUrl()]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /`--batch-rows` applies only to --mode insert/);
    const bad = await runCli(['load', 'x.tbl', '--mode', 'insret']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /Expected `--mode` to be one of copy, insert, delete, got `insret`/);
  });
});
