import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Chunk } from '../../../src/core/chunk.js';
import type { Sample } from '../../../src/metrics/series.js';
import { intervalBetween } from '../../../src/metrics/series.js';
import { formatProgress, percentDone, progressMode, progressReporter } from '../../../src/report/progress-line.js';

function sink(): { stream: NodeJS.WritableStream; text: () => string } {
  let text = '';
  const stream = { isTTY: false, write: (s: string) => ((text += s), true) } as unknown as NodeJS.WritableStream;
  return { stream, text: () => text };
}

const MB = 1024 * 1024;
function sample(over: Partial<Sample>): Sample {
  return { seconds: 0, rowsLoaded: 0, bytesLoaded: 0, rowsInTable: 0, heapBytes: 0, indexBytes: 0, walBytes: 0, checkpointsTimed: 0, checkpointsRequested: 0, heapBlocksRead: 0, heapBlocksHit: 0, indexBlocksRead: 0, indexBlocksHit: 0, clientCpuSeconds: 0, ...over };
}

const chunk = (bytes: number) => ({ chunk: { location: { byteLength: bytes } } as unknown as Chunk, rows: 0, result: { loaded: 0, skipped: 0 }, seconds: 0, counters: undefined as never });

describe('progress output when stderr is not a terminal', () => {
  it('picks the mode from the flags and the stream', () => {
    assert.equal(progressMode({}, { isTTY: true }), 'tty');
    assert.equal(progressMode({}, { isTTY: false }), 'lines');
    assert.equal(progressMode({}, {}), 'lines');
    assert.equal(progressMode({ quiet: true }, { isTTY: true }), 'quiet');
    assert.equal(progressMode({ json: true, quiet: true }, { isTTY: true }), 'json');
  });

  it('prints one plain line per sample, no escape codes, nothing on stdout', async () => {
    const err = sink();
    const out = sink();
    const p = progressReporter({ mode: 'lines', stream: err.stream, out: out.stream, totalRows: 1000 });
    await p.start?.({ inputs: [], totalBytes: 4 * MB, workers: 2, target: 'x', loadId: 'l', resumed: false });
    p.chunkLoaded?.({ ...chunk(MB), rows: 250 });
    const a = sample({});
    const b = sample({ seconds: 2, rowsLoaded: 500, bytesLoaded: 2 * MB, rowsInTable: 500, heapBytes: 3 * MB, indexBytes: MB, walBytes: 50_000, checkpointsRequested: 1 });
    p.sample?.({ sample: a, interval: undefined, index: 0 });
    p.sample?.({ sample: b, interval: intervalBetween(a, b), index: 1 });
    p.finish();
    const lines = err.text().split('\n');
    assert.equal(lines.length, 3, err.text());
    assert.equal(lines[0], '0.0s  0 rows 0.0% | table 0.0 MB + index 0.0 MB | 0 checkpoints');
    assert.equal(lines[1], '2.0s  500 rows 50.0% | 250 rows/s, 1.0 MB/s | table 3.0 MB + index 1.0 MB | WAL 100 B/row | 1 checkpoint');
    assert.equal(lines[2], '');
    assert.doesNotMatch(err.text(), /\x1b|\r/);
    assert.equal(out.text(), '');
  });

  it('--json: one NDJSON sample event per sample on stdout, nothing on stderr', async () => {
    const err = sink();
    const out = sink();
    const p = progressReporter({ mode: 'json', stream: err.stream, out: out.stream });
    await p.start?.({ inputs: [], totalBytes: undefined, workers: 1, target: 'x', loadId: 'l', resumed: false });
    const a = sample({});
    const b = sample({ seconds: 1, rowsLoaded: 10, rowsInTable: 10, walBytes: 1000 });
    p.sample?.({ sample: a, interval: undefined, index: 0 });
    p.sample?.({ sample: b, interval: intervalBetween(a, b), index: 1 });
    p.finish();
    const events = out.text().trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(events.length, 2);
    assert.deepEqual(events[0], { event: 'sample', index: 0, ...a, interval: null });
    assert.equal(events[1]!.event, 'sample');
    assert.equal(events[1]!.rowsLoaded, 10);
    assert.equal((events[1]!.interval as { rowsPerSecond: number }).rowsPerSecond, 10);
    assert.equal((events[1]!.interval as { walBytesPerRow: number }).walBytesPerRow, 100);
    assert.equal(err.text(), '');
  });

  it('--quiet prints nothing', async () => {
    const err = sink();
    const out = sink();
    const p = progressReporter({ mode: 'quiet', stream: err.stream, out: out.stream });
    await p.start?.({ inputs: [], totalBytes: 10, workers: 1, target: 'x', loadId: 'l', resumed: false });
    p.chunkLoaded?.({ ...chunk(5), rows: 5 });
    p.sample?.({ sample: sample({ seconds: 1 }), interval: undefined, index: 0 });
    p.sampleFailed?.(new Error('boom'));
    p.finish();
    assert.equal(err.text() + out.text(), '');
  });

  it('the bar text: percent from rows when the total is known, else from bytes; ETA at the average rate', () => {
    const base = { seconds: 10, rows: 250_000, bytes: 10 * MB, totalRows: 1_000_000, totalBytes: 80 * MB, rowsPerSecondNow: 20_000, heapBytes: 12 * MB, indexBytes: 5 * MB };
    assert.equal(formatProgress(base), '250,000 rows 25.0% | 20,000 rows/s now, 25,000 avg | 1.0 MB/s | ETA 30s | table 12 MB + index 5.0 MB');
    assert.equal(percentDone({ ...base, totalRows: undefined }), 12.5);
    assert.equal(formatProgress({ ...base, totalRows: undefined, totalBytes: undefined, heapBytes: undefined }), '250,000 rows | 20,000 rows/s now, 25,000 avg | 1.0 MB/s');
  });

  it('rows/s now: over the last seconds of chunks, the average until a second has passed', async () => {
    let now = 0;
    const texts: string[] = [];
    const err = sink();
    const p = progressReporter({ mode: 'lines', stream: err.stream, out: sink().stream, clock: () => now, totalRows: 100_000 });
    await p.start?.({ inputs: [], totalBytes: undefined, workers: 1, target: 'x', loadId: 'l', resumed: false });
    now = 10;
    p.chunkLoaded?.({ ...chunk(100), rows: 1000 });
    now = 20;
    p.chunkLoaded?.({ ...chunk(100), rows: 1000 });
    // 20 ms in: no "950,000 rows/s" from two chunks landing together; the average so far
    assert.equal(p.state().rowsPerSecondNow, 100_000);
    for (let t = 1000; t <= 10_000; t += 1000) {
      now = t;
      p.chunkLoaded?.({ ...chunk(100), rows: t <= 5000 ? 1000 : 4000 });
      texts.push(String(Math.round(p.state().rowsPerSecondNow)));
    }
    // the last 5 seconds ran at 4,000 rows/s
    assert.equal(texts.at(-1), '4000');
    p.finish();
  });
});
