import assert from 'node:assert/strict';
import { mkdtemp, rm, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fsyncLoop, parsePgTestFsync } from '../../../src/diagnose/probe/disk-probe.js';

// pg_test_fsync 15's output, as printed on this machine
const OUTPUT = `1 second per test
O_DIRECT supported on this platform for open_datasync and open_sync.

Compare file sync methods using one 8kB write:
(in wal_sync_method preference order, except fdatasync is Linux's default)
        open_datasync                       292.565 ops/sec    3418 usecs/op
        fdatasync                           283.551 ops/sec    3527 usecs/op
        fsync                               283.426 ops/sec    3528 usecs/op
        fsync_writethrough                              n/a
        open_sync                           238.124 ops/sec    4200 usecs/op

Compare file sync methods using two 8kB writes:
(in wal_sync_method preference order, except fdatasync is Linux's default)
        open_datasync                        82.037 ops/sec   12190 usecs/op
        fdatasync                           140.000 ops/sec    7142 usecs/op
`;

describe('pgsurge probe: fdatasync figures', () => {
  it("reads fdatasync of the one-8kB-write section, not the two-writes one", () => assert.equal(parsePgTestFsync(OUTPUT), 283.551));
  it('waits for the line: nothing yet while only open_datasync is printed', () => {
    assert.equal(parsePgTestFsync(OUTPUT.slice(0, OUTPUT.indexOf('        fdatasync'))), undefined);
    assert.equal(parsePgTestFsync('1 second per test\n'), undefined);
  });
  it('our own loop: 8 KB writes with fdatasync, a rate, and no file left behind', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pgsurge-probe-unit-'));
    try {
      const rate = fsyncLoop(dir, 0.2);
      assert.ok(rate > 0 && Number.isFinite(rate), String(rate));
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(await readdir(dir), []);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
