import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeSampleEvery, parseSampleEvery } from '../../../src/metrics/sample-every.js';
import { parseSampleEveryFlag } from '../../../src/cli/observe-options.js';

describe('--sample-every', () => {
  const good: [string, unknown][] = [
    ['1s', { ms: 1000 }],
    ['500ms', { ms: 500 }],
    ['2.5s', { ms: 2500 }],
    ['1min', { ms: 60_000 }],
    ['500k', { rows: 500_000 }],
    ['1M', { rows: 1_000_000 }],
    ['250000', { rows: 250_000 }],
    ['1.5M', { rows: 1_500_000 }],
  ];
  for (const [text, expected] of good) it(`${text} → ${JSON.stringify(expected)}`, () => assert.deepEqual(parseSampleEvery(text), expected));

  const bad: [string, RegExp][] = [
    ['1m', /ambiguous/],
    ['fast', /a duration such as 1s/],
    ['5ms', /at least 10ms/],
    ['0k', /at least 1 row/],
    ['3 weeks', /duration/],
  ];
  for (const [text, message] of bad) {
    it(`rejects ${JSON.stringify(text)} naming the flag and the value`, () => {
      assert.match(String(parseSampleEvery(text)), message);
      assert.throws(() => parseSampleEveryFlag('--sample-every', text), (e: Error) => e.message.includes('`--sample-every`') && e.message.includes(`\`${text}\``));
    });
  }
  it('off turns sampling off', () => assert.equal(parseSampleEveryFlag('--sample-every', 'off'), 'off'));
  it('describes itself', () => {
    assert.equal(describeSampleEvery({ ms: 2000 }), '2s');
    assert.equal(describeSampleEvery({ ms: 250 }), '250ms');
    assert.equal(describeSampleEvery({ rows: 250_000 }), '250,000 rows');
  });
});
