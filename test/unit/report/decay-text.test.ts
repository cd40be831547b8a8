import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { intervalsOf, type Sample } from '../../../src/metrics/series.js';
import { asciiDecayChart, decayTable, describeKnee, shortCount } from '../../../src/report/decay-text.js';

const MB = 1024 * 1024;
/** 250k-row buckets at the given rates; sizes grow with the rows. */
function curve(rates: readonly number[]) {
  const samples: Sample[] = [{ seconds: 0, rowsLoaded: 0, bytesLoaded: 0, rowsInTable: 0, heapBytes: 0, indexBytes: 0, walBytes: 0, checkpointsTimed: 0, checkpointsRequested: 0, heapBlocksRead: 0, heapBlocksHit: 0, indexBlocksRead: 0, indexBlocksHit: 0, clientCpuSeconds: 0 }];
  let t = 0;
  rates.forEach((r, k) => {
    t += 250_000 / r;
    const rows = 250_000 * (k + 1);
    samples.push({ ...samples[0]!, seconds: t, rowsLoaded: rows, rowsInTable: rows, bytesLoaded: rows * 45, heapBytes: (rows / 250_000) * 20 * MB, indexBytes: (rows / 250_000) * 8 * MB, walBytes: rows * 130, indexBlocksRead: k > 4 ? 1000 * k : 0, indexBlocksHit: 100_000 * (k + 1) });
  });
  return intervalsOf(samples);
}

describe('the decay verdict on the terminal', () => {
  it('names the knee with sizes as multiples of shared_buffers', () => {
    const { knee, text } = describeKnee(curve([90, 100, 100, 100, 100, 40, 35, 30]), 128 * MB, '128MB');
    assert.equal(knee?.index, 5);
    assert.equal(
      text,
      'knee at 1.25M–1.5M rows: 40 rows/s, 40% of the early 100 rows/s (median of buckets 2–4) (first bucket below 50% for 2 buckets in a row). ' +
        'There the table was 120 MB (0.94× shared_buffers) and the index 48 MB (0.38× shared_buffers); shared_buffers = 128MB.',
    );
  });

  it('says there is no knee, and the slowest bucket', () => {
    const { knee, text } = describeKnee(curve([100, 100, 100, 100, 80, 60, 90]), 16 * MB, '16MB');
    assert.equal(knee, undefined);
    assert.match(text, /^no knee: rows\/s never stayed below 50% of the early 100 rows\/s \(median of buckets 2–4\); the slowest bucket \(at 1\.5M rows\) ran at 60%\. At the end the table was 140 MB \(8\.75× shared_buffers\)/);
  });

  it('says when there are too few buckets', () => {
    assert.match(describeKnee(curve([100, 100]), 0, '?').text, /too few buckets to look for a knee \(2; need more than 4\)/);
  });

  it('draws one bar per bucket, scaled to the fastest, marking the knee', () => {
    const intervals = curve([50, 100, 100, 100, 100, 25, 25]);
    const chart = asciiDecayChart(intervals, describeKnee(intervals, 0, '?').knee, 20).split('\n');
    assert.equal(chart.length, 1 + 7);
    assert.equal(chart[0], ' rows | rows/s (full bar = 100)');
    assert.equal(chart[1], ' 250k | ##########           50');
    assert.equal(chart[2], ' 500k | #################### 100');
    assert.equal(chart[6], ' 1.5M | #####                25  <- knee');
    assert.ok(chart.every((l) => l.length <= 80));
    assert.equal(asciiDecayChart([]), '(no intervals to chart)');
  });

  it('the table has a row per bucket with the server columns', () => {
    const lines = decayTable(curve([100, 100, 100, 100, 100, 100])).split('\n');
    assert.match(lines[0]!, /^rows in table\s+rows\/s\s+MB\/s\s+WAL B\/row\s+table MB\s+index MB\s+ckpts\s+idx blks read\s+idx hit/);
    assert.equal(lines.length, 2 + 6);
    assert.match(lines[2]!, /^\s+250,000\s+100\s+0\.0\s+130\s+20\s+8\s+0\s+0\s+100\.0%/);
  });

  it('short counts', () => {
    assert.deepEqual([999, 1000, 250_000, 1_010_317, 5_000_000].map(shortCount), ['999', '1k', '250k', '1.01M', '5M']);
  });
});
