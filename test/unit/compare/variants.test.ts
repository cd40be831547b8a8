import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { median, summarize, variantTable, type VariantRun } from '../../../src/compare/run-compare.js';
import { DEFAULT_VARIANTS, parseVariants, type Variant } from '../../../src/compare/variants.js';
import { writerSpecFromFlags } from '../../../src/cli/writer-options.js';

describe('parseVariants', () => {
  const good: [string, Omit<Variant, 'label'>[]][] = [
    ['copy', [{ mode: 'copy' }]],
    [DEFAULT_VARIANTS, [{ mode: 'copy' }, { mode: 'insert', style: 'unnest' }, { mode: 'insert', style: 'values' }]],
    ['copy:w1,copy:w2', [{ mode: 'copy', workers: 1 }, { mode: 'copy', workers: 2 }]],
    ['insert', [{ mode: 'insert', style: 'unnest' }]],
    ['insert:unnest:b5000', [{ mode: 'insert', style: 'unnest', batchRows: 5000 }]],
    ['insert:values:w2:b1000', [{ mode: 'insert', style: 'values', workers: 2, batchRows: 1000 }]],
    ['insert:b100:row:c0', [{ mode: 'insert', style: 'row', batchRows: 100, commitEvery: 0 }]],
    [' copy , insert:row ', [{ mode: 'copy' }, { mode: 'insert', style: 'row' }]],
    ['copy:text,copy:binary:w2', [{ mode: 'copy', wire: 'text' }, { mode: 'copy', wire: 'binary', workers: 2 }]],
  ];
  for (const [spec, expected] of good) {
    it(`${JSON.stringify(spec)}`, () => {
      const got = parseVariants(spec).map(({ label: _label, ...rest }) => rest);
      assert.deepEqual(got, expected);
    });
  }
  it('labels are the entries as written', () => assert.deepEqual(parseVariants('copy:w2, insert:values').map((v) => v.label), ['copy:w2', 'insert:values']));

  const bad: [string, RegExp][] = [
    ['', /no variants given/],
    ['copy,,insert', /empty entry/],
    ['upsert', /got `upsert`: unknown mode `upsert`/],
    ['copy:unnest', /`unnest` is an INSERT style; COPY has none/],
    ['copy:b100', /`b100` \(batch rows\) applies only to insert/],
    ['copy:c1', /applies only to insert/],
    ['insert:w0', /workers must be at least 1, got `w0`/],
    ['insert:b0', /batch rows must be at least 1/],
    ['insert:fast', /unknown part `fast`/],
    ['insert:w', /unknown part `w`/],
    ['insert:w2:w3', /workers given twice/],
    ['insert:row:values', /two INSERT styles/],
    ['copy,copy', /the same variant twice/],
    ['insert,insert:unnest', /the same variant twice/],
    ['insert:binary', /`binary` is a COPY wire; INSERT has none/],
    ['copy:binary:text', /two wires/],
    ['copy,copy:auto', /the same variant twice/],
  ];
  for (const [spec, message] of bad) {
    it(`rejects ${JSON.stringify(spec)}`, () => {
      assert.throws(() => parseVariants(spec), (e: Error & { code?: string; details?: { hint?: string } }) => {
        assert.match(e.message, /^Expected `--variants` to list load variants/);
        assert.match(e.message, message);
        assert.equal(e.code, 'bad-option');
        assert.match(e.details?.hint ?? '', /copy or insert/);
        return true;
      });
    });
  }
});

describe('compare statistics', () => {
  it('median of odd and even counts', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.ok(Number.isNaN(median([])));
  });
  const run = (round: number, rowsPerSecond: number, walBytes = 1000): VariantRun => ({
    round, rows: 100, skipped: 0, bytes: 1 << 20, seconds: 100 / rowsPerSecond, rowsPerSecond, mbPerSecond: 1, walBytes, clientCpuSeconds: 0.5, tableBytes: 8192,
  });
  it('ratios to the fastest median and paired ratios to the first variant', () => {
    const variants = parseVariants('copy,insert:unnest');
    const results = summarize({ variants, workers: 2 }, ['t_cmp1', 't_cmp2'], [
      [run(1, 100), run(2, 200), run(3, 300)],
      [run(1, 50), run(2, 50, 3000), run(3, 200)],
    ]);
    assert.equal(results[0]!.median.rowsPerSecond, 200);
    assert.equal(results[1]!.median.rowsPerSecond, 50);
    assert.equal(results[0]!.ratioToFastest, 1);
    assert.equal(results[1]!.ratioToFastest, 0.25);
    // per round: 0.5, 0.25, 0.667 → median 0.5
    assert.equal(results[1]!.pairedRatioToFirst, 0.5);
    assert.equal(results[1]!.min.rowsPerSecond, 50);
    assert.equal(results[1]!.max.rowsPerSecond, 200);
    assert.equal(results[1]!.median.walBytesPerRow, 10);
    assert.equal(results[0]!.workers, 2);
  });
  it('variant tables stay within 63 bytes', () => {
    assert.equal(variantTable('lineitem', 0), 'lineitem_cmp1');
    const long = variantTable('x'.repeat(70), 11);
    assert.ok(Buffer.byteLength(long) <= 63);
    assert.ok(long.endsWith('_cmp12'));
  });
});

describe('load writer flags', () => {
  it('copy rejects INSERT-only flags, naming them', () => {
    assert.throws(() => writerSpecFromFlags({ mode: 'copy', batchRows: 10, onConflict: 'error' }), /`--batch-rows` applies only to --mode insert/);
    assert.throws(() => writerSpecFromFlags({ mode: 'copy', insertStyle: 'row', onConflict: 'error' }), /`--insert-style` applies only/);
    assert.throws(() => writerSpecFromFlags({ mode: 'copy', commitEvery: 0, onConflict: 'error' }), /`--commit-every` applies only/);
  });
  it('insert defaults to unnest with one transaction per chunk', () => {
    assert.deepEqual(writerSpecFromFlags({ mode: 'insert', onConflict: 'skip' }), { mode: 'insert', style: 'unnest', onConflict: 'skip' });
    assert.deepEqual(writerSpecFromFlags({ mode: 'insert', insertStyle: 'row', commitEvery: 0, batchRows: 7, onConflict: 'error' }), {
      mode: 'insert', style: 'row', batchRows: 7, commitEvery: 0, onConflict: 'error',
    });
  });
});
