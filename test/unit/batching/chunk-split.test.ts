import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Chunk, LoadTarget } from '../../../src/core/chunk.js';
import { chunkRecords } from '../../../src/input/chunker.js';
import { ChunkRecords } from '../../../src/input/chunk-split.js';
import type { Format } from '../../../src/input/formats.js';
import { framerFor } from '../../../src/input/framer-for.js';
import { uncoveredRanges } from '../../../src/input/byte-ranges.js';
import { skipCovered } from '../../../src/input/skip-covered.js';

async function* once(buf: Buffer): AsyncGenerator<Buffer> {
  yield buf;
}

/** The whole input as one chunk, framed as the chunker frames the end of an input. */
function wholeChunk(format: Format, input: string): Chunk {
  const target: LoadTarget = { table: 't', schema: undefined, format, file: 'f' };
  const source = Buffer.from(input);
  const framed = framerFor(format).frame(source, true);
  return { location: { file: 'f', byteOffset: 0, byteLength: framed.consumed, firstLine: 1 }, data: framed.out, source, records: framed.records, lines: framed.lines, target };
}

/**
 * `records`: the input's records as read; `rejectedLast`, when it differs, the last one as
 * the reject file holds it (given the input's line ending when the input ends without one).
 */
const cases: { name: string; format: Format; input: string; records: string[]; lines: number[]; rejectedLast?: string }[] = [
  { name: 'tbl', format: 'tbl', input: '1|a|\n2|b|\n3|c|', records: ['1|a|\n', '2|b|\n', '3|c|'], lines: [1, 1, 1], rejectedLast: '3|c|\n' },
  { name: 'tbl, CRLF', format: 'tbl', input: '1|a|\r\n2|b|\r\n3|c|', records: ['1|a|\r\n', '2|b|\r\n', '3|c|'], lines: [1, 1, 1], rejectedLast: '3|c|\r\n' },
  { name: 'text', format: 'text', input: 'a\tb\nc\\nd\te\n', records: ['a\tb\n', 'c\\nd\te\n'], lines: [1, 1] },
  { name: 'text, CR: each record with its CR', format: 'text', input: 'a\tb\rc\\\rd\te\rf\tg', records: ['a\tb\r', 'c\\\rd\te\r', 'f\tg'], lines: [1, 2, 1], rejectedLast: 'f\tg\r' },
  { name: 'text, CRLF: each record with its CRLF', format: 'text', input: 'a\tb\r\nc\td\r\n', records: ['a\tb\r\n', 'c\td\r\n'], lines: [1, 1] },
  { name: 'csv with quoted newlines', format: 'csv', input: '1,"a\nb"\n2,x\n3,"c\n\nd"\n4,y', records: ['1,"a\nb"\n', '2,x\n', '3,"c\n\nd"\n', '4,y'], lines: [2, 1, 3, 1], rejectedLast: '4,y\n' },
  { name: 'csv, CR, a quoted CR', format: 'csv', input: '1,"a\rb"\r2,x', records: ['1,"a\rb"\r', '2,x'], lines: [2, 1], rejectedLast: '2,x\r' },
  { name: 'csv with an unterminated quote at the end', format: 'csv', input: '1,x\n2,"oops\n3,z\n', records: ['1,x\n', '2,"oops\n3,z\n'], lines: [1, 2] },
];

describe('a chunk split at record boundaries', () => {
  for (const c of cases) {
    it(`${c.name}: every record's source bytes and line, and every slice re-framed like the whole`, () => {
      const chunk = wholeChunk(c.format, c.input);
      assert.equal(chunk.source!.toString(), c.input, 'the chunk keeps its source bytes');
      const recs = new ChunkRecords(chunk, framerFor(c.format));
      assert.equal(recs.count, c.records.length);
      // What a rejected record is written as: as read, its line ending included.
      const rejected = c.rejectedLast === undefined ? c.records : [...c.records.slice(0, -1), c.rejectedLast];
      assert.deepEqual(Array.from({ length: recs.count }, (_, i) => recs.sourceOf(i).toString()), rejected);
      assert.deepEqual([...recs.spans.lines], c.lines);
      for (let a = 0; a < recs.count; a++) {
        for (let b = a + 1; b <= recs.count; b++) {
          const part = recs.slice(a, b);
          const alone = wholeChunk(c.format, c.records.slice(a, b).join(''));
          assert.equal(part.data.toString(), alone.data.toString(), `slice ${a}..${b}`);
          assert.equal(part.records, b - a);
          assert.equal(part.location.byteOffset, Buffer.byteLength(c.records.slice(0, a).join('')));
          assert.equal(part.location.byteLength, Buffer.byteLength(c.records.slice(a, b).join('')));
          assert.equal(part.location.firstLine, 1 + c.lines.slice(0, a).reduce((s, n) => s + n, 0));
          assert.equal(recs.recordAt(part.location.byteOffset), a);
        }
      }
    });
  }
});

describe('resume on byte ranges', () => {
  it('uncoveredRanges is the complement of the committed ranges', () => {
    assert.deepEqual(uncoveredRanges(100, []), [{ start: 0, end: 100 }]);
    assert.deepEqual(uncoveredRanges(100, [{ start: 0, end: 100 }]), []);
    assert.deepEqual(uncoveredRanges(100, [{ start: 10, end: 20 }, { start: 20, end: 30 }, { start: 50, end: 100 }]), [
      { start: 0, end: 10 },
      { start: 30, end: 50 },
    ]);
  });

  it('stdin: records in committed ranges are dropped, whatever the chunking was', async () => {
    const lines = Array.from({ length: 40 }, (_, i) => `${i}|row ${i}|`);
    const input = lines.join('\n') + '\n';
    const offsetOf = (i: number): number => Buffer.byteLength(lines.slice(0, i).map((l) => l + '\n').join(''));
    // An earlier run committed lines 3–9 and 20–39.
    const covered = [
      { start: offsetOf(3), end: offsetOf(10) },
      { start: offsetOf(20), end: offsetOf(40) },
    ];
    for (const chunkBytes of [1, 7, 50, 1 << 20]) {
      const target: LoadTarget = { table: 't', schema: undefined, format: 'tbl', file: '-' };
      const framer = framerFor('tbl');
      const kept: string[] = [];
      const firstLines: number[] = [];
      for await (const c of skipCovered(chunkRecords(once(Buffer.from(input)), { target, framer, chunkBytes, startOffset: 0, startLine: 1 }), framer, covered)) {
        kept.push(...c.data.toString().split('\n').filter((l) => l !== ''));
        firstLines.push(c.location.firstLine!);
      }
      const expected = [...lines.slice(0, 3), ...lines.slice(10, 20)].map((l) => l.slice(0, -1));
      assert.deepEqual(kept, expected, `chunk ${chunkBytes}`);
      assert.ok(firstLines.every((l) => (l >= 1 && l <= 3) || (l >= 11 && l <= 20)));
    }
  });
});

describe('the record a COPY error names', () => {
  it('csv: PostgreSQL counts quoted newlines as lines, except in the first record of a COPY', async () => {
    const { copyWriter } = await import('../../../src/writer/copy-writer.js');
    // Records: 1 spans 2 lines (not counted by the server: it does not know the line ending yet), 2 one line, 3 three lines, 4 one line.
    const chunk = wholeChunk('csv', '1,"a\nb"\n2,x\n3,"c\n\nd"\n4,y\n');
    const named = (line: number): number | undefined => copyWriter.failedRecord!({ where: `COPY t, line ${line}, column c: "..."` }, chunk);
    assert.deepEqual([1, 2, 3, 4, 5, 6].map(named), [1, 2, 3, 3, 3, 4]);
    assert.equal(named(7), undefined, 'past the end: bisect instead');
    const tbl = wholeChunk('tbl', '1|a|\n2|b|\n');
    assert.equal(copyWriter.failedRecord!({ where: 'COPY t, line 2' }, tbl), 2);
    assert.equal(copyWriter.failedRecord!({ where: 'SQL statement "SELECT 1"' }, tbl), undefined);
  });
});
