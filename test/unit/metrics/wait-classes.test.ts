import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addWaits, busyShare, classifyWait, NO_WAITS, subtractWaits, waitShares, type WaitClass } from '../../../src/metrics/wait-classes.js';
import { ProcCpuReader, processCpuSeconds } from '../../../src/metrics/proc-stat.js';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { serverIsLocal } from '../../../src/metrics/wait-sampler.js';
import type { Target } from '../../../src/cluster/target.js';

describe('wait classes of a backend at one look', () => {
  const cases: [string | null, string | null, string | null, WaitClass | undefined][] = [
    ['active', null, null, 'cpu'],
    ['active', 'Client', 'ClientRead', 'client'],
    ['idle', 'Client', 'ClientRead', 'client'],
    ['idle in transaction', 'Client', 'ClientRead', 'client'],
    ['active', 'IO', 'WALSync', 'wal'], // 15
    ['active', 'IO', 'WalSync', 'wal'], // 17+
    ['active', 'IO', 'WalWrite', 'wal'],
    ['active', 'LWLock', 'WALWrite', 'wal'],
    ['active', 'LWLock', 'WALInsert', 'wal'],
    ['active', 'LWLock', 'WALWriteLock', 'wal'], // 12 and older
    ['active', 'IPC', 'SyncRep', 'wal'],
    ['active', 'Lock', 'extend', 'extension'],
    ['active', 'IO', 'DataFileExtend', 'extension'],
    ['active', 'LWLock', 'RelationExtension', 'extension'],
    ['active', 'IO', 'DataFileRead', 'dataRead'],
    ['active', 'IO', 'DataFilePrefetch', 'dataRead'],
    ['active', 'IO', 'AioIoCompletion', 'dataRead'], // 18
    ['active', 'IO', 'DataFileWrite', 'dataWrite'],
    ['active', 'IO', 'DataFileFlush', 'dataWrite'],
    ['active', 'LWLock', 'BufferMapping', 'buffer'],
    ['active', 'LWLock', 'BufferContent', 'buffer'],
    ['active', 'BufferPin', 'BufferPin', 'buffer'],
    ['active', 'IPC', 'CheckpointStart', 'checkpoint'],
    ['active', 'Timeout', 'RegisterSyncRequest', 'checkpoint'],
    ['active', 'Lock', 'transactionid', 'lock'],
    ['active', 'Lock', 'relation', 'lock'],
    ['active', 'IPC', 'MessageQueueSend', 'other'],
    ['active', 'Activity', 'WalWriterMain', 'other'],
    [null, null, null, undefined],
  ];
  for (const [state, type, event, expected] of cases) {
    it(`${state} ${type ?? '-'}:${event ?? '-'} → ${expected}`, () => assert.equal(classifyWait(state, type, event), expected));
  }

  it('adds, subtracts and shares counts', () => {
    const a = { ...NO_WAITS, cpu: 3, client: 1 };
    const b = { ...NO_WAITS, cpu: 1, wal: 4 };
    assert.deepEqual(addWaits(a, b), { ...NO_WAITS, cpu: 4, client: 1, wal: 4 });
    assert.deepEqual(subtractWaits(addWaits(a, b), b), a);
    const s = waitShares(addWaits(a, b));
    assert.equal(s.cpu, 4 / 9);
    assert.ok(Math.abs(busyShare(s) - 8 / 9) < 1e-12);
    assert.deepEqual(waitShares(NO_WAITS), NO_WAITS);
  });
});

describe('backend CPU time from /proc', () => {
  it('reads utime + stime after the command name, spaces and parentheses in it too', () => {
    const stat = '4242 (postgres: a (b) c) S 1 4242 4242 0 -1 4194560 500 0 0 0 1234 567 0 0 20 0 1 0 100 1000 100';
    assert.equal(processCpuSeconds(4242, () => stat), 18.01);
    assert.equal(processCpuSeconds(1, () => { throw new Error('ENOENT'); }), undefined);
  });
  it('this process has a CPU time', () => assert.ok((processCpuSeconds(process.pid) ?? -1) >= 0));
  it('a reader kept open reads the CPU again and again, and nothing once its process has ended or it is closed', async () => {
    const self = ProcCpuReader.open(process.pid)!;
    const first = self.read()!;
    // 50 ms of this process's own CPU (not of wall time: a busy machine gives less): several 10 ms ticks
    const c0 = process.cpuUsage();
    for (const until = Date.now() + 10_000; Date.now() < until; ) {
      for (let k = 0; k < 1e5; k++) Math.sqrt(k);
      const c = process.cpuUsage(c0);
      if (c.user + c.system >= 50_000) break;
    }
    const again = self.read()!;
    assert.ok(again > first, `${first} then ${again}`);
    assert.ok(Math.abs(again - processCpuSeconds(process.pid)!) <= 0.02);
    self.close();
    assert.equal(self.read(), undefined);
    const child = spawn('sleep', ['5']);
    await once(child, 'spawn');
    const reader = ProcCpuReader.open(child.pid!)!;
    assert.ok(reader.read()! >= 0);
    child.kill();
    await once(child, 'exit');
    assert.equal(reader.read(), undefined, 'ended (and reaped): the open file reads nothing');
    assert.equal(ProcCpuReader.open(child.pid!), undefined);
  });
  it('a server is local when managed, or when its backend is a postgres process here reached by socket or loopback', () => {
    const t = (config: Target['config'], managed = false): Target => ({ config, description: '', managed: managed ? ({} as Target['managed']) : undefined, release: async () => {} });
    const isPostgres = (): string => 'postgres\n';
    assert.equal(serverIsLocal(t({}, true), 1, () => 'x'), true);
    assert.equal(serverIsLocal(t({ connectionString: 'postgresql://u@/db?host=/tmp/sock' }), 7, isPostgres), true);
    assert.equal(serverIsLocal(t({ connectionString: 'postgresql://u@localhost:5432/db' }), 7, isPostgres), true);
    assert.equal(serverIsLocal(t({ connectionString: 'postgresql://u@db1.example:5432/db' }), 7, isPostgres), false);
    assert.equal(serverIsLocal(t({ connectionString: 'postgresql://u@localhost/db' }), 7, () => 'bash\n'), false);
    // the managed cluster's own URL form, which Node's URL refuses (no host)
    assert.equal(serverIsLocal(t({ connectionString: 'postgresql://postgres@/postgres?host=%2Ftmp%2Fc%2Fsocket&port=5432' }), 7, isPostgres), true);
    assert.equal(serverIsLocal(t({ connectionString: 'host=db1 dbname=x' }), 7, isPostgres), false);
  });
});
