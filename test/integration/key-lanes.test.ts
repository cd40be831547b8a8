import assert from 'node:assert/strict';
import { finished } from 'node:stream/promises';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { keyedRecords, type LaneType } from '../../src/writer/keyed/key-lanes.js';
import { settledKeys } from '../../src/writer/keyed/lane-router.js';
import { copyFrom, testClient } from '../helpers/test-db.js';

/**
 * Key lanes send every row of one key to one session: two records whose keys the server
 * finds equal must get equal keys from pgsurge (else their rows could be applied out of
 * order, or a chunk's apply would meet one key twice), and two it finds different must
 * not (else a part's rows would be taken for one key's). The oracle: each spelling COPYed
 * by the server as text, then cast to the key's type; the values it takes are grouped by
 * what it makes of them, on this server's version (PostgreSQL 16 reads `0x10` and `1_000`,
 * 15 refuses them).
 */
let client: pg.Client;

const SPELLINGS: Record<string, readonly string[]> = {
  int2: ['1', ' 1', '1 ', '+1', '01', '-0', '0', '00', '32767', '32768', '-32768', '-32769', '0x10', '16', '1_000', '1000', '0o17', '15', '0b11', '3', '', ' ', 'abc', '1.0', '\\061', '\\x31', '1e2'],
  int4: ['1', '\\t1', '\\t', '2147483647', '2147483648', '-2147483648', '0002147483647', '0x7fffffff', '-0x80000000', ' -12 ', '-12', '+0', '1_000_000', '1000000', '0X10', '16', '\\0611', '11'],
  int8: ['9223372036854775807', '9223372036854775808', '-9223372036854775808', '000000000000000000000000000001', '1', '123456789012345', '123456789012345678', '0x7FFFFFFFFFFFFFFF', ' 42', '42'],
  text: ['a', 'a ', 'A', 'é', '\\303\\251', '\\\\', '\\x5c', 'a\\tb', 'a\\011b', '\\N', 'N', '', 'ab', 'a\\b'],
  'varchar(8)': ['x', 'x ', 'xx', '\\170', 'toolongvalue'],
  // Longer than n: cut to n when the rest is spaces (so 'ab ' and 'ab  ' are one value of varchar(3)), else refused; n counts characters.
  'varchar(3)': ['ab', 'ab ', 'ab  ', 'ab   ', 'ab\\040\\040', 'ab\\t', 'abc', 'abc ', 'abc  ', 'abcd', 'abcd ', 'é', 'é  ', 'é   ', 'ééé', 'ééé ', 'éééé', '', '   ', '    '],
  'char(5)': ['ab', 'ab ', 'ab   ', ' ab', 'AB', 'abc', 'ab\\t', '', ' ', 'toolong'],
};

const LANE: Record<string, LaneType> = { int2: 'int2', int4: 'int4', int8: 'int8', text: 'text', 'varchar(8)': 'text', 'varchar(3)': 'text', 'char(5)': 'bpchar' };
/** A type's length limit in characters (varchar(n)'s n), as the catalog's typmod gives it. */
const LENGTH: Record<string, number> = { 'varchar(8)': 8, 'varchar(3)': 3 };

/** The same values as CSV fields (quoted stretches anywhere, doubled quotes, NULL as the empty unquoted field). */
const CSV_SPELLINGS: Record<string, readonly string[]> = {
  int4: ['1', '"1"', '" 1"', '"0"1', '01', '+1', '', '""', '2147483648', '"0x10"', '16', '1"0"'],
  text: ['a', '"a"', 'a""b', '"a""b"', 'ab', 'a"b"', '"a,b"', '"a\nb"', '', '""', ' a', '"é"', 'é'],
  'char(5)': ['ab', '"ab "', 'ab  ', '"ab\n"', '""', ''],
  'varchar(3)': ['ab', '"ab "', 'ab  ', '"ab   "', 'abc ', '"abc"', 'abcd', '"é  "', 'é   '],
};

/** What the server makes of each COPY text field as a `type` column: its value as text (the equality class), or null (refused, or NULL). */
async function serverClasses(type: string, fields: readonly string[], csv = false): Promise<(string | null)[]> {
  await client.query('DROP TABLE IF EXISTS pg_temp.spelled, pg_temp.typed');
  await client.query('CREATE TEMP TABLE spelled (n int, v text)');
  await client.query(`CREATE TEMP TABLE typed (n int, v ${type})`);
  // COPY unescapes each field as it would for the key column; the insert then reads it as COPY into the column would.
  const stream = client.query(copyFrom(`COPY spelled FROM STDIN${csv ? ' (FORMAT csv)' : ''}`));
  stream.end(Buffer.from(fields.map((f, i) => `${i}${csv ? ',' : '\t'}${f}\n`).join('')));
  await finished(stream);
  const classes: (string | null)[] = [];
  for (let i = 0; i < fields.length; i++) {
    try {
      await client.query('INSERT INTO typed SELECT n, v FROM spelled WHERE n = $1', [i]);
      // Back to text: equal values print alike (char(n) drops its padding on the way).
      classes.push((await client.query<{ c: string | null }>('SELECT v::text AS c FROM typed WHERE n = $1', [i])).rows[0]!.c);
    } catch {
      classes.push(null);
    }
  }
  return classes;
}

/** Every pair of spellings the server takes: equal keys (so one lane) exactly where the server's values are equal. */
function sameAsServer(spellings: readonly string[], classes: readonly (string | null)[], keys: readonly (string | undefined)[]): void {
  assert.equal(keys.length, spellings.length);
  for (let i = 0; i < spellings.length; i++) {
    if (classes[i] === null) continue;
    assert.notEqual(keys[i], undefined, `${JSON.stringify(spellings[i])}: the server takes it, pgsurge has no key for it`);
    for (let j = 0; j < i; j++) {
      if (classes[j] === null) continue;
      const server = classes[i] === classes[j];
      assert.equal(keys[i] === keys[j], server, `${JSON.stringify(spellings[i])} and ${JSON.stringify(spellings[j])}: the server finds them ${server ? 'equal' : 'different'}`);
    }
  }
}

before(async () => {
  client = await testClient();
});
after(async () => {
  await client.end();
});

describe('key lanes: keys equal exactly when the server finds them equal', () => {
  for (const [type, spellings] of Object.entries(SPELLINGS)) {
    it(`${type}: every pair of ${spellings.length} spellings the server takes`, async () => {
      const classes = await serverClasses(type, spellings);
      const data = Buffer.from(spellings.map((s) => `${s}\n`).join(''));
      const spec = { fields: [0], types: [LANE[type]!], lengths: [LENGTH[type]], delimiter: 0x09, nullMarker: Buffer.from('\\N') };
      const keys = await settledKeys(client, keyedRecords(data, spec), spec, new Map());
      sameAsServer(spellings, classes, keys);
    });
  }

  for (const [type, spellings] of Object.entries(CSV_SPELLINGS)) {
    it(`CSV, ${type}: every pair of ${spellings.length} spellings the server takes`, async () => {
      const classes = await serverClasses(type, spellings, true);
      const data = Buffer.from(spellings.map((f, i) => `${i},${f}\n`).join(''));
      const spec = { fields: [1], types: [LANE[type]!], lengths: [LENGTH[type]], delimiter: 0x2c, nullMarker: Buffer.alloc(0), csv: { quote: 0x22, escape: 0x22 } };
      const keys = await settledKeys(client, keyedRecords(data, spec), spec, new Map());
      sameAsServer(spellings, classes, keys);
    });
  }

  it('CSV: a quoted first field holding the delimiter, a newline and quotes; CRLF; the NULL string given', async () => {
    const data = Buffer.from(['"x,\n""y",7,b\r\n', 'y,7,"b"\n', 'z,"7",b  \n', 'w,7,NULL\n', 'v,7,"NULL"\n'].join(''));
    const spec = { fields: [1, 2], types: ['int4', 'bpchar'] as LaneType[], delimiter: 0x2c, nullMarker: Buffer.from('NULL'), csv: { quote: 0x22, escape: 0x22 } };
    const r = keyedRecords(data, spec);
    assert.equal(r.ends.length, 5, 'five records: the quoted newline is data');
    assert.equal(r.keys[0], r.keys[1]);
    assert.equal(r.keys[1], r.keys[2], 'b and "b  " are equal as char(n)');
    assert.equal(r.keys[3], undefined, 'NULL unquoted is NULL: no key');
    assert.notEqual(r.keys[4], undefined, '"NULL" quoted is the text NULL');
  });

  it('two-column keys, the key in the middle of the record and at its end (CRLF, escaped delimiters before it)', async () => {
    const lines = ['x\\tq\t 7\tb\r\n', 'y\t7\tb\n', 'z\t+7\tb \n', 'w\t7\tc\n', 'v\t0x7\tb\n'];
    const data = Buffer.from(lines.join(''));
    const spec = { fields: [1, 2], types: ['int4', 'bpchar'] as LaneType[], delimiter: 0x09, nullMarker: Buffer.from('\\N') };
    const keys = await settledKeys(client, keyedRecords(data, spec), spec, new Map());
    const hex = (await client.query<{ v: number }>("SELECT current_setting('server_version_num')::int AS v")).rows[0]!.v >= 160000;
    assert.equal(keys[0], keys[1], ' 7 and b (CRLF) equal 7 and b');
    assert.equal(keys[1], keys[2], 'b and "b " are equal as char(n)');
    assert.notEqual(keys[1], keys[3]);
    if (hex) assert.equal(keys[4], keys[1], '0x7 is 7 on PostgreSQL 16+');
    else assert.equal(keys[4], undefined, 'PostgreSQL 15 refuses 0x7');
  });
});
