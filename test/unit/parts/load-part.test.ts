import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { alignRanges } from '../../../src/input/byte-ranges.js';
import { parsePart, partLabel, shareBounds, withinShare } from '../../../src/input/load-part.js';
import { partRejectPath } from '../../../src/load/part-load.js';

const newlineFinder = (text: string) => (pos: number): number => text.indexOf('\n', pos);

describe('--part K/N', () => {
  it('parses K/N and names the flag and the value when it is wrong', () => {
    assert.deepEqual(parsePart('2/3'), { k: 2, n: 3 });
    assert.deepEqual(parsePart(' 1 / 1 '), { k: 1, n: 1 });
    for (const bad of ['0/3', '4/3', '3', 'a/b', '1/0', '-1/2', '1.5/3']) {
      assert.match(String(parsePart(bad)), new RegExp(`--part.*${bad.replace(/[./]/g, '\\$&')}`));
    }
    assert.equal(partLabel({ k: 2, n: 3 }), '2/3');
  });

  it('the N shares tile the file at line starts, each computed on its own, and agree with alignRanges', () => {
    const lines = ['a', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', 'cc', 'd', 'eeeeeeee', 'f', 'gggggggggggggggggggggg', 'h'];
    for (let count = 1; count <= lines.length; count++) {
      const text = lines.slice(0, count).map((l) => `${l}\n`).join('');
      for (let n = 1; n <= 12; n++) {
        const shares = Array.from({ length: n }, (_, i) => shareBounds(text.length, { k: i + 1, n }, newlineFinder(text)));
        let at = 0;
        for (const s of shares) {
          assert.equal(s.start, at, `n=${n}: shares must be contiguous`);
          assert.ok(s.start === 0 || text[s.start - 1] === '\n', 'a share starts at a line start');
          at = s.end;
        }
        assert.equal(at, text.length);
        assert.deepEqual(shares.filter((s) => s.end > s.start), alignRanges(text.length, n, newlineFinder(text)));
      }
    }
  });

  it('a share clips what is left to load; reject files get the part in their name', () => {
    assert.deepEqual(withinShare([{ start: 0, end: 10 }, { start: 20, end: 40 }], { start: 5, end: 25 }), [{ start: 5, end: 10 }, { start: 20, end: 25 }]);
    assert.deepEqual(withinShare([{ start: 0, end: 5 }], { start: 5, end: 9 }), []);
    assert.equal(partRejectPath('/d/lineitem.rejects', { k: 2, n: 3 }), '/d/lineitem.part2of3.rejects');
    assert.equal(partRejectPath('/d/bad.txt', { k: 1, n: 2 }), '/d/bad.txt.part1of2');
    assert.equal(partRejectPath('/d/lineitem.rejects', undefined), '/d/lineitem.rejects');
  });
});
