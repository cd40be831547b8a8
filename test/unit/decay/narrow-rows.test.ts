import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keyScrambler, narrowRow, narrowRows } from '../../../src/decay/narrow-rows.js';

async function allRows(rows: number, keys: 'sequential' | 'random', seed = 1): Promise<string[]> {
  const parts: Buffer[] = [];
  for await (const b of narrowRows({ rows, keys, seed })) parts.push(b);
  const text = Buffer.concat(parts).toString();
  return text === '' ? [] : text.replace(/\n$/, '').split('\n');
}

describe('narrow rows', () => {
  for (const n of [1, 2, 3, 17, 1000, 4096, 4097, 100_003]) {
    it(`the key scramble is a bijection of [0, ${n})`, () => {
      const f = keyScrambler(n, 7);
      const seen = new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        const k = f(i);
        assert.ok(Number.isInteger(k) && k >= 0 && k < n, `f(${i}) = ${k}`);
        assert.equal(seen[k], 0, `f(${i}) = ${k} twice`);
        seen[k] = 1;
      }
    });
  }

  it('random keys are shuffled, deterministic for a seed, different for another seed', async () => {
    const a = await allRows(2000, 'random', 1);
    const b = await allRows(2000, 'random', 1);
    const c = await allRows(2000, 'random', 2);
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
    const ids = a.map((r) => Number(r.split('\t')[0]));
    assert.deepEqual([...ids].sort((x, y) => x - y), Array.from({ length: 2000 }, (_, i) => i + 1));
    const inOrder = ids.filter((id, i) => i > 0 && id > ids[i - 1]!).length;
    assert.ok(inOrder > 800 && inOrder < 1200, `about half ascending steps in a shuffle, got ${inOrder}`);
    // the same key always makes the same row, whatever the order
    assert.deepEqual([...a].sort(), [...(await allRows(2000, 'sequential'))].sort());
  });

  it('sequential keys run 1..n; rows are three COPY text fields of about 45 bytes', async () => {
    const rows = await allRows(50_000, 'sequential');
    assert.equal(rows.length, 50_000);
    rows.forEach((r, i) => {
      const [id, n, s, extra] = r.split('\t');
      assert.equal(Number(id), i + 1);
      assert.match(n!, /^\d+$/);
      assert.match(s!, /^[a-z0-9]{30}$/);
      assert.equal(extra, undefined);
    });
    const width = narrowRow(12_345_678).length;
    assert.ok(width >= 40 && width <= 47, `a 10M-row data set's row is ~45 bytes, got ${width}`);
  });

  it('no rows for rows = 0', async () => assert.deepEqual(await allRows(0, 'random'), []));
});
