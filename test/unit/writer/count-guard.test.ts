import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Chunk } from '../../../src/core/chunk.js';
import { formatSummary } from '../../../src/report/summary-format.js';
import { LoadCounters } from '../../../src/metrics/load-counters.js';
import { brokenChunk, checkCount, CountMismatch } from '../../../src/writer/count-guard.js';

const chunk = (records: number, over: Partial<Chunk['location']> = {}): Chunk => ({
  location: { file: 'x.txt', byteOffset: 4096, byteLength: 2048, firstLine: 201, ...over },
  data: Buffer.alloc(0),
  records,
  lines: records,
  target: { table: 't', schema: undefined, format: 'text', file: 'x.txt' },
});

describe('the count guard (checkCount)', () => {
  it('passes a result that accounts for every record sent, with skips on conflict', () => {
    assert.deepEqual(checkCount(chunk(10), { loaded: 10, skipped: 0 }, undefined, true), { loaded: 10, skipped: 0, triggerSkipped: 0 });
    assert.deepEqual(checkCount(chunk(10), { loaded: 7, skipped: 3 }, undefined, true), { loaded: 7, skipped: 3, triggerSkipped: 0 });
  });

  it('refuses a count short or over, saying what the server did', () => {
    assert.throws(() => checkCount(chunk(10), { loaded: 9, skipped: 0 }, undefined, true), (e: unknown) => {
      assert.ok(e instanceof CountMismatch);
      assert.equal(e.message, 'the server stored 9 rows for the 10 records pgsurge sent, without an error (COPY stopped early: an end-of-data marker \\. in the data?)');
      return true;
    });
    assert.throws(() => checkCount(chunk(1), { loaded: 0, skipped: 0 }, undefined, false), { message: 'the server stored 0 rows for this record, without an error' });
    assert.throws(() => checkCount(chunk(1), { loaded: 2, skipped: 0 }, undefined, true), { message: 'the server stored 2 rows for this record, without an error' });
    assert.throws(() => checkCount(chunk(4), { loaded: 1, skipped: 2 }, undefined, true), /stored 1 rows and skipped 2 for the 4 records/);
  });

  it("with BEFORE INSERT row triggers, a shortfall is skipped by the table's trigger; a count over is still refused", () => {
    assert.deepEqual(checkCount(chunk(10), { loaded: 4, skipped: 0 }, ['route on t'], true), { loaded: 4, skipped: 6, triggerSkipped: 6 });
    assert.throws(() => checkCount(chunk(10), { loaded: 11, skipped: 0 }, ['route on t'], true), CountMismatch);
    assert.throws(() => checkCount(chunk(10), { loaded: 4, skipped: 0 }, [], true), CountMismatch);
  });

  it('a broken chunk is named by file, byte range and first line (a Parquet chunk by row group and rows)', () => {
    const e = brokenChunk(chunk(3), 201, 'why', 'rolled-back');
    assert.equal(e.code, 'chunk-failed');
    assert.equal(e.message, 'the load stopped on the chunk of 3 records in x.txt at byte 4096 (bytes 4096–6144, first line 201): why');
    assert.match(e.details.hint ?? '', /ledger does not count it/);
    const p = brokenChunk(chunk(2048, { rowGroup: 2, byteOffset: 4096, byteLength: 2048 }), 4097, 'why', 'rolled-back');
    assert.equal(p.message, 'the load stopped on the chunk of 2048 records in x.txt (row group 2, rows 4097–6144): why');
  });
});

describe("the summary of a table with a trigger that keeps rows out", () => {
  it('says how many rows were skipped by the trigger, and read = loaded + rejected + skipped', () => {
    const counters = new LoadCounters(() => 0);
    counters.expect('t', 'x.txt');
    counters.rowTriggers('t', ['route on public.t']);
    counters.add('t', 'x.txt', 4, 100, 0, 1, { read: 10, rejected: 0, skipped: 6, triggerSkipped: 6 });
    const summary = counters.summary(1, 'server');
    assert.equal(summary.tables[0]!.skippedByTrigger, 6);
    const text = formatSummary(summary);
    assert.match(text, /loaded 4 of 10 rows read \(read 10 = loaded 4 \+ rejected 0 \+ skipped 6\)/);
    assert.match(text, /skipped by the table's trigger: 6 rows of t: .*\(route on public\.t;/);
    counters.add('t', 'x.txt', 10, 100, 1, 2, { read: 10 });
    assert.equal(counters.summary(1, 'server').tables[0]!.skippedByTrigger, 6);
  });
});
