/**
 * The sniffer against the server. What the sniffer says a value fits, the server's input
 * function must accept (seeded generated values of every kind, each cast by the server to
 * every type the sniffer says it fits, under the DateStyle its dates need); integer ranges
 * are the server's exactly. Then files with tricky dialects: sniffed, loaded by the
 * server's COPY with the sniffed options into a table of the sniffed types, every row
 * loads, and the table equals the file loaded as text and cast by the server.
 */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import type { LoadTarget } from '../../src/core/chunk.js';
import { describeInput } from '../../src/input/format-registry.js';
import type { Format } from '../../src/input/formats.js';
import type { DescribeOptions, FileDescription } from '../../src/input/input-format.js';
import { ColumnTypes } from '../../src/input/value-types.js';
import { prng } from '../helpers/lineitem-data.js';
import { loadSniffed } from '../helpers/sniffed-load.js';
import { closeTestSchema, openTestSchema } from '../helpers/test-db.js';

const SCHEMA = 'it_sniff';
let client: pg.Client;
let dir: string;

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-sniff-'));
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

/** Values of every kind the sniffer tells apart, at and past each type's edges, and near misses. */
function generatedValues(seed: number): string[] {
  const rand = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
  const fixed = [
    '0', '-0', '+7', ' 12 ', '\t5', '007', '1_000', '0x1F', '32767', '32768', '-32768', '-32769', '2147483647', '2147483648', '-2147483648', '-2147483649',
    '9223372036854775807', '9223372036854775808', '-9223372036854775808', '-9223372036854775809', '1.', '.5', '-.5e3', '1e308', '1e309', '1e-320', '1e-400',
    '1e999', '1E+5', 'NaN', 'nan', 'Infinity', '-Infinity', '+infinity', 'inf', '1.5e', '--1', '1,5',
    'true', 'TRUE', ' t ', 'yes', 'Y', 'off', 'of', 'tr', 'on', '2',
    '2024-02-29', '2023-02-29', '0001-01-01', '9999-12-31', '2024-1-2', '31/12/2024', '12/31/2024', '01/02/2024', '31.12.2024', '31-12-2024', '13/13/2024', '29/02/2023',
    '00:00', '23:59:59', '24:00:00', '23:59:60', '12:00:00.123456', '12:00:00.1234567', '12:00:00.123456789', '1:00', '12:12:00 AM', '02:15 pm', '13:00 PM', '00:30AM',
    '2024-01-02 03:04:05', '2024-01-02T03:04', '2024-01-02 03:04:05Z', '2024-01-02 03:04:05+05:30', '2024-01-02 03:04:05+0530', '2024-01-02 03:04:05-14',
    '2024-01-02 03:04:05+15', '31/12/2024 23:59', '2024-01-02  03:04', '01-01-2000 12:12:00 AM', '2005-10-3', '2023-12-29 16:00:00.0000000',
    '4b2a4e4e-1111-4a4a-8b8b-0123456789ab', '4B2A4E4E-1111-4A4A-8B8B-0123456789AB', '4b2a4e4e11114a4a8b8b0123456789ab', '{4b2a4e4e-1111-4a4a-8b8b-0123456789ab}',
    '{}', '[]', '{"a": [1, {"b": null}]}', '[1, 2', '{"a": "\\u0000"}', '{"a": "\\ud800"}', '{"a": "\\ud83d\\ude00"}', '[1e400]', '{"a":1}x',
  ];
  const generated: string[] = [];
  for (let i = 0; i < 300; i++) {
    const y = 1 + Math.floor(rand() * 9999);
    const m = 1 + Math.floor(rand() * 13);
    const d = 1 + Math.floor(rand() * 31);
    const t = `${pad(Math.floor(rand() * 25))}:${pad(Math.floor(rand() * 61))}:${pad(Math.floor(rand() * 61))}`;
    generated.push(
      pick([
        String(Math.floor((rand() - 0.5) * 2 ** (1 + Math.floor(rand() * 70)))),
        `${Math.floor(rand() * 1e6)}.${Math.floor(rand() * 1e4)}`,
        `${(rand() - 0.5) * 10 ** Math.floor(rand() * 40 - 20)}`,
        `${pad(y, 4)}-${pad(m)}-${pad(d)}`,
        `${pad(d)}/${pad(m)}/${pad(y, 4)}`,
        `${pad(m)}/${pad(d)}/${pad(y, 4)}`,
        t,
        `${pad(y, 4)}-${pad(m)}-${pad(d)} ${t}${pick(['', 'Z', '+02', '-03:30'])}`,
      ]),
    );
  }
  return [...fixed, ...generated];
}

const DATE_TYPES = new Set(['date', 'timestamp', 'timestamptz']);

async function serverAccepts(value: string, type: string, datestyle: string): Promise<string | undefined> {
  try {
    await client.query(`SET datestyle = '${datestyle}'`);
    await client.query(`SELECT $1::${type}`, [value]);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  } finally {
    await client.query('RESET datestyle');
  }
}

describe('what the sniffer says a value fits, the server reads', () => {
  it('every generated value, cast by the server to every type the sniffer says it fits', async () => {
    const wrong: string[] = [];
    let casts = 0;
    for (const v of generatedValues(20261206)) {
      const col = new ColumnTypes();
      col.add(v);
      const { dateOrder } = col.result();
      // A day-first or month-first date fits under the order it reads in (both when it reads in either).
      const slash = /^[0-9]{1,2}[/.-]/.test(v);
      for (const type of col.candidates().filter((t) => t !== 'text')) {
        const styles = DATE_TYPES.has(type) && slash ? (dateOrder !== undefined ? [`ISO, ${dateOrder}`] : ['ISO, DMY', 'ISO, MDY']) : ['ISO, MDY'];
        for (const style of styles) {
          casts++;
          const error = await serverAccepts(v, type, style);
          if (error !== undefined) wrong.push(`${JSON.stringify(v)} as ${type} (${style}): ${error}`);
        }
      }
    }
    assert.deepEqual(wrong, []);
    assert.ok(casts > 300, `only ${casts} casts`);
  });

  it('integer ranges are the server’s: the next wider integer type is chosen exactly where the narrower one refuses (integer the narrowest)', async () => {
    for (const v of ['0', '32767', '32768', '-32768', '-32769', '2147483647', '2147483648', '-2147483648', '-2147483649', '9223372036854775807', '9223372036854775808']) {
      const col = new ColumnTypes();
      col.add(v);
      const chosen = col.result().type;
      assert.notEqual(chosen, 'smallint');
      const narrower = ['integer', 'bigint'].slice(0, Math.max(0, ['integer', 'bigint', 'numeric'].indexOf(chosen)));
      for (const type of narrower) assert.notEqual(await serverAccepts(v, type, 'ISO'), undefined, `${v} fits ${type}, but the sniffer chose ${chosen}`);
    }
  });
});

async function sniffFile(name: string, content: string | Buffer, format: Format = 'csv', options: DescribeOptions = {}): Promise<{ file: string; d: FileDescription }> {
  const file = path.join(dir, name);
  await fs.writeFile(file, content);
  const target: LoadTarget = { table: 't', schema: undefined, format, file, input: {} };
  return { file, d: await describeInput(target, options) };
}

async function loadsWhole(name: string, content: string | Buffer, expectedTypes: string[], rows: number, format: Format = 'csv'): Promise<FileDescription> {
  const { file, d } = await sniffFile(name, content, format);
  assert.deepEqual(
    d.columns.map((c) => c.type),
    expectedTypes,
  );
  const table = name.replace(/\W/g, '_');
  const load = await loadSniffed(client, SCHEMA, table, file, d);
  assert.equal(load.typed.error, undefined);
  assert.equal(load.typed.rows, rows);
  assert.equal(load.same, true);
  return d;
}

describe('files with tricky dialects load whole into the sniffed table', () => {
  it('semicolons, decimal points, DD/MM/YYYY dates read with the DateStyle the description names', async () => {
    const iso = ['1990-12-31', '1985-02-01', '2001-06-15', '2024-02-29'];
    const dmy = iso.map((s) => s.split('-').reverse().join('/'));
    const d = await loadsWhole('semi.csv', `Id;Name;Born;Score\n${dmy.map((b, i) => `${i};"N; ${i}";${b};${i}.5`).join('\n')}\n`, ['integer', 'text', 'date', 'numeric'], 4);
    assert.equal(d.dialect?.datestyle, 'ISO, DMY');
    const born = await client.query<{ born: string }>(`SELECT born::text FROM ${SCHEMA}.semi_csv ORDER BY id`);
    assert.deepEqual(
      born.rows.map((r) => r.born),
      iso,
    );
  });

  it('tabs, quoted newlines, no header, a byte-order mark, CRLF', async () => {
    await loadsWhole('tab.csv', 'a\tb\tc\n1\t2024-01-02 03:04:05+02\t{"k": 1}\n2\t2024-01-03 00:00:00Z\t[]\n', ['integer', 'timestamptz', 'jsonb'], 2);
    const quoted = Array.from({ length: 50 }, (_, i) => `${i},"one, ""two""\nthree",${i % 2 === 0 ? 'true' : 'false'}`).join('\r\n');
    await loadsWhole('quoted.csv', `\uFEFFid,Note Text,ok\r\n${quoted}\r\n`, ['integer', 'text', 'boolean'], 50);
    await loadsWhole('nohead.csv', '1,4b2a4e4e-1111-4a4a-8b8b-0123456789ab,12:00\n2,4b2a4e4e-1111-4a4a-8b8b-0123456789ac,13:30:15\n', ['integer', 'uuid', 'time'], 2);
  });

  it('Windows-1252 and NULL markers (NA, empty), text and .tbl', async () => {
    await loadsWhole('win.csv', Buffer.from('nom;prix;quand\nJosé;5,50 \x80;NA\nRené;NA;2024-01-01\n', 'latin1'), ['text', 'text', 'date'], 2);
    await loadsWhole('empty.csv', 'id,score,note\n1,,x\n2,3.5,\n,4,""\n', ['integer', 'numeric', 'text'], 3);
    await loadsWhole('t.txt', 'id\twhen\tnote\n1\t2024-01-02 10:00:00\ta\\tb\n2\t\\N\tc\\\\d\n', ['integer', 'timestamp', 'text'], 2, 'text');
    await loadsWhole('t.tbl', '1|abc|2.50|2024-01-01|\n2|de|-3.00|2024-01-02|\n', ['integer', 'text', 'numeric', 'date'], 2, 'tbl');
  });

  it('a value past 90% of the file: the end block sees it; between the blocks the COPY refuses its row; sample all makes the column text', async () => {
    const content = (bad: number): string => ['n,label', ...Array.from({ length: 5000 }, (_, i) => `${i === bad ? 'n/a!' : i * 10},r${i} ${'x'.repeat(60)}`)].join('\n') + '\n';
    const inEnd = await sniffFile('end.csv', content(4980), 'csv', { sample: 300 });
    assert.equal(inEnd.d.columns[0]?.type, 'text');
    assert.equal((await loadSniffed(client, SCHEMA, 'late_end', inEnd.file, inEnd.d)).typed.rows, 5000);
    const between = await sniffFile('between.csv', content(4700), 'csv', { sample: 300 });
    assert.equal(between.d.columns[0]?.type, 'integer');
    const refused = await loadSniffed(client, SCHEMA, 'late_between', between.file, between.d);
    assert.match(refused.typed.error ?? '', /invalid input syntax for type integer: "n\/a!"/);
    const all = await sniffFile('between.csv', content(4700), 'csv', { sample: 'all' });
    assert.deepEqual([all.d.columns[0]?.type, all.d.whole], ['text', true]);
    assert.equal((await loadSniffed(client, SCHEMA, 'late_all', all.file, all.d)).typed.rows, 5000);
  });
});
