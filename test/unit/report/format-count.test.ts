import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatCount } from '../../../src/core/format-count.js';

describe('formatCount', () => {
  it('groups digits by three with commas, as en-US does', () => {
    for (const n of [0, 7, 42, 999, 1000, 1001, 12_345, 999_999, 1_000_000, 6_001_274, 123_456_789_012, -1, -1234, -1_000_000, Number.MAX_SAFE_INTEGER]) {
      assert.equal(formatCount(n), n.toLocaleString('en-US'), String(n));
    }
  });

  it('rounds to a whole number first', () => {
    assert.equal(formatCount(1234.4), '1,234');
    assert.equal(formatCount(1234.5), '1,235');
    assert.equal(formatCount(999_999.6), '1,000,000');
    assert.equal(formatCount(0.2), '0');
  });
});
