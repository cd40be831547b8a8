import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Chunk, LoadTarget } from '../../../src/core/chunk.js';
import { ChunkRecords } from '../../../src/input/chunk-split.js';
import type { ByteReader } from '../../../src/input/byte-reader.js';
import { chunkRecords } from '../../../src/input/chunker.js';
import type { Format } from '../../../src/input/formats.js';
import { framerFor, framerForTarget } from '../../../src/input/framer-for.js';
import { detectLineEnd } from '../../../src/input/line-ends.js';
import { LineFramer } from '../../../src/input/line-framer.js';
import { alignRanges } from '../../../src/input/byte-ranges.js';
import { RecordEnds } from '../../../src/input/record-window.js';

async function* blocksOf(buf: Buffer, cuts: number[]): AsyncGenerator<Buffer> {
  let at = 0;
  for (const c of [...cuts, buf.length]) {
    yield buf.subarray(at, c);
    at = c;
  }
}

/** A file in memory read in pieces cut at `cut` (then the rest), that a chunk can read again: `.tbl` is then framed in place. */
function rereadable(buf: Buffer, cut: number): ByteReader {
  let pos = 0;
  return {
    async read(into, at, length) {
      const n = Math.min(length, buf.length - pos, pos < cut ? cut - pos : buf.length);
      if (n <= 0) return 0;
      buf.copy(into, at, pos, pos + n);
      pos += n;
      return n;
    },
    reread: async (offset, length) => Buffer.from(buf.subarray(offset, offset + length)),
  };
}

async function frameAll(format: Format, buf: Buffer, cuts: number[], chunkBytes: number, inPlace = false): Promise<Chunk[]> {
  const target: LoadTarget = { table: 't', schema: undefined, format, file: 'f' };
  const chunks: Chunk[] = [];
  const input = inPlace ? rereadable(buf, cuts[0]!) : blocksOf(buf, cuts);
  for await (const chunk of chunkRecords(input, { target, framer: framerFor(format), chunkBytes, startOffset: 0, startLine: 1, readStep: Math.max(1, Math.min(chunkBytes, 4)) })) {
    // A chunk framed in place keeps its wire bytes in the buffer it was read into: copied before the next is read.
    chunks.push(inPlace && chunk.unframable === undefined ? { ...chunk, data: Buffer.from(chunk.data), source: await chunk.readSource!() } : chunk);
  }
  return chunks;
}

/** A record that never reaches the server: skipped (the final marker) or rejected, on its line, with a message matching. */
interface Special {
  readonly line: number;
  readonly skip?: boolean;
  readonly message: RegExp;
  readonly record: string;
}

const CR_IN_DATA = /literal carriage return found in data/;
const NL_IN_DATA = /literal newline found in data/;
const MIDDLE = /^end-of-data marker in the middle of the file: psql would stop here; pgsurge loads the rest$/;
const VALUE = /a value ends in \\\./;
const FINAL = /end-of-data marker/;

const cases: { name: string; format: Format; input: string; wire: string; records: number; specials?: Special[] }[] = [
  { name: 'text: a backslash-escaped newline stays in its record', format: 'text', input: 'a\\\nb\tc\nd\te\n', wire: 'a\\\nb\tc\nd\te\n', records: 2 },
  { name: 'text: two backslashes escape each other, not the newline', format: 'text', input: 'a\\\\\nb\\\\\\\nc\n', wire: 'a\\\\\nb\\\\\\\nc\n', records: 2 },
  { name: 'text: CR line endings', format: 'text', input: 'a\tb\rc\td\r', wire: 'a\tb\nc\td\n', records: 2 },
  { name: 'text: CR line endings, an escaped CR and an LF escaped', format: 'text', input: 'a\\\rb\rc\\\nd\re', wire: 'a\\\rb\nc\\\nd\ne\n', records: 3 },
  { name: 'text: CRLF line endings', format: 'text', input: 'a\r\nb\r\n', wire: 'a\nb\n', records: 2 },
  { name: 'text: CRLF line endings, the CR escaped', format: 'text', input: 'a\r\nb\\\r\nc\r\n', wire: 'a\n', records: 2, specials: [{ line: 2, message: NL_IN_DATA, record: 'b\\\r\nc\r\n' }] },
  { name: 'text: a CR inside a record of an LF input', format: 'text', input: 'a\nb\rc\nd\n', wire: 'a\nd\n', records: 3, specials: [{ line: 2, message: CR_IN_DATA, record: 'b\rc\n' }] },
  { name: 'text: an LF inside a record of a CRLF input', format: 'text', input: 'a\r\nb\nc\r\nd\r\n', wire: 'a\nd\n', records: 3, specials: [{ line: 2, message: NL_IN_DATA, record: 'b\nc\r\n' }] },
  { name: 'text: an LF inside a record of a CR input', format: 'text', input: 'a\rb\nc\rd\r', wire: 'a\nd\n', records: 3, specials: [{ line: 2, message: NL_IN_DATA, record: 'b\nc\r' }] },
  { name: 'text: a CR at the very end of an LF input', format: 'text', input: 'a\nb\r', wire: 'a\n', records: 2, specials: [{ line: 2, message: CR_IN_DATA, record: 'b\r\n' }] },
  { name: 'text: the final marker is skipped', format: 'text', input: 'a\nb\n\\.\n', wire: 'a\nb\n', records: 3, specials: [{ line: 3, skip: true, message: FINAL, record: '\\.' }] },
  { name: 'text: the final marker without its newline', format: 'text', input: 'a\n\\.', wire: 'a\n', records: 2, specials: [{ line: 2, skip: true, message: FINAL, record: '\\.' }] },
  { name: 'text: the final marker and blank lines (pg_dump -Fd)', format: 'text', input: 'a\n\\.\n\n', wire: 'a\n', records: 2, specials: [{ line: 2, skip: true, message: FINAL, record: '\\.' }] },
  { name: 'text: a marker in the middle', format: 'text', input: 'a\n\\.\nb\n\\.\n', wire: 'a\nb\n', records: 4, specials: [{ line: 2, message: MIDDLE, record: '\\.\n' }, { line: 4, skip: true, message: FINAL, record: '\\.' }] },
  { name: 'text: a value ending in \\.', format: 'text', input: 'x\tabc\\.\ny\tz\n', wire: 'y\tz\n', records: 2, specials: [{ line: 1, message: VALUE, record: 'x\tabc\\.\n' }] },
  { name: 'text: an escaped backslash before a dot', format: 'text', input: 'a\\\\.\n\\\\.\n', wire: 'a\\\\.\n\\\\.\n', records: 2 },
  { name: 'text: a backslash ending the input escapes nothing', format: 'text', input: 'a\nb\\', wire: 'a\nb\n', records: 2 },
  { name: 'text: CR input, the final marker', format: 'text', input: 'a\r\\.\r', wire: 'a\n', records: 2, specials: [{ line: 2, skip: true, message: FINAL, record: '\\.' }] },
  { name: 'text: CRLF input, a value ending in \\. rejected with its CRLF', format: 'text', input: 'a\tb\r\nx\tc\\.\r\nd\te\r\n', wire: 'a\tb\nd\te\n', records: 3, specials: [{ line: 2, message: VALUE, record: 'x\tc\\.\r\n' }] },
  { name: 'text: CR input, a value ending in \\. rejected with its CR', format: 'text', input: 'a\tb\rx\tc\\.\rd\te\r', wire: 'a\tb\nd\te\n', records: 3, specials: [{ line: 2, message: VALUE, record: 'x\tc\\.\r' }] },
  { name: 'text: CR input, a marker in the middle rejected with its CR', format: 'text', input: 'a\r\\.\rb\r', wire: 'a\nb\n', records: 3, specials: [{ line: 2, message: MIDDLE, record: '\\.\r' }] },
  { name: 'text: a stray CR in a record ending in an escaped newline: rejected with its final LF', format: 'text', input: 'a\tb\nx\tc\r\\\n\nd\te\n', wire: 'a\tb\nd\te\n', records: 3, specials: [{ line: 2, message: CR_IN_DATA, record: 'x\tc\r\\\n\n' }] },
  { name: 'text: an unterminated last record rejected is given the input\'s line ending', format: 'text', input: 'a\r\nb\nc', wire: 'a\n', records: 2, specials: [{ line: 2, message: NL_IN_DATA, record: 'b\nc\r\n' }] },
  { name: 'tbl: a backslash-escaped newline', format: 'tbl', input: '1|a\\\nb|\n2|c|\n', wire: '1|a\\\nb\n2|c\n', records: 2 },
  { name: 'tbl: CR line endings', format: 'tbl', input: '1|a|\r2|b|\r', wire: '1|a\n2|b\n', records: 2 },
  { name: 'tbl: CRLF line endings', format: 'tbl', input: '1|a|\r\n2|b|\r\n', wire: '1|a\n2|b\n', records: 2 },
  { name: 'tbl: a bare LF inside a record of a CRLF input (as text with DELIMITER \'|\')', format: 'tbl', input: 'a|b|\r\nc\nx|d|\r\ne|f|\r\n', wire: 'a|b\ne|f\n', records: 3, specials: [{ line: 2, message: NL_IN_DATA, record: 'c\nx|d|\r\n' }] },
  { name: 'tbl: a CRLF line in an LF input', format: 'tbl', input: '1|a|\n2|b|\r\n3|c|\n', wire: '1|a\n3|c\n', records: 3, specials: [{ line: 2, message: CR_IN_DATA, record: '2|b|\r\n' }] },
  { name: 'tbl: a CR inside a record', format: 'tbl', input: '1|a|\n2|b\rc|\n3|d|\n', wire: '1|a\n3|d\n', records: 3, specials: [{ line: 2, message: CR_IN_DATA, record: '2|b\rc|\n' }] },
  { name: 'tbl: a bare CR ending the first line makes CR the line ending', format: 'tbl', input: '1|a\rb|\n2|c|\n', wire: '1|a\n', records: 2, specials: [{ line: 2, message: NL_IN_DATA, record: 'b|\n2|c|\n\r' }] },
  { name: 'tbl: the final marker, and one in the middle', format: 'tbl', input: '1|a|\n\\.\n2|b\\.|\n3|c|\n\\.\n', wire: '1|a\n3|c\n', records: 5, specials: [{ line: 2, message: MIDDLE, record: '\\.\n' }, { line: 3, message: VALUE, record: '2|b\\.|\n' }, { line: 5, skip: true, message: FINAL, record: '\\.' }] },
  { name: 'csv: CR line endings, a CR inside quotes', format: 'csv', input: '1,"a\rb"\r2,c\r', wire: '1,"a\rb"\n2,c\n', records: 2 },
  { name: 'csv: CRLF line endings, an LF inside quotes', format: 'csv', input: '1,"a\nb"\r\n2,c\r\n', wire: '1,"a\nb"\n2,c\n', records: 2 },
  { name: 'csv: an unquoted LF in a CRLF input', format: 'csv', input: '1,a\r\n2,b\n3,c\r\n4,d\r\n', wire: '1,a\n4,d\n', records: 3, specials: [{ line: 2, message: /unquoted newline found in data/, record: '2,b\n3,c\r\n' }] },
  { name: 'csv: an unquoted CR in an LF input', format: 'csv', input: '1,a\n2,b\r3\n', wire: '1,a\n', records: 2, specials: [{ line: 2, message: /unquoted carriage return found in data/, record: '2,b\r3\n' }] },
  { name: 'csv: the marker as psql reads it; quoted or with more, data', format: 'csv', input: '1,a\n\\.\n"\\."\n\\.x\n\\.\n', wire: '1,a\n"\\."\n\\.x\n', records: 5, specials: [{ line: 2, message: MIDDLE, record: '\\.\n' }, { line: 5, skip: true, message: FINAL, record: '\\.' }] },
  { name: 'csv: an unquoted LF in a CRLF input, the next field a number', format: 'csv', input: 'a,b\r\nu\nv,1\r\nd,e\r\n', wire: 'a,b\nd,e\n', records: 3, specials: [{ line: 2, message: /unquoted newline found in data/, record: 'u\nv,1\r\n' }] },
  { name: 'csv: CR input, a marker in the middle rejected with its CR', format: 'csv', input: '1,a\r\\.\r2,b\r', wire: '1,a\n2,b\n', records: 3, specials: [{ line: 2, message: MIDDLE, record: '\\.\r' }] },
  { name: 'csv: a quoted line holding \\.', format: 'csv', input: '1,"x\n\\.\ny"\n2,z\n', wire: '1,"x\n\\.\ny"\n2,z\n', records: 2 },
];

describe('text, .tbl and CSV framed as COPY reads them, wherever the input is cut', () => {
  for (const c of cases) {
    it(c.name, async () => {
      const buf = Buffer.from(c.input, 'latin1');
      const len = buf.length;
      for (let cut = 0; cut <= len; cut++) {
        for (const [chunkBytes, inPlace] of [[1, false], [2, false], [3, false], [5, false], [8, false], [len, false], [1 << 20, false], ...(c.format === 'tbl' ? [[1, true], [3, true], [8, true], [len, true]] as const : [])] as const) {
          const at = `cut at ${cut}, chunks of ${chunkBytes}${inPlace ? ', framed in place' : ''}`;
          const chunks = await frameAll(c.format, buf, [cut], chunkBytes, inPlace);
          assert.equal(Buffer.concat(chunks.map((ch) => ch.data)).toString('latin1'), c.wire, at);
          assert.equal(chunks.reduce((s, ch) => s + ch.records, 0), c.records, `${at}: records`);
          const specials = chunks.filter((ch) => ch.unframable !== undefined);
          assert.equal(specials.length, (c.specials ?? []).length, `${at}: records that never reach the server`);
          for (const [i, s] of (c.specials ?? []).entries()) {
            const got = specials[i]!;
            assert.equal(got.location.firstLine, s.line, `${at}: line`);
            assert.equal(got.unframable!.skip === true, s.skip === true, `${at}: skipped or rejected`);
            assert.match(got.unframable!.message, s.message, at);
            assert.equal(got.source!.toString('latin1'), s.record, `${at}: the record as read`);
            assert.equal(got.data.length, 0);
          }
          let offset = 0;
          let line = 1;
          for (const ch of chunks) {
            assert.equal(ch.location.byteOffset, offset, `${at}: chunks follow each other`);
            assert.equal(ch.location.firstLine, line, `${at}: lines follow each other`);
            offset += ch.location.byteLength;
            line += ch.lines;
          }
          assert.equal(offset, len, `${at}: chunks cover every byte once`);
          // A chunk's records, split again (isolating a bad row), are the records framed.
          for (const ch of chunks) {
            if (ch.unframable !== undefined) continue;
            const records = new ChunkRecords(ch, framerForTarget(ch.target), ch.source);
            assert.equal(records.count, ch.records, `${at}: records split again`);
            assert.equal(Buffer.concat(Array.from({ length: records.count }, (_, i) => records.slice(i, i + 1).data)).toString('latin1'), ch.data.toString('latin1'), `${at}: re-framed`);
          }
        }
      }
    });
  }

  it('a final marker at the end of a byte range that is not the end of the file is rejected', () => {
    const framed = new LineFramer({ lineEnd: 'nl', endsInput: false }).frame(Buffer.from('\\.\n'), true);
    assert.equal(framed.unframable?.skip, undefined);
    assert.match(framed.unframable!.message, MIDDLE);
    const last = new LineFramer({ lineEnd: 'nl' }).frame(Buffer.from('\\.\n'), true);
    assert.equal(last.unframable?.skip, true);
  });

  it('the line ending is the first line\'s, escaped and quoted ones aside', () => {
    assert.equal(detectLineEnd(Buffer.from('a\\\rb\r\nc'), true), 'crnl');
    assert.equal(detectLineEnd(Buffer.from('a\\\nb\rc'), true), 'cr');
    assert.equal(detectLineEnd(Buffer.from('a\r'), false), undefined);
    assert.equal(detectLineEnd(Buffer.from('a\r'), true), 'cr');
    assert.equal(detectLineEnd(Buffer.from('"a\r\n"\nb'), true, { quote: 0x22, escape: 0x22 }), 'nl');
    assert.equal(detectLineEnd(Buffer.from('abc'), true), 'nl');
  });

  it('byte ranges of a file are cut where records end, not at an escaped newline', () => {
    const file = Buffer.from('aaaa\\\nbbbb\ncc\\\\\ndd\n');
    const next = (pos: number): number => {
      let i = file.indexOf(0x0a, pos);
      while (i > 0 && file[i - 1] === 0x5c && (file.subarray(0, i).toString().match(/\\+$/)![0].length & 1) === 1) i = file.indexOf(0x0a, i + 1);
      return i;
    };
    for (let parts = 1; parts <= file.length; parts++) {
      for (const r of alignRanges(file.length, parts, next)) assert.ok(r.start === 0 || r.start === 11 || r.start === 16, `a range starts at ${r.start}`);
    }
  });

  it('a header, --skip and --limit count records as the framers do, wherever the input is cut', () => {
    const inputs: { input: string; csv?: boolean; ends: number[] }[] = [
      { input: 'h\\\nx\ta\\\\\nb\n', ends: [9, 11] },
      { input: 'h\rx\\\ry\rz', ends: [2, 7] },
      { input: 'h,"a\rb"\rc\r', csv: true, ends: [8, 10] },
    ];
    for (const c of inputs) {
      const buf = Buffer.from(c.input);
      for (let cut = 0; cut <= buf.length; cut++) {
        const ends = new RecordEnds(c.csv ? { quote: 0x22, escape: 0x22 } : undefined, { text: !c.csv, lineEnd: detectLineEnd(buf, true, c.csv ? { quote: 0x22, escape: 0x22 } : undefined) });
        const found: number[] = [];
        for (const [from, block] of [[0, buf.subarray(0, cut)], [cut, buf.subarray(cut)]] as const) {
          let at = 0;
          for (;;) {
            const end = ends.next(block, at);
            if (end < 0) break;
            found.push(from + end);
            at = end;
          }
        }
        assert.deepEqual(found, c.ends, `${JSON.stringify(c.input)} cut at ${cut}`);
      }
    }
  });
});
