import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LoadTarget } from '../../../src/core/chunk.js';
import { chunkRecords } from '../../../src/input/chunker.js';
import { CsvFramer } from '../../../src/input/text/csv-framer.js';
import type { Format } from '../../../src/input/formats.js';
import { framerFor } from '../../../src/input/framer-for.js';
import { LineFramer } from '../../../src/input/line-framer.js';
import { TblFramer } from '../../../src/input/text/tbl-framer.js';

async function* blocksOf(buf: Buffer, cuts: number[]): AsyncGenerator<Buffer> {
  let at = 0;
  for (const c of [...cuts, buf.length]) {
    yield buf.subarray(at, c);
    at = c;
  }
}

async function frameAll(format: Format, input: string, cuts: number[], chunkBytes: number) {
  const target: LoadTarget = { table: 't', schema: undefined, format, file: 'f' };
  const buf = Buffer.from(input);
  const chunks = [];
  for await (const chunk of chunkRecords(blocksOf(buf, cuts), { target, framer: framerFor(format), chunkBytes, startOffset: 0, startLine: 1 })) {
    chunks.push(chunk);
  }
  return chunks;
}

const cases: { name: string; format: Format; input: string; expected: string }[] = [
  { name: 'tbl lines', format: 'tbl', input: '1|a|x|\n2|b|y|\n3|c|z|\n', expected: '1|a|x\n2|b|y\n3|c|z\n' },
  { name: 'tbl without final newline', format: 'tbl', input: '1|a|\n2|b|', expected: '1|a\n2|b\n' },
  { name: 'tbl CRLF', format: 'tbl', input: '1|a|\r\n2|b|\r\n', expected: '1|a\n2|b\n' },
  { name: 'tbl one line', format: 'tbl', input: '42|only|', expected: '42|only\n' },
  { name: 'tbl keeps an inner empty field', format: 'tbl', input: '1||\n||\n', expected: '1|\n|\n' },
  { name: 'text lines', format: 'text', input: 'a\tb\nc\\nd\te\n\\N\tf\n', expected: 'a\tb\nc\\nd\te\n\\N\tf\n' },
  { name: 'text without final newline', format: 'text', input: 'a\nb', expected: 'a\nb\n' },
  { name: 'csv quoted newline and delimiter', format: 'csv', input: '1,"a\nb",x\n2,"c,d",y\n3,"e""\nf",z\n', expected: '1,"a\nb",x\n2,"c,d",y\n3,"e""\nf",z\n' },
  { name: 'csv without final newline', format: 'csv', input: '1,"x\ny"\n2,z', expected: '1,"x\ny"\n2,z\n' },
];

describe('framers keep every record whole wherever the input is cut', () => {
  for (const c of cases) {
    it(`${c.name}: every single cut, chunk sizes 1…len`, async () => {
      const len = Buffer.byteLength(c.input);
      for (let cut = 0; cut <= len; cut++) {
        for (const chunkBytes of [1, 2, 3, 7, len, 1 << 20]) {
          const chunks = await frameAll(c.format, c.input, [cut], chunkBytes);
          const out = Buffer.concat(chunks.map((ch) => ch.data)).toString();
          assert.equal(out, c.expected, `cut at ${cut}, chunk ${chunkBytes}`);
          const covered = chunks.reduce((s, ch) => s + ch.location.byteLength, 0);
          assert.equal(covered, len, 'chunks cover every source byte once');
          let offset = 0;
          let line = 1;
          for (const ch of chunks) {
            assert.equal(ch.location.byteOffset, offset);
            assert.equal(ch.location.firstLine, line);
            offset += ch.location.byteLength;
            line += ch.lines;
          }
        }
      }
    });
  }

  it('every pair of cuts on a longer tbl input', async () => {
    const lines = Array.from({ length: 9 }, (_, i) => `${i}|name ${i}|${'x'.repeat(i)}|`);
    const input = lines.join('\n') + '\n';
    const expected = lines.map((l) => l.slice(0, -1)).join('\n') + '\n';
    const len = input.length;
    for (let a = 0; a <= len; a += 3) {
      for (let b = a; b <= len; b += 5) {
        const chunks = await frameAll('tbl', input, [a, b], 16);
        assert.equal(Buffer.concat(chunks.map((c) => c.data)).toString(), expected, `cuts ${a},${b}`);
        assert.equal(chunks.reduce((s, c) => s + c.records, 0), 9);
      }
    }
  });

  it('an empty input makes no chunks', async () => {
    for (const format of ['tbl', 'text', 'csv'] as const) assert.deepEqual(await frameAll(format, '', [], 10), []);
  });
});

describe('framer details', () => {
  it('tbl strips only the last pipe of each line', () => {
    const r = new TblFramer().frame(Buffer.from('a|b||\nc|'), true);
    assert.equal(r.out.toString(), 'a|b|\nc\n');
    assert.equal(r.records, 2);
    assert.equal(r.consumed, 8);
  });
  it('line framer holds back a partial last line until eof', () => {
    const f = new LineFramer();
    assert.equal(f.frame(Buffer.from('a\nb'), false).consumed, 2);
    assert.equal(f.frame(Buffer.from('a\nb'), true).out.toString(), 'a\nb\n');
  });
  it('csv counts lines and records apart', () => {
    const f = new CsvFramer();
    const r = f.frame(Buffer.from('1,"a\nb\nc"\n2,x\n'), false);
    assert.equal(r.records, 2);
    assert.equal(r.lines, 4);
    assert.equal(f.linesBeforeRecord(Buffer.from('1,"a\nb\nc"\n2,x\n'), 2), 3);
    assert.equal(f.linesBeforeRecord(Buffer.from('1,"a\nb\nc"\n2,x\n'), 1), 0);
  });
  it('csv with a backslash escape inside quotes', () => {
    const f = new CsvFramer(0x22, 0x5c);
    const r = f.frame(Buffer.from('1,"a\\"\nb"\n2\n'), false);
    assert.equal(r.records, 2);
  });
});
