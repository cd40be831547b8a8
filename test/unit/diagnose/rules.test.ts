import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { diagnose, describeShares, RULES, type DiagnosisInput } from '../../../src/diagnose/rules.js';
import { NO_WAITS, WAIT_CLASSES, type WaitClass, type WaitShares } from '../../../src/metrics/wait-classes.js';

const shares = (s: Partial<Record<WaitClass, number>>): WaitShares => {
  const rest = 1 - Object.values(s).reduce((a, b) => a + b, 0);
  return { ...NO_WAITS, cpu: 0, ...s, ...(s.cpu === undefined ? { cpu: Math.max(0, rest) } : {}) };
};

const MB = 1024 * 1024;
const base: DiagnosisInput = {
  shares: shares({ cpu: 0.9, client: 0.05, wal: 0.05 }),
  looks: 400,
  intervals: [],
  events: [],
  seconds: 10,
  workers: 2,
  cores: 2,
  serverCpuSeconds: 18,
  clientCpuSeconds: 3,
  input: 'files',
  wire: 'text',
  synchronousCommit: 'on',
  commits: 20,
  sharedBuffersBytes: 128 * MB,
  indexBytes: 50 * MB,
  heapBytes: 100 * MB,
  memoryBytes: 16 * 1024 * MB,
};

/** Intervals whose data-read share goes from `from` to `to` as the table grows (the rest on CPU). */
const growingReads = (from: number, to: number, n = 9): DiagnosisInput['intervals'] =>
  Array.from({ length: n }, (_, k) => {
    const r = from + ((to - from) * k) / (n - 1);
    return { toRows: (k + 1) * 100_000, shares: shares({ dataRead: r, cpu: 1 - r }) };
  });

describe('the verdict: one rule per bottleneck, first that holds', () => {
  const cases: { name: string; input: Partial<DiagnosisInput>; rule: string; change: RegExp }[] = [
    { name: 'CPU-bound with every core used: --wire binary', input: {}, rule: 'server-cpu', change: /--wire binary.*up to its cores \(2 on 2\)/ },
    { name: 'CPU-bound with a core to spare: more workers', input: { workers: 1, serverCpuSeconds: 9, cores: 4 }, rule: 'server-cpu', change: /more workers \(-w 4\)/ },
    { name: 'CPU-bound, binary already: nothing on pgsurge\'s side', input: { wire: 'binary' }, rule: 'server-cpu', change: /nothing on pgsurge's side/ },
    { name: 'CPU-bound through INSERT (no wire): no --wire advice', input: { wire: undefined }, rule: 'server-cpu', change: /^nothing on pgsurge's side/ },
    { name: 'active but starved of cores by other processes', input: { serverCpuSeconds: 4 }, rule: 'cpu-shared', change: /quieter machine.*0\.40 cores for 2 backends/ },
    { name: 'no /proc figures: CPU-bound from the looks alone', input: { serverCpuSeconds: undefined }, rule: 'server-cpu', change: /--wire binary/ },
    { name: 'a load average far above the cores: the machine is shared', input: { loadAverage: 9, shares: shares({ cpu: 0.55, client: 0.4, wal: 0.05 }) }, rule: 'cpu-shared', change: /load average 9\.0 on 2 cores/ },
    { name: 'a starved machine, the server mostly waiting for a starved pgsurge: the machine', input: { loadAverage: 26, shares: shares({ cpu: 0.27, client: 0.72, extension: 0.01 }), serverCpuSeconds: 1 }, rule: 'cpu-shared', change: /load average 26\.0 on 2 cores/ },
    { name: 'a slow pipe: input-bound', input: { input: 'stream', shares: shares({ client: 0.9, cpu: 0.1 }), clientCpuSeconds: 1 }, rule: 'input', change: /feed the input faster/ },
    { name: 'pgsurge at a full core keeps the server waiting', input: { shares: shares({ client: 0.5, cpu: 0.5 }), clientCpuSeconds: 9.5 }, rule: 'pgsurge-cpu', change: /two pgsurge processes/ },
    { name: 'server waits for pgsurge, which has CPU to spare, a core free: more workers', input: { workers: 1, cores: 4, shares: shares({ client: 0.4, cpu: 0.6 }), serverCpuSeconds: 6 }, rule: 'more-workers', change: /more workers \(-w 2\)/ },
    { name: 'server waits for pgsurge, every core has a worker: bigger chunks', input: { shares: shares({ client: 0.4, cpu: 0.6 }), serverCpuSeconds: 12 }, rule: 'more-workers', change: /bigger chunks/ },
    { name: 'a stream but pgsurge busy: not the input', input: { input: 'stream', shares: shares({ client: 0.6, cpu: 0.4 }), clientCpuSeconds: 9 }, rule: 'pgsurge-cpu', change: /two pgsurge/ },
    { name: 'many small commits that wait for their flush', input: { shares: shares({ wal: 0.4, cpu: 0.4, client: 0.2 }), commits: 2000 }, rule: 'commit-wait', change: /--durability fast/ },
    { name: 'commit flushes are most of the server\'s busy time while a starved pgsurge keeps it waiting', input: { loadAverage: 21, shares: shares({ wal: 0.18, cpu: 0.01, client: 0.81 }), commits: 2000 }, rule: 'commit-wait', change: /--durability fast/ },
    { name: 'WAL waits from evictions out of a 1 MB shared_buffers: a bigger shared_buffers', input: { shares: shares({ wal: 0.86, cpu: 0.14 }), commits: 40, seconds: 120, sharedBuffersBytes: 1 * MB, indexBytes: 29 * MB, heapBytes: 66 * MB }, rule: 'wal-evictions', change: /bigger shared_buffers \(now 1 MB; the table and its indexes are 95 MB\)/ },
    { name: 'WAL waits with few commits: the WAL disk', input: { shares: shares({ wal: 0.35, cpu: 0.6 }), commits: 100 }, rule: 'wal', change: /pgsurge wal move/ },
    { name: 'WAL waits with synchronous_commit off: not the commits', input: { shares: shares({ wal: 0.35, cpu: 0.6 }), commits: 2000, synchronousCommit: 'off' }, rule: 'wal', change: /wal move/ },
    { name: 'extension lock, several workers: fewer', input: { workers: 8, shares: shares({ extension: 0.3, cpu: 0.6 }) }, rule: 'extension', change: /fewer workers \(-w 4\)/ },
    { name: 'extension lock, one worker: bigger chunks', input: { workers: 1, serverCpuSeconds: 9, shares: shares({ extension: 0.15, cpu: 0.8 }) }, rule: 'extension', change: /^bigger chunks/ },
    {
      name: 'extension looks that are the backend writing its new blocks (one worker on 15, IO:DataFileExtend): not chunks, the disk or 16+',
      input: { workers: 1, serverCpuSeconds: 9, shares: shares({ extension: 0.22, cpu: 0.7 }), events: [{ event: 'IO:DataFileExtend', class: 'extension', share: 0.22 }] },
      rule: 'extension', change: /^a faster disk or filesystem .*PostgreSQL 16 and later extend a table by many blocks at once.*more workers or bigger chunks do not/,
    },
    {
      name: 'extension looks mostly queueing for the lock beside some block writes (-w 2 on 15): the queue',
      input: { workers: 2, serverCpuSeconds: 9, shares: shares({ extension: 0.22, cpu: 0.7 }), events: [{ event: 'Lock:extend', class: 'extension', share: 0.115 }, { event: 'IO:DataFileExtend', class: 'extension', share: 0.104 }] },
      rule: 'extension', change: /^fewer workers \(-w 1\)/,
    },
    { name: 'index reads that grow with the table, index small against RAM: shared_buffers', input: { shares: shares({ dataRead: 0.15, cpu: 0.85 }), intervals: growingReads(0, 0.4), indexBytes: 300 * MB }, rule: 'index-reads', change: /shared_buffers of at least 375 MB/ },
    { name: 'index reads with an index bigger than RAM allows: build after', input: { shares: shares({ dataRead: 0.5, cpu: 0.5 }), indexBytes: 8 * 1024 * MB }, rule: 'index-reads', change: /build the indexes after the load/ },
    { name: 'reads flat and low: no index rule', input: { shares: shares({ dataRead: 0.05, cpu: 0.95 }), intervals: growingReads(0.05, 0.05) }, rule: 'server-cpu', change: /--wire binary/ },
    { name: 'reads and evictions with an index past shared_buffers: still the index', input: { shares: shares({ dataRead: 0.12, dataWrite: 0.15, cpu: 0.73 }), indexBytes: 200 * MB }, rule: 'index-reads', change: /shared_buffers of at least 250 MB/ },
    {
      name: 'a decay knee on a shared machine: reads and evictions take over late, the index past shared_buffers',
      input: {
        loadAverage: 22, serverCpuSeconds: 5, shares: shares({ cpu: 0.52, wal: 0.16, buffer: 0.12, dataWrite: 0.1, dataRead: 0.06, client: 0.04 }), sharedBuffersBytes: 16 * MB, indexBytes: 29 * MB,
        intervals: Array.from({ length: 9 }, (_, k) => ({ toRows: k, shares: k < 5 ? shares({ cpu: 0.8, client: 0.2 }) : shares({ dataRead: 0.15, dataWrite: 0.2, cpu: 0.65 }) })),
      },
      rule: 'index-reads', change: /shared_buffers of at least 37 MB \(now 16 MB; the index is 29 MB\)/,
    },
    { name: 'checkpoint waits', input: { shares: shares({ checkpoint: 0.12, cpu: 0.88 }) }, rule: 'checkpoints', change: /max_wal_size/ },
    { name: 'backends writing data blocks', input: { shares: shares({ dataWrite: 0.3, cpu: 0.7 }) }, rule: 'data-writes', change: /faster disk/ },
    { name: 'buffer contention', input: { workers: 4, shares: shares({ buffer: 0.3, cpu: 0.7 }) }, rule: 'buffer', change: /fewer workers \(-w 2\)/ },
    { name: 'nothing stands out', input: { shares: shares({ cpu: 0.3, client: 0.2, wal: 0.15, lock: 0.2, other: 0.15 }) }, rule: 'mixed', change: /on CPU/ },
    { name: 'too few looks', input: { looks: 5 }, rule: 'too-short', change: /longer load/ },
  ];
  it('the extension verdict says which it was: the blocks\' writes, or the lock\'s queue', () => {
    const writes = diagnose({ ...base, workers: 1, shares: shares({ extension: 0.22, cpu: 0.7 }), events: [{ event: 'IO:DataFileExtend', class: 'extension', share: 0.22 }] });
    assert.match(writes.bound, /each new block written to the data file .*not a queue for the lock/);
    assert.match(writes.why, /IO:DataFileExtend.*not waiting for another backend's \(Lock:extend\)/);
    const queue = diagnose({ ...base, workers: 4, shares: shares({ extension: 0.3, cpu: 0.6 }), events: [{ event: 'Lock:extend', class: 'extension', share: 0.3 }] });
    assert.match(queue.bound, /workers queueing/);
    assert.match(queue.why, /each relation has one extension lock/);
  });

  for (const c of cases) {
    it(c.name, () => {
      const v = diagnose({ ...base, ...c.input });
      assert.equal(v.rule, c.rule, v.text);
      assert.match(v.change, c.change);
      assert.ok(v.why.length > 40, 'every verdict carries its reason');
      if (c.rule !== 'too-short') assert.ok(v.text.includes(v.change) && v.text.startsWith('the server was busy'), v.text);
    });
  }

  it('says the numbers: busy share, the classes, the wait for pgsurge, the cores', () => {
    const v = diagnose({
      ...base,
      shares: shares({ cpu: 0.85, wal: 0.06, extension: 0.04, client: 0.011, other: 0.039 }),
      events: [
        { event: 'IO:WalSync', class: 'wal', share: 0.05 },
        { event: 'Lock:extend', class: 'extension', share: 0.04 },
      ],
    });
    assert.equal(v.rule, 'server-cpu');
    assert.match(v.text, /^the server was busy 99% of the load: on CPU 85%, WAL 6\.0% \(WalSync\), other waits 3\.9%, extension lock 4\.0% \(extend\)|^the server was busy 99% of the load: on CPU 85%, WAL 6\.0% \(WalSync\), extension lock 4\.0% \(extend\), other waits 3\.9%/);
    assert.match(v.text, /it waited for pgsurge 1\.1% \(its backends used 1\.80 of 2 cores; pgsurge 0\.30\) — bound by the server's CPU/);
  });

  it('every rule has an id, a reason, and ids are unique; the last one always holds', () => {
    assert.equal(new Set(RULES.map((r) => r.id)).size, RULES.length);
    for (const r of RULES) for (const why of typeof r.why === 'string' ? [r.why] : [r.why(base), r.why({ ...base, events: [{ event: 'IO:DataFileExtend', class: 'extension', share: 0.2 }] })]) assert.ok(why.length > 40, r.id);
    assert.equal(RULES.at(-1)!.id, 'mixed');
  });

  it('describes shares largest first, leaving out pgsurge and anything under 1%', () => {
    assert.equal(describeShares({ shares: shares({ cpu: 0.7, dataRead: 0.2, client: 0.095, lock: 0.005 }), events: [] }), 'on CPU 70%, data file reads 20%');
    assert.equal(WAIT_CLASSES.length, 10);
  });
});
