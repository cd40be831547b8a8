import assert from 'node:assert/strict';
import os from 'node:os';
import { describe, it } from 'node:test';
import { diagnoseLoad, readAgainstProbe } from '../../../src/diagnose/diagnose-load.js';
import type { ProbeFigures } from '../../../src/diagnose/probe/probe-store.js';
import type { LoadSummary } from '../../../src/metrics/load-counters.js';
import type { Sample } from '../../../src/metrics/series.js';
import { NO_WAITS, type WaitCounts } from '../../../src/metrics/wait-classes.js';

/**
 * diagnoseLoad on a sample series built by hand: the sampler's cumulative counts, the
 * load's summary and the server's facts become the rules' input and one verdict. (The
 * same verdict from a real load is in test/integration/diagnose.test.ts.)
 */
describe('diagnoseLoad', () => {
  it('a series whose looks find a third of the backends on Lock:extend: the extension verdict, fewer workers', () => {
    const waits = (cpu: number, extension: number, client: number): WaitCounts => ({ ...NO_WAITS, cpu, extension, client });
    const sample = (seconds: number, rows: number, w: WaitCounts): Sample => ({
      seconds, rowsLoaded: rows, bytesLoaded: rows * 45, rowsInTable: rows, heapBytes: rows * 60, indexBytes: 0, walBytes: rows * 120,
      checkpointsTimed: 0, checkpointsRequested: 0, heapBlocksRead: 0, heapBlocksHit: 0, indexBlocksRead: 0, indexBlocksHit: 0, clientCpuSeconds: seconds * 0.3, waits: w, serverCpuSeconds: seconds * 4,
    });
    // 8 workers, 40 looks a second each: a third of the looks on Lock:extend
    const samples = [0, 1, 2, 3, 4].map((s) => sample(s, s * 100_000, waits(s * 190, s * 110, s * 20)));
    const summary = { workers: 8, total: { seconds: 4, chunks: 400, mbPerSecond: 4.5 }, tables: [], files: [], target: 't' } as unknown as LoadSummary;
    const d = diagnoseLoad({
      waits: { everyMs: 25, looks: 160, waits: samples.at(-1)!.waits!, events: [{ event: 'Lock:extend', class: 'extension', looks: 440 }], local: true, serverCpuSeconds: 16 },
      samples, summary,
      facts: { version: 'PostgreSQL 18', versionNum: 180000, settings: { synchronous_commit: 'on' }, sharedBuffersBytes: 128 << 20 },
      context: { input: 'files' },
    });
    assert.equal(d.verdict.rule, 'extension', d.verdict.text);
    assert.match(d.verdict.change, /fewer workers \(-w 4\)/);
    assert.match(d.verdict.text, /extension lock 34% \(extend\)/);
  });

  it('a CPU-bound load on every core: --wire binary only when its rows went as text, never to a load that used the binary wire', () => {
    const cores = os.availableParallelism();
    const samples = [0, 1, 2, 3, 4].map((s): Sample => ({
      seconds: s, rowsLoaded: s * 100_000, bytesLoaded: s * 4_500_000, rowsInTable: s * 100_000, heapBytes: s * 6_000_000, indexBytes: 0, walBytes: s * 12_000_000,
      checkpointsTimed: 0, checkpointsRequested: 0, heapBlocksRead: 0, heapBlocksHit: 0, indexBlocksRead: 0, indexBlocksHit: 0, clientCpuSeconds: s * 0.2, waits: { ...NO_WAITS, cpu: s * 190, client: s * 10 }, serverCpuSeconds: s * 0.95 * cores,
    }));
    const verdict = (wire: 'binary' | 'text' | undefined): { rule: string; change: string } => {
      const tableWire = wire === undefined ? {} : { wire: [{ table: 't', wire, binaryChunks: wire === 'binary' ? 400 : 0, fallbackChunks: 0 }] };
      const summary = { workers: cores, total: { seconds: 4, chunks: 400, mbPerSecond: 4.5 }, tables: [], files: [], target: 't', ...tableWire } as unknown as LoadSummary;
      return diagnoseLoad({
        waits: { everyMs: 25, looks: 800, waits: samples.at(-1)!.waits!, events: [], local: false, serverCpuSeconds: 3.8 * cores },
        samples, summary,
        facts: { version: 'PostgreSQL 18', versionNum: 180000, settings: { synchronous_commit: 'on' }, sharedBuffersBytes: 128 << 20 },
        context: { input: 'files' },
      }).verdict;
    };
    assert.equal(verdict('text').rule, 'server-cpu');
    assert.match(verdict('text').change, /^--wire binary/);
    for (const wire of ['binary', undefined] as const) {
      assert.equal(verdict(wire).rule, 'server-cpu');
      assert.doesNotMatch(verdict(wire).change, /--wire binary/, `wire ${wire}`);
    }
  });

  it('read against the probe: the table\'s growth since the first sample, none at 0 rows or over a few milliseconds', () => {
    const MB = 1024 * 1024;
    const probe: ProbeFigures = {
      format: 'pgsurge-probe', createdAt: '2026-12-01T10:00:00Z',
      disks: [{ path: '/d', role: 'data directory', fsyncsPerSecond: 500, fsyncTool: 'pgsurge', seqWriteMBps: 400, seqReadMBps: 800, cacheNote: '' }],
    };
    const at = (seconds: number, rows: number, heapBytes: number): Sample => ({
      seconds, rowsLoaded: rows, bytesLoaded: rows * 45, rowsInTable: rows, heapBytes, indexBytes: 10 * MB, walBytes: rows * 120,
      checkpointsTimed: 0, checkpointsRequested: 0, heapBlocksRead: 0, heapBlocksHit: 0, indexBlocksRead: 0, indexBlocksHit: 0, clientCpuSeconds: 0,
    });
    const summary = (loaded: number, seconds: number): LoadSummary => ({ workers: 2, total: { loaded, seconds, chunks: 4, mbPerSecond: 1 }, tables: [], files: [], target: 't' }) as unknown as LoadSummary;
    // a table of 40 MB before the load, 50 MB after 2 s: it grew at 5 MB/s, not 25
    const grew = readAgainstProbe(probe, at(2, 100_000, 40 * MB), summary(100_000, 2), at(0, 0, 30 * MB)).join('\n');
    assert.match(grew, /table and indexes grew at 5\.0 MB\/s, 1\.3% of the data disk's sequential writes/);
    // nothing loaded into a table of 40 MB: no rate of any kind
    assert.deepEqual(readAgainstProbe(probe, at(0.02, 0, 30 * MB), summary(0, 0.02), at(0, 0, 30 * MB)), []);
    // 5 rows in 20 ms: a page more is no growth rate
    assert.doesNotMatch(readAgainstProbe(probe, at(0.02, 5, 30 * MB + 8192), summary(5, 0.02), at(0, 0, 30 * MB)).join('\n'), /grew/);
  });
});
