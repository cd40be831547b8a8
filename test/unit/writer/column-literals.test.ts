import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { columnLiteralBatches, hasNoEscapes, valuesBindBatches } from '../../../src/writer/column-literals.js';
import { bindMessage } from '../../../src/writer/prepared-bind.js';
import { decodeRecords } from '../../../src/wire/decode-records.js';
import { arrayLiteral } from '../../../src/writer/insert-writer.js';

/** The fast path must give exactly what decoding and quoting give. */
function slow(input: string, format: 'tbl' | 'text', columns: number, batchRows: number): string[][] {
  const records = decodeRecords(Buffer.from(input), format);
  const out: string[][] = [];
  for (let at = 0; at < records.length; at += batchRows) {
    const batch = records.slice(at, at + batchRows);
    out.push(Array.from({ length: columns }, (_, c) => arrayLiteral(batch, c)));
  }
  return out;
}

function fast(input: string, format: 'tbl' | 'text', columns: number, batchRows: number): string[][] {
  return [...columnLiteralBatches(Buffer.from(input), format === 'tbl' ? 0x7c : 0x09, columns, batchRows)].map((b) => b.literals);
}

const cases: { name: string; format: 'tbl' | 'text'; input: string; columns: number }[] = [
  { name: 'lineitem-like', format: 'tbl', input: '1|155190|7706|1|17|21168.23|0.04|0.02|N|O|1996-03-13|1996-02-12|1996-03-22|DELIVER IN PERSON|TRUCK|egular courts above the|\n'.replace(/\|\n/, '\n').repeat(9), columns: 16 },
  { name: 'quotes, braces, commas, spaces, the word NULL', format: 'tbl', input: 'say "hi"|{a,b}| x |NULL\n""|,|"|null\n', columns: 4 },
  { name: 'empty fields', format: 'tbl', input: '||\n|a|\n', columns: 3 },
  { name: 'non-ASCII', format: 'text', input: 'héllo\twörld 日本 🎉\n✓\t\n', columns: 2 },
  { name: 'CRLF in text', format: 'text', input: 'a\tb\r\nc\td\r\n', columns: 2 },
  { name: 'pipes are data in text, tabs in tbl', format: 'text', input: 'a|b\tc\n', columns: 2 },
  { name: 'tabs are data in tbl', format: 'tbl', input: 'a\tb|c\n', columns: 2 },
  { name: 'one column', format: 'text', input: 'x\n\ny\n', columns: 1 },
];

describe('columnLiteralBatches: the unnest fast path equals decodeRecords + arrayLiteral', () => {
  for (const c of cases) {
    for (const batchRows of [1, 2, 5, 1000]) {
      it(`${c.format}: ${c.name}, batches of ${batchRows}`, () => {
        assert.ok(hasNoEscapes(Buffer.from(c.input)));
        assert.deepEqual(fast(c.input, c.format, c.columns, batchRows), slow(c.input, c.format, c.columns, batchRows));
      });
    }
  }
  it('batch sizes', () => {
    assert.deepEqual([...columnLiteralBatches(Buffer.from('1\n2\n3\n4\n5\n'), 0x09, 1, 2)].map((b) => b.rows), [2, 2, 1]);
    assert.deepEqual([...columnLiteralBatches(Buffer.alloc(0), 0x09, 1, 2)], []);
  });
  it('a record with too few or too many fields names the record, in COPY\'s words', () => {
    assert.throws(() => [...columnLiteralBatches(Buffer.from('1|a\n2\n'), 0x7c, 2, 10)], { message: 'missing data for column (1 fields, the table has 2 columns)', record: 2 } as object);
    assert.throws(() => [...columnLiteralBatches(Buffer.from('1|a\n2|b\n3|c|d|e\n'), 0x7c, 2, 2)], { message: 'extra data after last expected column (4 fields, the table has 2 columns)', record: 3 } as object);
  });
  it('input with a backslash is not for the fast path', () => assert.equal(hasNoEscapes(Buffer.from('a\\tb\n')), false));
});

/** Reads a Bind + Execute + Sync back: the statement name and the parameters as strings. */
function readBind(msg: Buffer): { statement: string; params: string[] } {
  assert.equal(msg[0], 0x42);
  const length = msg.readInt32BE(1);
  let n = 5;
  assert.equal(msg[n++], 0); // unnamed portal
  const nameEnd = msg.indexOf(0, n);
  const statement = msg.toString('utf8', n, nameEnd);
  n = nameEnd + 1;
  assert.equal(msg.readInt16BE(n), 0); // all parameters in text format
  const count = msg.readUInt16BE(n + 2);
  n += 4;
  const params: string[] = [];
  for (let i = 0; i < count; i++) {
    const len = msg.readInt32BE(n);
    params.push(msg.toString('utf8', n + 4, n + 4 + len));
    n += 4 + len;
  }
  assert.equal(msg.readInt16BE(n), 0); // result formats
  assert.equal(n + 2, 1 + length, 'Bind length');
  assert.deepEqual([...msg.subarray(n + 2)], [0x45, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0x53, 0, 0, 0, 4], 'Execute + Sync');
  return { statement, params };
}

describe('valuesBindBatches: the values fast path binds what decodeRecords gives', () => {
  for (const c of cases) {
    for (const batchRows of [1, 3, 1000]) {
      it(`${c.format}: ${c.name}, batches of ${batchRows}`, () => {
        const batches = [...valuesBindBatches(Buffer.from(c.input), c.format === 'tbl' ? 0x7c : 0x09, c.columns, batchRows, (count, bytes, write) => bindMessage('s1', count, bytes, write))];
        const records = decodeRecords(Buffer.from(c.input), c.format);
        const expected: string[][] = [];
        for (let at = 0; at < records.length; at += batchRows) expected.push(records.slice(at, at + batchRows).flat() as string[]);
        assert.deepEqual(batches.map((b) => readBind(b.message)), expected.map((params) => ({ statement: 's1', params })));
        assert.deepEqual(batches.map((b) => b.rows), expected.map((p) => p.length / c.columns));
      });
    }
  }
});
