import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeCents, writeUint, writeUintPadded } from '../../../src/datasets/dbt3/byte-writer.js';
import { RowRng } from '../../../src/datasets/dbt3/prng.js';

function text(write: (buf: Uint8Array, pos: number) => number): string {
  const buf = Buffer.alloc(64, 0x23);
  const end = write(buf, 3);
  assert.equal(buf[2], 0x23, 'wrote nothing before pos');
  assert.equal(buf[end], 0x23, 'wrote nothing past the returned position');
  return buf.subarray(3, end).toString('latin1');
}

describe('byte writer', () => {
  const UINTS = [0, 1, 9, 10, 99, 100, 101, 999, 1000, 65535, 999_999_999, 1_000_000_000, 4_294_967_295, 4_294_967_296, 6_000_000_000, 180_000_000_000, 2 ** 53 - 1];
  for (const n of UINTS) {
    it(`writes ${n}`, () => assert.equal(text((b, p) => writeUint(b, p, n)), String(n)));
  }

  const PADDED = [
    [1, 9, '000000001'],
    [123456789, 9, '123456789'],
    [1_000_000_000, 9, '1000000000'],
    [15_000_000_000, 9, '15000000000'],
    [0, 3, '000'],
  ] as const;
  for (const [n, width, expected] of PADDED) {
    it(`pads ${n} to ${width} like %0${width}d`, () => assert.equal(text((b, p) => writeUintPadded(b, p, n, width)), expected));
  }

  const CENTS = [
    [0, '0.00'], [5, '0.05'], [10, '0.10'], [100, '1.00'], [12340, '123.40'], [-1, '-0.01'], [-99999, '-999.99'], [999999, '9999.99'], [1049500000, '10495000.00'],
  ] as const;
  for (const [cents, expected] of CENTS) {
    it(`writes ${cents} cents as ${expected}`, () => assert.equal(text((b, p) => writeCents(b, p, cents)), expected));
  }
});

describe('row PRNG', () => {
  it('gives the same numbers for the same (seed, stream, row) and others otherwise', () => {
    const draw = (seed: number, stream: number, row: number): number[] => {
      const rng = new RowRng().seed(seed, stream, row);
      return Array.from({ length: 8 }, () => rng.next());
    };
    assert.deepEqual(draw(1, 2, 3), draw(1, 2, 3));
    assert.notDeepEqual(draw(1, 2, 3), draw(1, 2, 4));
    assert.notDeepEqual(draw(1, 2, 3), draw(1, 3, 3));
    assert.notDeepEqual(draw(1, 2, 3), draw(2, 2, 3));
    assert.notDeepEqual(draw(1, 2, 2 ** 32 + 3), draw(1, 2, 3), 'the high bits of a row index count');
  });

  it('draws integers in range, every value reachable, close to uniform', () => {
    const rng = new RowRng();
    const counts = new Array<number>(7).fill(0);
    for (let row = 0; row < 70_000; row++) {
      const v = rng.seed(9, 1, row).int(1, 7);
      assert.ok(Number.isInteger(v) && v >= 1 && v <= 7);
      counts[v - 1]!++;
    }
    for (const c of counts) assert.ok(Math.abs(c - 10_000) < 500, `${counts}`);
    for (let i = 0; i < 10_000; i++) {
      const v = rng.int(-99999, 999999);
      assert.ok(v >= -99999 && v <= 999999);
      const big = rng.int(1, 6_000_000_000);
      assert.ok(Number.isInteger(big) && big >= 1 && big <= 6_000_000_000);
    }
  });
});
