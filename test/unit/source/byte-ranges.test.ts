import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { alignRanges, readRange, splitFileIntoRanges } from '../../../src/input/byte-ranges.js';

function linesOf(buf: Buffer, ranges: { start: number; end: number }[]): string[] {
  return ranges.flatMap((r) => buf.subarray(r.start, r.end).toString().split('\n').filter((l, i, a) => !(l === '' && i === a.length - 1)));
}

describe('alignRanges', () => {
  const inputs = ['', 'a\n', 'a', 'abc\ndef\nghi\n', 'abc\ndef\nghi', '\n\n\n\n', 'x'.repeat(50) + '\nshort\n', 'a\nbb\nccc\ndddd\neeeee\nffffff\n'];
  for (const input of inputs) {
    it(`no line lost, split or doubled: ${JSON.stringify(input.slice(0, 20))}`, () => {
      const buf = Buffer.from(input);
      const expected = linesOf(buf, [{ start: 0, end: buf.length }]);
      for (let parts = 1; parts <= buf.length + 3; parts++) {
        const ranges = alignRanges(buf.length, parts, (pos) => buf.indexOf(10, pos));
        assert.ok(ranges.length <= parts);
        let at = 0;
        for (const r of ranges) {
          assert.equal(r.start, at, 'ranges are contiguous');
          assert.ok(r.start === 0 || buf[r.start - 1] === 10, 'each range starts a line');
          at = r.end;
        }
        assert.equal(at, buf.length);
        assert.deepEqual(linesOf(buf, ranges), expected, `${parts} parts`);
      }
    });
  }
});

describe('file ranges', () => {
  it('splitFileIntoRanges + readRange give back the file', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-ranges-'));
    const file = path.join(dir, 'f.tbl');
    const content = Array.from({ length: 5000 }, (_, i) => `${i}|${'y'.repeat(i % 97)}|`).join('\n') + '\n';
    await fs.writeFile(file, content);
    const fh = await fs.open(file, 'r');
    try {
      for (const parts of [1, 2, 3, 7, 64]) {
        const ranges = await splitFileIntoRanges(fh, content.length, parts);
        const pieces: Buffer[] = [];
        for (const r of ranges) for await (const b of readRange(fh, r, 1000)) pieces.push(b);
        assert.equal(Buffer.concat(pieces).toString(), content);
      }
    } finally {
      await fh.close();
      await fs.rm(dir, { recursive: true });
    }
  });
});
