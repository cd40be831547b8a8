import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { earlyLevel, findKnee, intervalBetween, intervalsOf, lowestShare, median, type Interval, type Sample } from '../../../src/metrics/series.js';
import { checkpointSql } from '../../../src/metrics/server-snapshot.js';

const MB = 1024 * 1024;

function sample(over: Partial<Sample>): Sample {
  return {
    seconds: 0,
    rowsLoaded: 0,
    bytesLoaded: 0,
    rowsInTable: 0,
    heapBytes: 0,
    indexBytes: 0,
    walBytes: 0,
    checkpointsTimed: 0,
    checkpointsRequested: 0,
    heapBlocksRead: 0,
    heapBlocksHit: 0,
    indexBlocksRead: 0,
    indexBlocksHit: 0,
    clientCpuSeconds: 0,
    ...over,
  };
}

/** Intervals of equal row buckets at the given rates. */
function curve(rates: readonly number[], bucket = 100_000): Interval[] {
  const samples: Sample[] = [sample({})];
  let t = 0;
  rates.forEach((r, k) => {
    t += bucket / r;
    const rows = bucket * (k + 1);
    samples.push(sample({ seconds: t, rowsLoaded: rows, rowsInTable: rows, heapBytes: rows * 50, indexBytes: rows * 20 }));
  });
  return intervalsOf(samples);
}

describe('interval rates', () => {
  it('derives rows/s, MB/s, WAL bytes per row, checkpoints, hit ratio and CPU from two samples', () => {
    const a = sample({ seconds: 10, rowsLoaded: 1000, bytesLoaded: 1 * MB, rowsInTable: 6000, walBytes: 500_000, checkpointsTimed: 1, indexBlocksRead: 10, indexBlocksHit: 90, clientCpuSeconds: 2 });
    const b = sample({ seconds: 12, rowsLoaded: 5000, bytesLoaded: 5 * MB, rowsInTable: 10_000, walBytes: 900_000, checkpointsTimed: 1, checkpointsRequested: 2, indexBlocksRead: 40, indexBlocksHit: 150, heapBytes: 7, indexBytes: 3, clientCpuSeconds: 3 });
    assert.deepEqual(intervalBetween(a, b), {
      endSeconds: 12,
      seconds: 2,
      fromRows: 6000,
      toRows: 10_000,
      toRowsStreamed: 10_000,
      rows: 4000,
      rowsPerSecond: 2000,
      mbPerSecond: 2,
      walBytesPerRow: 100,
      checkpoints: 2,
      heapBlocksRead: 0,
      indexBlocksRead: 30,
      indexHitRatio: 60 / 90,
      clientCpu: 0.5,
      heapBytes: 7,
      indexBytes: 3,
    });
  });

  it('leaves WAL per row and hit ratio undefined when nothing happened', () => {
    const i = intervalBetween(sample({ seconds: 1 }), sample({ seconds: 2 }));
    assert.equal(i.walBytesPerRow, undefined);
    assert.equal(i.indexHitRatio, undefined);
    assert.equal(i.rowsPerSecond, 0);
  });

  it('gives one interval fewer than samples and skips samples taken at the same instant', () => {
    const s = [sample({ seconds: 0 }), sample({ seconds: 1, rowsLoaded: 10 }), sample({ seconds: 1, rowsLoaded: 10 }), sample({ seconds: 3, rowsLoaded: 30 })];
    assert.deepEqual(
      intervalsOf(s).map((i) => [i.endSeconds, i.rows]),
      [
        [1, 10],
        [3, 20],
      ],
    );
    assert.deepEqual(intervalsOf([]), []);
    assert.deepEqual(intervalsOf([sample({})]), []);
  });
});

describe('median', () => {
  const cases: [number[], number | undefined][] = [
    [[], undefined],
    [[5], 5],
    [[3, 1, 2], 2],
    [[4, 1, 3, 2], 2.5],
  ];
  for (const [values, expected] of cases) it(`median(${JSON.stringify(values)}) = ${expected}`, () => assert.equal(median(values), expected));
});

describe('knee detection', () => {
  const cases: { name: string; rates: number[]; knee: number | undefined; share?: number }[] = [
    { name: 'flat curve: no knee', rates: [100, 100, 100, 100, 100, 100], knee: undefined },
    { name: 'a cliff after four buckets', rates: [100, 110, 90, 100, 30, 25, 20], knee: 4, share: 0.3 },
    { name: 'one slow bucket (a checkpoint) is not a knee', rates: [100, 100, 100, 40, 100, 100], knee: undefined },
    { name: 'the slow bucket before the real knee is skipped', rates: [100, 100, 100, 40, 100, 45, 45, 40], knee: 5 },
    { name: 'exactly half is not below half', rates: [100, 100, 100, 50, 50, 50], knee: undefined },
    { name: 'a drop in the last bucket counts on its own', rates: [100, 100, 100, 90, 10], knee: 4 },
    { name: 'gradual decay crosses half at bucket 6', rates: [100, 100, 100, 80, 65, 55, 49, 40, 30], knee: 6 },
    { name: 'too few buckets', rates: [100, 100, 10], knee: undefined },
    { name: 'a slow first bucket (start-up) is left out of the early level', rates: [20, 100, 100, 100, 45, 40], knee: 4 },
    { name: 'the early level is the median of buckets 2–4', rates: [500, 100, 300, 200, 110, 105], knee: undefined },
    { name: 'a knee cannot come before bucket 5', rates: [100, 100, 100, 10, 10, 10], knee: 4 },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const intervals = curve(c.rates);
      const knee = findKnee(intervals);
      assert.equal(knee?.index, c.knee);
      if (knee) {
        assert.equal(knee.fromRows, c.knee! * 100_000);
        assert.equal(knee.toRows, (c.knee! + 1) * 100_000);
        assert.equal(knee.heapBytes, (c.knee! + 1) * 100_000 * 50);
        assert.equal(knee.indexBytes, (c.knee! + 1) * 100_000 * 20);
        assert.ok(Math.abs(knee.rowsPerSecond - c.rates[c.knee!]!) < 1e-6);
        if (c.share !== undefined) assert.ok(Math.abs(knee.share - c.share) < 1e-9);
      }
    });
  }

  it('takes its thresholds as options', () => {
    const intervals = curve([100, 100, 100, 70, 70]);
    assert.equal(findKnee(intervals), undefined);
    assert.equal(findKnee(intervals, { skip: 0, earlyIntervals: 3, fraction: 0.8, sustain: 2 })?.index, 3);
    assert.equal(findKnee(intervals, { skip: 1, earlyIntervals: 3, fraction: 0.8, sustain: 2 })?.index, 4);
    assert.ok(Math.abs(earlyLevel(curve([10, 30, 20]), { skip: 0, earlyIntervals: 3, fraction: 0.5, sustain: 1 })! - 20) < 1e-9);
    assert.ok(Math.abs(earlyLevel(curve([10, 30, 20]))! - 25) < 1e-9, 'the first bucket is left out by default');
  });

  it('reports the slowest bucket when there is no knee', () => {
    const low = lowestShare(curve([100, 100, 100, 80, 60, 90]))!;
    assert.equal(low.index, 4);
    assert.ok(Math.abs(low.share - 0.6) < 1e-9);
  });
});

describe('checkpoint counters by server version', () => {
  it('reads pg_stat_checkpointer from 17 on and pg_stat_bgwriter before', () => {
    assert.match(checkpointSql(180001), /pg_stat_checkpointer/);
    assert.match(checkpointSql(170000), /num_timed.*num_requested/);
    assert.match(checkpointSql(160004), /pg_stat_bgwriter/);
    assert.match(checkpointSql(150010), /checkpoints_timed.*checkpoints_req/);
  });
});
