import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultDecayBucket } from '../../../src/cli/decay-command.js';
import { buildProgram } from '../../../src/cli/main.js';
import { kneeSearchStart, DEFAULT_KNEE } from '../../../src/metrics/series.js';

describe('decay --bucket follows --rows', () => {
  it('keeps 250k for the default 10M rows and scales with --rows', () => {
    assert.equal(defaultDecayBucket(10_000_000), 250_000);
    assert.equal(defaultDecayBucket(500_000), 10_000);
    assert.equal(defaultDecayBucket(5_000_000), 100_000);
    assert.equal(defaultDecayBucket(2_000_000), 50_000);
    assert.equal(defaultDecayBucket(1_000), 25);
    assert.equal(defaultDecayBucket(10), 1);
  });

  it('leaves enough buckets to look for a knee at every row count', () => {
    for (const rows of [200, 999, 1_000, 12_345, 500_000, 777_777, 3_000_000, 10_000_000, 123_456_789]) {
      const bucket = defaultDecayBucket(rows);
      const buckets = Math.floor(rows / bucket);
      assert.ok(buckets > kneeSearchStart(DEFAULT_KNEE) + 2 * DEFAULT_KNEE.sustain, `${rows} rows: ${buckets} buckets of ${bucket}`);
      assert.ok(buckets <= 100, `${rows} rows: ${buckets} buckets of ${bucket}`);
      assert.match(String(bucket), /^(1|2|25|5)0*$/, `${rows} rows: bucket ${bucket} is not a readable number`);
    }
  });

  it('--bucket has no fixed default, so `decay --rows 500k` gets its own', () => {
    const decay = buildProgram().commands.find((c) => c.name() === 'decay')!;
    const bucket = decay.options.find((o) => o.long === '--bucket')!;
    assert.equal(bucket.defaultValue, undefined);
    decay.parseOptions(['--rows', '500k']);
    const flags = decay.opts<{ rows: number; bucket?: number }>();
    assert.equal(flags.rows, 500_000);
    assert.equal(flags.bucket ?? defaultDecayBucket(flags.rows), 10_000);
  });
});
