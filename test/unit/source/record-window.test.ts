import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compressionFromFileName, formatFromFileName, tableFromFileName } from '../../../src/input/formats.js';
import { decoderFor, parseEncoding } from '../../../src/input/encodings.js';
import { dropBom, dropRecords, RecordEnds, takeRecords } from '../../../src/input/record-window.js';
import { quoteLiteral } from '../../../src/core/literals.js';
import { copyOptions } from '../../../src/wire/wire-format.js';

async function* blocksOf(buf: Buffer, cuts: number[]): AsyncGenerator<Buffer> {
  let at = 0;
  for (const c of [...cuts, buf.length]) {
    yield buf.subarray(at, c);
    at = c;
  }
}

async function concat(blocks: AsyncIterable<Buffer>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const b of blocks) parts.push(b);
  return Buffer.concat(parts).toString();
}

const csvEnds = (): RecordEnds => new RecordEnds({ quote: 0x22, escape: 0x22 });

describe('skip and limit cut exactly at record ends, wherever the blocks are cut', () => {
  const cases: { name: string; input: string; ends: () => RecordEnds; drop: number; take: number; dropped: string; kept: string; lines: number }[] = [
    { name: 'lines', input: 'h\na\nb\nc\nd', ends: () => new RecordEnds(), drop: 2, take: 2, dropped: 'h\na\n', kept: 'b\nc\n', lines: 2 },
    { name: 'lines, limit past the end', input: 'h\na\nb', ends: () => new RecordEnds(), drop: 1, take: 9, dropped: 'h\n', kept: 'a\nb', lines: 1 },
    { name: 'CSV with quoted newlines', input: '"x\ny",1\n"a""\n",2\nb,3\nc,4\n', ends: csvEnds, drop: 1, take: 2, dropped: '"x\ny",1\n', kept: '"a""\n",2\nb,3\n', lines: 2 },
    { name: 'drop everything', input: 'a\nb\n', ends: () => new RecordEnds(), drop: 5, take: 1, dropped: 'a\nb\n', kept: '', lines: 2 },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const buf = Buffer.from(c.input);
      for (let cut = 0; cut <= buf.length; cut++) {
        for (const cut2 of [cut, Math.min(buf.length, cut + 3)]) {
          const d = await dropRecords(blocksOf(buf, [cut, cut2]), c.drop, c.ends(), true);
          assert.equal(d.head?.toString(), c.dropped, `cut ${cut}`);
          assert.equal(d.bytes, Buffer.byteLength(c.dropped));
          assert.equal(d.lines, c.lines);
          assert.equal(await concat(takeRecords(d.rest, c.take, c.ends())), c.kept, `cut ${cut}`);
        }
      }
    });
  }
  it('takeRecords stops reading after the limit', async () => {
    let pulled = 0;
    async function* endless(): AsyncGenerator<Buffer> {
      for (;;) {
        pulled++;
        yield Buffer.from('x\n');
      }
    }
    assert.equal(await concat(takeRecords(endless(), 3, new RecordEnds())), 'x\nx\nx\n');
    assert.equal(pulled, 3);
  });
  it('a UTF-8 byte-order mark is dropped, even split across blocks; other bytes are kept', async () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf, 0x61, 0x0a]);
    for (const cuts of [[], [1], [2], [1, 2], [4]]) {
      const r = await dropBom(blocksOf(bom, cuts));
      assert.equal(r.bytes, 3);
      assert.equal(await concat(r.rest), 'a\n');
    }
    const none = await dropBom(blocksOf(Buffer.from('ab'), [1]));
    assert.equal(none.bytes, 0);
    assert.equal(await concat(none.rest), 'ab');
  });
});

describe('encodings', () => {
  it('names and aliases', () => {
    assert.equal(parseEncoding('windows-1252'), 'WIN1252');
    assert.equal(parseEncoding('Latin1'), 'LATIN1');
    assert.equal(parseEncoding('utf-8'), 'UTF8');
    assert.equal(parseEncoding('utf16'), undefined);
  });
  it('WIN1252 0x80–0x9F are the Windows characters; LATIN1 is ISO-8859-1', () => {
    const bytes = Buffer.from([0x80, 0x85, 0x8a, 0x8c, 0x91, 0x92, 0x93, 0x94, 0x96, 0x97, 0x99, 0x9f, 0xe9, 0x81]);
    assert.equal(decoderFor('WIN1252')(bytes), '€…ŠŒ‘’“”–—™Ÿé\u0081');
    assert.equal(decoderFor('LATIN1')(Buffer.from([0x80, 0xe9, 0xff])), '\u0080éÿ');
    assert.equal(decoderFor('LATIN9')(Buffer.from([0xa4])), '€');
    assert.equal(decoderFor('WIN1251')(Buffer.from([0xc0])), 'А');
  });
});

describe('file names and COPY options', () => {
  const names: [string, string | undefined, string | undefined, string | undefined][] = [
    ['lineitem.tbl.gz', 'tbl', 'lineitem', 'gzip'],
    ['lineitem.tbl.3.gz', 'tbl', 'lineitem', 'gzip'],
    ['events.ndjson', 'ndjson', 'events', undefined],
    ['events.jsonl.GZ', 'ndjson', 'events', 'gzip'],
    ['dump.json', 'json', 'dump', undefined],
    ['x.gz', undefined, undefined, 'gzip'],
  ];
  for (const [file, format, table, compression] of names) {
    it(`${file} → ${format}, ${table}, ${compression}`, () => {
      assert.equal(formatFromFileName(file), format);
      assert.equal(tableFromFileName(file), table);
      assert.equal(compressionFromFileName(file), compression);
    });
  }
  it('COPY option values are quoted literals', () => {
    assert.equal(quoteLiteral("it's"), "'it''s'");
    assert.equal(quoteLiteral('\\N'), "E'\\\\N'");
    assert.equal(copyOptions({ format: 'csv', delimiter: ';', null: "'); DROP TABLE x; --", quote: "'", escape: '\\' }), "FORMAT csv, DELIMITER ';', NULL '''); DROP TABLE x; --', QUOTE '''', ESCAPE E'\\\\'");
  });
});
