import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_SPACING, halveSamples, MIN_CURVE_POINTS, SpacedSeries, spreadChunk, weighLastInterval, type Streamed } from '../../../src/metrics/sample-spacing.js';
import { intervalsOf, type Sample } from '../../../src/metrics/series.js';

function sample(seconds: number, rowsLoaded: number): Sample {
  return {
    seconds,
    rowsLoaded,
    bytesLoaded: rowsLoaded * 100,
    rowsInTable: rowsLoaded,
    heapBytes: rowsLoaded * 120,
    indexBytes: 0,
    walBytes: rowsLoaded * 150,
    checkpointsTimed: 0,
    checkpointsRequested: 0,
    heapBlocksRead: 0,
    heapBlocksHit: 0,
    indexBlocksRead: 0,
    indexBlocksHit: 0,
    clientCpuSeconds: seconds / 2,
  };
}

/**
 * A load of `seconds` at `rate` rows/s sampled as the sampler does: the timer ticks every
 * `tickMs` of the series, the first and last samples always kept. Returns the series and
 * how many samples were taken (each one a query to the server).
 */
function simulate(seconds: number, rate = 300_000, everyMs = 1000): { samples: readonly Sample[]; taken: number; series: SpacedSeries } {
  const series = new SpacedSeries(DEFAULT_SPACING, everyMs);
  series.offer(sample(0, 0), true);
  let taken = 1;
  let t = 0;
  for (;;) {
    t += series.tickMs / 1000;
    if (t >= seconds) break;
    series.offer(sample(t, Math.floor(t * rate)));
    taken++;
  }
  series.offer(sample(seconds, Math.floor(seconds * rate)), true);
  series.finish();
  return { samples: series.samples, taken: taken + 1, series };
}

describe('sample spacing', () => {
  it('halving keeps the first and the last sample, and each merged interval holds the two it replaces', () => {
    const samples = [0, 1, 2, 3, 4, 5, 6].map((t, k) => sample(t, [0, 10, 30, 60, 100, 150, 210][k]!));
    const halved = halveSamples(samples);
    assert.deepEqual(halved.map((s) => s.seconds), [0, 2, 4, 6]);
    assert.deepEqual(intervalsOf(halved).map((i) => i.rowsPerSecond), [15, 35, 55]);
    // an even count: the last one stays, after the last even one
    assert.deepEqual(halveSamples(samples.slice(0, 6)).map((s) => s.seconds), [0, 2, 4, 5]);
  });

  it('a 4-second load has at least 30 points; a 1-second one fewer (its report says it was too short)', () => {
    assert.ok(intervalsOf(simulate(1).samples).length < MIN_CURVE_POINTS);
    const { samples } = simulate(4);
    assert.ok(intervalsOf(samples).length >= MIN_CURVE_POINTS, `${intervalsOf(samples).length} intervals`);
  });

  it('an hour-long load keeps a bounded series, evenly spaced, and is sampled less often as it goes', () => {
    const { samples, taken, series } = simulate(3600);
    assert.ok(samples.length <= DEFAULT_SPACING.maxSamples, `${samples.length} samples kept`);
    const intervals = intervalsOf(samples);
    assert.ok(intervals.length >= MIN_CURVE_POINTS, `${intervals.length} intervals`);
    // evenly spaced but the last (which the load's end cuts, then merges into the one before)
    const lengths = intervals.slice(0, -1).map((i) => i.seconds);
    assert.ok(Math.max(...lengths) / Math.min(...lengths) < 1.001, `spacing from ${Math.min(...lengths)} to ${Math.max(...lengths)} s`);
    assert.ok(series.spacingMs > 1000, `the spacing grew to ${series.spacingMs} ms`);
    // one sample a second (the listeners' every), and the start's short spacing adds a few hundred: not 40 a second
    assert.ok(taken < 3600 * 1.1, `${taken} samples taken`);
    // every interval at the load's rate: merging keeps rates exact
    for (const i of intervals) assert.ok(Math.abs(i.rowsPerSecond - 300_000) < 300_000 * 0.01, `${i.rowsPerSecond} rows/s`);
  });

  it('a listener interval shorter than the start spacing bounds the timer', () => {
    const series = new SpacedSeries(DEFAULT_SPACING, 10);
    assert.equal(series.tickMs, 10);
    // 1 s halved until it is about the start spacing: 125 ms, so the spacing doubles onto whole seconds
    assert.equal(new SpacedSeries(DEFAULT_SPACING, 1000).tickMs, 125);
  });
});

describe('the last, partial interval', () => {
  it('is merged into the one before when under half its length, so a few commits at the end make no spike', () => {
    // 300k rows/s, one sample a second; the load ends 0.05 s after the last tick with a chunk of 20k rows
    const samples = [sample(0, 0), sample(1, 300_000), sample(2, 600_000), sample(2.05, 620_000)];
    assert.equal(Math.round(intervalsOf(samples).at(-1)!.rowsPerSecond), 400_000, 'as sampled: a spike');
    const weighed = weighLastInterval(samples);
    assert.deepEqual(weighed.map((s) => s.seconds), [0, 1, 2.05]);
    const rates = intervalsOf(weighed).map((i) => Math.round(i.rowsPerSecond));
    assert.deepEqual(rates, [300_000, Math.round(320_000 / 1.05)]);
    assert.equal(weighed.at(-1)!.rowsLoaded, 620_000, 'the totals are the last sample\'s');
  });

  it('stays when it is at least half as long as the one before', () => {
    const samples = [sample(0, 0), sample(1, 300_000), sample(1.6, 480_000)];
    assert.deepEqual(weighLastInterval(samples), samples);
    assert.deepEqual(weighLastInterval(samples.slice(0, 2)), samples.slice(0, 2));
  });
});

describe('rows streamed', () => {
  it("a chunk's rows count over the time it was sent, so rates follow the rows and not the commits' steps", () => {
    // two workers, 8,000-row chunks of 1 s each, sampled every 0.25 s: as committed, the rate jumps between 0 and 32,000 rows/s
    const samples: Streamed[] = [0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2].map((t) => sample(t, t >= 2 ? 32_000 : t >= 1 ? 16_000 : 0));
    const committed = intervalsOf(samples).map((i) => i.rowsPerSecond);
    assert.deepEqual(committed, [0, 0, 0, 64_000, 0, 0, 0, 64_000]);
    for (const end of [1, 2]) for (let w = 0; w < 2; w++) spreadChunk(samples.filter((s) => s.seconds < end), { start: end - 1, end, rows: 8000, bytes: 800_000 });
    assert.deepEqual(intervalsOf(samples).map((i) => i.rowsPerSecond), [16_000, 16_000, 16_000, 16_000, 16_000, 16_000, 16_000, 16_000]);
    assert.deepEqual(intervalsOf(samples).map((i) => i.rows), [0, 0, 0, 16_000, 0, 0, 0, 16_000], "an interval's rows are those committed in it");
    assert.deepEqual(samples.map((s) => s.rowsLoaded), [0, 0, 0, 0, 16_000, 16_000, 16_000, 16_000, 32_000], 'rows loaded are the commits');
    assert.equal(samples[2]!.bytesStreamed, 800_000);
    assert.equal(samples.at(-1)!.rowsStreamed, undefined, 'a sample after every commit: streamed is loaded');
  });
});
