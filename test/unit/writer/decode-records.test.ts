import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Format } from '../../../src/input/formats.js';
import { decodeRecordBatches, decodeRecords, unescapeText, type DecodedRecord } from '../../../src/wire/decode-records.js';
import { arrayLiteral, insertPlan, MAX_PARAMETERS } from '../../../src/writer/insert-writer.js';
import { tableColumn } from '../../helpers/table-column.js';

interface Case {
  name: string;
  format: Format;
  input: string;
  expected: DecodedRecord[];
}

const cases: Case[] = [
  // text: tab-delimited, backslash escapes, \N is NULL
  { name: 'plain fields', format: 'text', input: 'a\tb\tc\n', expected: [['a', 'b', 'c']] },
  { name: 'several records', format: 'text', input: '1\tx\n2\ty\n', expected: [['1', 'x'], ['2', 'y']] },
  { name: '\\N is NULL', format: 'text', input: '1\t\\N\t\n', expected: [['1', null, '']] },
  { name: 'escaped \\N is the text \\N', format: 'text', input: '\\\\N\tx\\N\n', expected: [['\\N', 'xN']] },
  { name: 'empty field is an empty string', format: 'text', input: '\t\n', expected: [['', '']] },
  { name: 'simple escapes', format: 'text', input: 'a\\tb\\nc\\rd\\\\e\\bf\\fg\\vh\n', expected: [['a\tb\nc\rd\\e\bf\fg\vh']] },
  { name: 'escaped delimiter', format: 'text', input: 'a\\\tb\tc\n', expected: [['a\tb', 'c']] },
  { name: 'octal escapes, 1 to 3 digits', format: 'text', input: '\\101\\7x\\0619\n', expected: [['A\x07x19']] },
  { name: 'octal bytes forming UTF-8', format: 'text', input: '\\303\\251t\\303\\251\n', expected: [['été']] },
  { name: 'hex escapes, 1 or 2 digits', format: 'text', input: '\\x41\\x4g\\xZ\n', expected: [['A\x04gxZ']] },
  { name: 'hex bytes forming UTF-8', format: 'text', input: '\\xc3\\xa9\n', expected: [['é']] },
  { name: 'any other escaped character is itself', format: 'text', input: '\\q\\"\\|\\,\n', expected: [['q"|,']] },
  { name: 'a backslash before a newline escapes it, as in COPY', format: 'text', input: 'ab\\\ncd\n', expected: [['ab\ncd']] },
  { name: 'an escaped backslash before a newline does not', format: 'text', input: 'ab\\\\\ncd\n', expected: [['ab\\'], ['cd']] },
  { name: 'a lone backslash at the very end is dropped', format: 'text', input: 'ab\\', expected: [['ab']] },
  { name: 'CRLF line ending', format: 'text', input: 'a\tb\r\nc\td\r\n', expected: [['a', 'b'], ['c', 'd']] },
  { name: 'non-ASCII passes through', format: 'text', input: 'héllo\twörld ✓ 日本\n', expected: [['héllo', 'wörld ✓ 日本']] },
  { name: 'a pipe is data in text', format: 'text', input: 'a|b\n', expected: [['a|b']] },
  // tbl: text with | (the trailing | is stripped by the framer before decoding)
  { name: 'tbl fields', format: 'tbl', input: '1|abc|2.50\n', expected: [['1', 'abc', '2.50']] },
  { name: 'tbl has no NULL but \\N still means NULL as in COPY', format: 'tbl', input: '1|\\N|\n', expected: [['1', null, '']] },
  { name: 'tbl backslash escapes apply', format: 'tbl', input: 'a\\|b|c\\\\d|\\t\n', expected: [['a|b', 'c\\d', '\t']] },
  { name: 'tbl tab is data', format: 'tbl', input: 'a\tb|c\n', expected: [['a\tb', 'c']] },
  // csv
  { name: 'csv plain', format: 'csv', input: '1,abc,2.5\n', expected: [['1', 'abc', '2.5']] },
  { name: 'csv unquoted empty is NULL, quoted empty is empty', format: 'csv', input: ',"",x\n', expected: [[null, '', 'x']] },
  { name: 'csv trailing empty field is NULL', format: 'csv', input: 'a,\n', expected: [['a', null]] },
  { name: 'csv doubled quotes', format: 'csv', input: '"say ""hi""",b\n', expected: [['say "hi"', 'b']] },
  { name: 'csv quoted delimiter and newline', format: 'csv', input: '"a,b\nc",d\n', expected: [['a,b\nc', 'd']] },
  { name: 'csv quoted CRLF stays', format: 'csv', input: '"a\r\nb",c\r\n', expected: [['a\r\nb', 'c']] },
  { name: 'csv backslashes are data', format: 'csv', input: 'a\\N,\\t\n', expected: [['a\\N', '\\t']] },
  { name: 'csv \\N is text, not NULL', format: 'csv', input: '\\N\n', expected: [['\\N']] },
  { name: 'csv quotes in the middle of a field', format: 'csv', input: 'a"b,c"d,e\n', expected: [['ab,cd', 'e']] },
  { name: 'csv whitespace is kept', format: 'csv', input: ' a , "b" \n', expected: [[' a ', ' b ']] },
  { name: 'csv quoted NULL word is text', format: 'csv', input: 'NULL,"NULL"\n', expected: [['NULL', 'NULL']] },
  { name: 'csv empty line is one NULL field', format: 'csv', input: '\n1\n', expected: [[null], ['1']] },
  { name: 'csv non-ASCII', format: 'csv', input: '"ünï,cødé",日本\n', expected: [['ünï,cødé', '日本']] },
];

describe('decodeRecords: COPY text, tbl and CSV → field values, as COPY reads them', () => {
  for (const c of cases) {
    it(`${c.format}: ${c.name}`, () => assert.deepEqual(decodeRecords(Buffer.from(c.input, 'utf8'), c.format), c.expected));
  }
  it('in batches of 1, 2 and 3 records: the same records, cut only at record ends', () => {
    for (const c of cases) {
      for (const size of [1, 2, 3]) {
        const batches = [...decodeRecordBatches(Buffer.from(c.input, 'utf8'), c.format, size)];
        assert.ok(batches.every((b, i) => b.length === size || i === batches.length - 1), `${c.name}: batch sizes`);
        assert.deepEqual(batches.flat(), c.expected, `${c.name} in batches of ${size}`);
      }
    }
  });
  it('batches keep an escaped newline inside its record', () => {
    assert.deepEqual([...decodeRecordBatches(Buffer.from('a\\\nb\nc\n'), 'text', 1)], [[['a\nb']], [['c']]]);
  });
  it('csv: an unterminated quote in a later batch names the record in the chunk', () => {
    assert.throws(() => [...decodeRecordBatches(Buffer.from('1\n2\n3\n"4\n'), 'csv', 2)], { record: 4 } as object);
  });
  it('csv: an unterminated quote is an error naming the record', () => {
    assert.throws(() => decodeRecords(Buffer.from('1,ok\n2,"open\n'), 'csv'), { name: 'RecordDecodeError', message: 'unterminated CSV quoted field', record: 2 } as object);
  });
  it('an empty chunk has no records', () => {
    for (const f of ['text', 'tbl', 'csv'] as const) assert.deepEqual(decodeRecords(Buffer.alloc(0), f), []);
  });
  it('unescapeText keeps a 4th octal digit as a character', () => assert.equal(unescapeText('\\1011'), 'A1'));
});

describe('INSERT statements and parameters', () => {
  const columns = [
    tableColumn({ name: 'id', type: 'integer', baseType: 'integer', isArray: false }),
    tableColumn({ name: 'code', type: 'character(3)', baseType: 'bpchar', isArray: false }),
    tableColumn({ name: 'tags', type: 'integer[]', baseType: 'integer[]', isArray: true }),
  ];
  it('unnest casts to the type without its modifier, array columns through text', () => {
    const plan = insertPlan('"t"', columns, { style: 'unnest', batchRows: 10, onConflict: 'error' });
    assert.equal(plan.text, 'INSERT INTO "t" ("id", "code", "tags") SELECT unnest($1::integer[]), unnest($2::bpchar[]), unnest($3::text[])::integer[]');
    assert.deepEqual(plan.params([['1', 'ab ', '{1,2}'], ['2', null, null]]), ['{"1","2"}', '{"ab ",NULL}', '{"{1,2}",NULL}']);
  });
  it('values binds one parameter per field and appends ON CONFLICT DO NOTHING for skip', () => {
    const plan = insertPlan('"t"', columns, { style: 'values', batchRows: 2, onConflict: 'skip' });
    assert.equal(plan.text, 'INSERT INTO "t" ("id", "code", "tags") VALUES ($1,$2,$3),($4,$5,$6) ON CONFLICT DO NOTHING');
    assert.deepEqual(plan.params([['1', 'a', null], ['2', 'b', '{}']]), ['1', 'a', null, '2', 'b', '{}']);
  });
  it('values never exceeds 65,535 parameters', () => {
    const wide = Array.from({ length: 16 }, (_, i) => tableColumn({ name: `c${i}`, type: 'text', baseType: 'text', isArray: false }));
    const plan = insertPlan('"t"', wide, { style: 'values', batchRows: 100000, onConflict: 'error' });
    assert.equal(plan.batchRows, Math.floor(MAX_PARAMETERS / 16));
    assert.ok(plan.batchRows * 16 <= MAX_PARAMETERS);
  });
  it('row is one tuple per statement', () => {
    const plan = insertPlan('"t"', columns, { style: 'row', batchRows: 500, onConflict: 'error' });
    assert.equal(plan.text, 'INSERT INTO "t" ("id", "code", "tags") VALUES ($1,$2,$3)');
    assert.equal(plan.batchRows, 500);
  });
  it('array literals quote every element and escape quotes and backslashes', () => {
    assert.equal(arrayLiteral([['a"b'], ['c\\d'], ['{x,y}'], [null], ['NULL'], ['']], 0), '{"a\\"b","c\\\\d","{x,y}",NULL,"NULL",""}');
  });
});
