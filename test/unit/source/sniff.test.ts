import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LoadTarget } from '../../../src/core/chunk.js';
import { columnIdentifiers } from '../../../src/input/column-names.js';
import { describeInput } from '../../../src/input/format-registry.js';
import type { Format } from '../../../src/input/formats.js';
import type { DescribeOptions, FileDescription } from '../../../src/input/input-format.js';
import type { InputOptions } from '../../../src/input/input-options.js';
import { ColumnTypes } from '../../../src/input/value-types.js';

/*
 * The sniffer of delimited text and JSON: the dialect, the names and each column's
 * narrowest type, from a sample across the file. (That the server reads what the sniffer
 * says a value fits is test/integration/sniff.test.ts's.)
 */

let dir: string;
before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-unit-sniff-'));
});
after(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const target = (format: Format, file: string, input: InputOptions = {}): LoadTarget => ({ table: 't', schema: undefined, format, file, input });

async function sniff(name: string, content: string | Buffer, format: Format = 'csv', options: DescribeOptions = {}, input: InputOptions = {}): Promise<FileDescription> {
  const file = path.join(dir, name);
  await fs.writeFile(file, content);
  return describeInput(target(format, file, input), options);
}

const typesOf = (d: FileDescription): string[] => d.columns.map((c) => `${c.name} ${c.type}`);

function typeOf(...values: string[]): string {
  const t = new ColumnTypes();
  for (const v of values) t.add(v);
  const r = t.result();
  return r.dateOrder === undefined ? r.type : `${r.type} ${r.dateOrder}`;
}

describe('a column is the narrowest type all its values fit', () => {
  it('integers by range (integer at least, never smallint), decimals as numeric, exponents and NaN as double precision', () => {
    assert.equal(typeOf('1', '-32768', '32767'), 'integer');
    assert.equal(typeOf('1', '-2147483648', '2147483647'), 'integer');
    assert.equal(typeOf('2147483648'), 'bigint');
    assert.equal(typeOf('-2147483649'), 'bigint');
    assert.equal(typeOf('9223372036854775808'), 'numeric');
    assert.equal(typeOf('1', '2.50', '.5', '-3.'), 'numeric');
    assert.equal(typeOf('1.5', '2e10'), 'double precision');
    assert.equal(typeOf('1.5', 'NaN', '-Infinity'), 'double precision');
    assert.equal(typeOf('1e400'), 'numeric');
    // Leading zeros are kept: a code, not a number.
    assert.equal(typeOf('007', '12'), 'text');
    assert.equal(typeOf('1', ''), 'text');
  });

  it('booleans as words (0 and 1 are numbers)', () => {
    assert.equal(typeOf('true', 'FALSE', 't', 'f', 'yes', 'No', 'on', 'off'), 'boolean');
    assert.equal(typeOf('0', '1'), 'integer');
    assert.equal(typeOf('true', '1'), 'text');
  });

  it('dates: ISO in any DateStyle, day or month first only when the values tell', () => {
    assert.equal(typeOf('2024-01-31', '2024-02-29'), 'date');
    assert.equal(typeOf('2023-02-29'), 'text');
    assert.equal(typeOf('31/12/2024', '01/02/2024'), 'date DMY');
    assert.equal(typeOf('12/31/2024', '01/02/2024'), 'date MDY');
    assert.equal(typeOf('31.12.2024', '1.2.2024'), 'date DMY');
    // Every day and month 12 or less: not told apart, not guessed.
    assert.equal(typeOf('01/02/2024', '11/12/2024'), 'text');
    assert.equal(typeOf('31/12/2024', '12/31/2024'), 'text');
    assert.equal(typeOf('2024-01-02', '31/12/2024'), 'date DMY');
  });

  it('times, timestamps with and without a zone, uuids, JSON documents', () => {
    assert.equal(typeOf('00:00', '23:59:59', '12:30:00.123456'), 'time');
    assert.equal(typeOf('24:00:01'), 'text');
    assert.equal(typeOf('2024-01-02 03:04:05', '2024-01-02T03:04', '2024-01-03'), 'timestamp');
    assert.equal(typeOf('2024-01-02 03:04:05Z', '2024-01-02T03:04:05.5+05:30', '2024-01-02 03:04:05-08'), 'timestamptz');
    assert.equal(typeOf('2024-01-02 03:04:05Z', '2024-01-02 03:04:05', '2024-01-03'), 'timestamptz');
    assert.equal(typeOf('31/12/2024 10:00:00'), 'timestamp DMY');
    assert.equal(typeOf('4b2a4e4e-1111-4a4a-8b8b-0123456789AB'), 'uuid');
    assert.equal(typeOf('{"a": [1, 2]}', '[]'), 'jsonb');
    assert.equal(typeOf('{"a": "\\u0000"}'), 'text');
    assert.equal(typeOf('{"a": 1'), 'text');
  });
});

describe('names a DBA would type', () => {
  it('lower case, snake_case, no accents, no bare reserved word, unique, c1… for none', () => {
    assert.deepEqual(columnIdentifiers(['Order ID', 'orderDate', 'Prénom', 'select', 'user', '2024 sales', '', 'a', 'A', 'HTTPStatus', 'x'.repeat(80)]), [
      'order_id',
      'order_date',
      'prenom',
      'select_',
      'user_',
      'c2024_sales',
      'c7',
      'a',
      'a_2',
      'http_status',
      'x'.repeat(63),
    ]);
  });
});

describe('the dialect of delimited text', () => {
  it('semicolons, a header, DD/MM/YYYY dates and decimal points', async () => {
    const d = await sniff('semi.csv', 'Id;Name;Born;Score\n1;Ann;31/12/1990;12.5\n2;"Bob; Jr";01/02/1985;7\n3;Cy;15/06/2001;\n');
    assert.deepEqual(typesOf(d), ['id integer', 'name text', 'born date', 'score numeric']);
    assert.equal(d.dialect?.delimiter, ';');
    assert.equal(d.dialect?.header, true);
    assert.equal(d.dialect?.datestyle, 'ISO, DMY');
    assert.deepEqual(d.columns[0], { name: 'id', key: 'Id', type: 'integer' });
    assert.deepEqual([d.sampled, d.whole], [3, true]);
  });

  it('tabs, and a text file with backslash escapes and \\N', async () => {
    const csv = await sniff('tab.csv', 'a\tb\n1\tx y\n2\tz\n');
    assert.deepEqual([csv.dialect?.delimiter, ...typesOf(csv)], ['\t', 'a integer', 'b text']);
    const text = await sniff('t.txt', 'id\twhen\tnote\n1\t2024-01-02 10:00:00\ta\\tb\n2\t\\N\tc\\\\d\n\\.\n', 'text');
    assert.deepEqual(typesOf(text), ['id integer', 'when_ timestamp', 'note text']);
    assert.deepEqual([text.dialect?.null, text.dialect?.header], ['\\N', true]);
    const tbl = await sniff('t.tbl', '1|abc|2.50|2024-01-01|\n2|de|3.00|2024-01-02|\n', 'tbl');
    assert.deepEqual([tbl.dialect?.delimiter, tbl.dialect?.header, ...typesOf(tbl)], ['|', false, 'c1 integer', 'c2 text', 'c3 numeric', 'c4 date']);
  });

  it('quoted fields holding newlines, delimiters and quotes, in every block of a large file', async () => {
    const rows = ['id,comment,amount'];
    for (let i = 0; i < 6000; i++) rows.push(`${i},"line one, ""quoted""\nline two\n${i % 7 === 0 ? '3,x,4' : 'z'}",${i}.25`);
    const d = await sniff('quoted.csv', rows.join('\n') + '\n', 'csv', { sample: 300 });
    assert.deepEqual(typesOf(d), ['id integer', 'comment text', 'amount numeric']);
    assert.deepEqual([d.dialect?.quote, d.dialect?.escape, d.whole], ['"', '"', false]);
    assert.ok(d.sampled >= 290 && d.sampled <= 300, `sampled ${d.sampled}`);
  });

  it('headerless rows each quoting a field that holds the delimiter: that quote, not one the file never uses (which splits the field)', async () => {
    const d = await sniff('allquoted.csv', Array.from({ length: 50 }, (_, i) => `${i},"Ann ${i}","Berlin, Germany"\n`).join(''));
    assert.deepEqual([d.dialect?.quote, d.dialect?.header, ...typesOf(d)], ['"', false, 'c1 integer', 'c2 text', 'c3 text']);
    const single = await sniff('single.csv', Array.from({ length: 50 }, (_, i) => `${i},'Rome, Italy'\n`).join(''));
    assert.deepEqual([single.dialect?.quote, ...typesOf(single)], ["'", 'c1 integer', 'c2 text']);
  });

  it('no header: c1…cN; a header of text columns is told by names that are not values', async () => {
    const d = await sniff('nohead.csv', '1,Ann,2024-01-01\n2,Bob,2024-01-02\n');
    assert.deepEqual([d.dialect?.header, ...typesOf(d)], [false, 'c1 integer', 'c2 text', 'c3 date']);
    const names = await sniff('textnames.csv', 'city,country\nParis,France\nLyon,France\n');
    assert.deepEqual([names.dialect?.header, ...typesOf(names)], [true, 'city text', 'country text']);
    const plain = await sniff('textrows.csv', 'Paris,France\nLyon,France\n');
    assert.deepEqual([plain.dialect?.header, ...typesOf(plain)], [false, 'c1 text', 'c2 text']);
  });

  it('a byte-order mark, CRLF and CR line endings', async () => {
    const bom = await sniff('bom.csv', '\uFEFFid,name\r\n1,a\r\n2,b\r\n');
    assert.deepEqual([bom.dialect?.bom, bom.dialect?.lineEnding, bom.dialect?.encoding, ...typesOf(bom)], [true, 'CRLF', 'UTF8', 'id integer', 'name text']);
    const cr = await sniff('cr.csv', 'id,name\r1,a\r2,b\r');
    assert.deepEqual([cr.dialect?.lineEnding, ...typesOf(cr)], ['CR', 'id integer', 'name text']);
  });

  it('Windows-1252 and LATIN1 bytes, told from UTF-8', async () => {
    const win = await sniff('win.csv', Buffer.from('Prénom,Prix\nJosé,5 \x80\n', 'latin1'));
    assert.deepEqual([win.dialect?.encoding, ...typesOf(win)], ['WIN1252', 'prenom text', 'prix text']);
    assert.equal(win.columns[0]?.key, 'Prénom');
    const latin1 = await sniff('latin1.csv', Buffer.from('a,b\n\x81x,é\n', 'latin1'));
    assert.equal(latin1.dialect?.encoding, 'LATIN1');
    const utf8 = await sniff('utf8.csv', 'a,b\nJosé,€\n');
    assert.equal(utf8.dialect?.encoding, 'UTF8');
  });

  it('NULL markers: empty, NA, \\N; the most common is COPY NULL and the others are values', async () => {
    const na = await sniff('na.csv', 'id,score\n1,NA\n2,3.5\nNA,4\n');
    assert.deepEqual([na.dialect?.null, ...typesOf(na)], ['NA', 'id integer', 'score numeric']);
    const empty = await sniff('empty.csv', 'id,score,note\n1,,x\n2,3.5,\n,4,""\n');
    assert.deepEqual([empty.dialect?.null, ...typesOf(empty)], ['', 'id integer', 'score numeric', 'note text']);
    const both = await sniff('both.csv', 'id,score\n1,NA\n2,NA\n3,\n');
    assert.deepEqual([both.dialect?.null, both.dialect?.nullMarkers, ...typesOf(both)], ['NA', ['NA', ''], 'id integer', 'score text']);
  });

  it('a value past 90% of the file: seen when the end block holds it, missed between the blocks, and always with sample all', async () => {
    const file = (bad: number): string => ['n,label', ...Array.from({ length: 20_000 }, (_, i) => `${i === bad ? 'n/a!' : i * 3},r${i}`)].join('\n') + '\n';
    const inEnd = await sniff('late-end.csv', file(19_900), 'csv', { sample: 600 });
    assert.deepEqual([inEnd.whole, ...typesOf(inEnd)], [false, 'n text', 'label text']);
    const between = await sniff('late-between.csv', file(18_400), 'csv', { sample: 600 });
    assert.deepEqual(typesOf(between), ['n integer', 'label text']);
    const all = await sniff('late-all.csv', file(18_400), 'csv', { sample: 'all' });
    assert.deepEqual([all.whole, all.sampled, ...typesOf(all)], [true, 20_000, 'n text', 'label text']);
  });

  it('the options the user gave are taken as given', async () => {
    const d = await sniff('given.csv', 'a|b\n1|-\n-|2\n', 'csv', {}, { delimiter: '|', null: '-', header: 'skip' });
    assert.deepEqual([d.dialect?.delimiter, d.dialect?.null, d.dialect?.header, ...typesOf(d)], ['|', '-', true, 'a integer', 'b integer']);
  });
});

describe('JSON values', () => {
  it('the union of keys in first-seen order; scalar kinds, arrays and nested objects', async () => {
    const lines = [
      { id: 1, at: '2024-01-02T03:04:05Z', tags: ['a', 'b'], nums: [1, 2], meta: { k: 1 }, mixed: [1, 'x'], flag: true, u: '4b2a4e4e-1111-4a4a-8b8b-0123456789ab' },
      { id: 70000, price: 1.5, at: '2024-01-03T00:00:00+01:00', tags: [], nums: [3], meta: null, mixed: [], flag: false, day: '2024-01-01', kind: 1 },
      { id: 3, price: 2, kind: 'x', day: '2024-02-30' },
    ];
    const d = await sniff('v.ndjson', lines.map((l) => JSON.stringify(l)).join('\n') + '\n', 'ndjson');
    assert.deepEqual(typesOf(d), [
      'id integer',
      'at timestamptz',
      'tags text[]',
      'nums integer[]',
      'meta jsonb',
      'mixed jsonb',
      'flag boolean',
      'u uuid',
      'price numeric',
      'day text',
      'kind text',
    ]);
    const arr = await sniff('v.json', '[{"First Name": "A", "n": 1e300}, {"n": 2}]', 'json');
    assert.deepEqual(arr.columns, [
      { name: 'first_name', key: 'First Name', type: 'text' },
      { name: 'n', type: 'double precision' },
    ]);
  });
});
