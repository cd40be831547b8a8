import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Sample } from '../../../src/metrics/series.js';
import { intervalsOf } from '../../../src/metrics/series.js';
import { NO_WAITS } from '../../../src/metrics/wait-classes.js';
import { waitClassTable } from '../../../src/report/decay-text.js';
import { makeReport, makeSeries } from '../../../src/report/report-data.js';
import { reportHtml } from '../../../src/report/report-html.js';
import { formatDiagnosis } from '../../../src/report/summary-format.js';
import { diagnose } from '../../../src/diagnose/rules.js';

/** A decay run's samples: looks shift from CPU to data file reads as the table grows. */
function decaySamples(): Sample[] {
  let cpu = 0;
  let dataRead = 0;
  let client = 0;
  return Array.from({ length: 6 }, (_, k) => {
    if (k > 0) {
      dataRead += 10 * (k - 1);
      cpu += 40 - 10 * (k - 1) + 10;
      client += 2;
    }
    return {
      seconds: k, rowsLoaded: k * 1000, bytesLoaded: k * 45_000, rowsInTable: k * 1000, heapBytes: k * 8192, indexBytes: k * 4096, walBytes: k * 120_000,
      checkpointsTimed: 0, checkpointsRequested: 0, heapBlocksRead: 0, heapBlocksHit: 0, indexBlocksRead: k * k, indexBlocksHit: 10 * k, clientCpuSeconds: k * 0.1,
      waits: { ...NO_WAITS, cpu, dataRead, client }, serverCpuSeconds: k * 0.9,
    };
  });
}

describe('wait classes in intervals, the decay table and the HTML report', () => {
  it('each interval holds the shares of its own looks and the backends\' cores', () => {
    const iv = intervalsOf(decaySamples());
    assert.equal(iv.length, 5);
    assert.deepEqual(iv.map((i) => Math.round(100 * i.waits!.dataRead)), [0, 19, 38, 58, 77]);
    for (const i of iv) {
      assert.ok(Math.abs(Object.values(i.waits!).reduce((a, b) => a + b, 0) - 1) < 1e-9);
      assert.ok(Math.abs(i.serverCpu! - 0.9) < 1e-9);
    }
    // samples without waits (an old report) give intervals without them
    const old = decaySamples().map(({ waits: _w, serverCpuSeconds: _s, ...rest }) => rest);
    assert.equal(intervalsOf(old)[0]!.waits, undefined);
  });

  it('the decay table shows the classes that matter, per bucket', () => {
    const text = waitClassTable(intervalsOf(decaySamples()));
    const lines = text.split('\n');
    assert.match(lines[0]!, /rows in table\s+rows\/s\s+on CPU\s+waiting for pgsurge\s+data file reads\s+server cores/);
    assert.doesNotMatch(lines[0]!, /WAL|extension/);
    assert.match(lines.at(-1)!, /5,000\s+1,000\s+19%\s+4%\s+77%\s+0\.90/);
  });

  it('the HTML report gets a wait-class chart per series that has waits', async () => {
    const withWaits = makeSeries('with waits', decaySamples());
    const without = makeSeries('old', decaySamples().map(({ waits: _w, ...rest }) => rest));
    const report = makeReport({ title: 't', command: ['pgsurge'], settings: {}, target: 't', series: [withWaits, without], server: { version: 'PostgreSQL 18', versionNum: 180000, settings: {}, sharedBuffersBytes: 0 } });
    const html = await reportHtml(report, '/* no chart.js in a unit test */');
    assert.match(html, /<canvas id="waits-0"><\/canvas>/);
    assert.doesNotMatch(html, /id="waits-1"/);
  });

  it('the summary lines: classes, verdict, the rule\'s reason', () => {
    const waits = { ...NO_WAITS, cpu: 90, client: 5, wal: 5 };
    const verdict = diagnose({
      shares: { ...NO_WAITS, cpu: 0.9, client: 0.05, wal: 0.05 }, looks: 100, intervals: [], events: [], seconds: 2, workers: 2, cores: 2, input: 'files', commits: 4, sharedBuffersBytes: 1 << 27, indexBytes: 0, heapBytes: 0, memoryBytes: 1 << 34,
    });
    const text = formatDiagnosis({ verdict, waits: { everyMs: 25, looks: 50, waits, events: [{ event: 'IO:WalWrite', class: 'wal', looks: 5 }], local: false }, againstProbe: ['WAL written at 4.0 MB/s, 1% of what its disk does sequentially'] });
    assert.match(text, /^where the time went \(50 looks every 25 ms at the load's backends\): on CPU 90\.0%, waiting for pgsurge 5\.0%, WAL 5\.0%; top waits: IO:WalWrite 5\.0%/);
    assert.match(text, /\nverdict: the server was busy 95% of the load/);
    assert.match(text, /\n {2}why \(rule server-cpu\): /);
    assert.match(text, /\n {2}against the probe: WAL written at 4\.0 MB\/s/);
  });
});
