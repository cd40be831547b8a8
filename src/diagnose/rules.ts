import { busyShare, WAIT_CLASS_LABELS, WAIT_CLASSES, type WaitClass, type WaitShares } from '../metrics/wait-classes.js';

/**
 * Why a load ran at the speed it did: the measurements → one verdict, by the first rule of
 * RULES that holds. Every rule says why it holds (`why`), so a reader can check it against
 * their own server; the thresholds are the numbers below, nowhere else. Pure: no I/O.
 */

/** What the rules look at. Shares are of all looks at the load's backends (0–1). */
export interface DiagnosisInput {
  /** Over the whole load. */
  readonly shares: WaitShares;
  /** Backend-looks behind `shares` (looks × backends). */
  readonly looks: number;
  /** Per interval, in order of the table's growth. */
  readonly intervals: readonly { readonly toRows: number; readonly shares: WaitShares }[];
  /** The most frequent wait events (`IO:WALSync`) with their class and share of the looks. */
  readonly events: readonly { readonly event: string; readonly class: WaitClass; readonly share: number }[];
  readonly seconds: number;
  readonly workers: number;
  /** Cores of the server's machine (this machine's when the server is local). */
  readonly cores: number;
  /** The load's backends' CPU seconds (local servers only). */
  readonly serverCpuSeconds?: number;
  /** pgsurge's own CPU seconds. */
  readonly clientCpuSeconds?: number;
  /** Files pgsurge reads itself, or a stream (stdin, a pipe) it can only wait for. */
  readonly input: 'files' | 'stream';
  /** The COPY wire the load's rows went through: binary only when every table's did; none for INSERT. */
  readonly wire?: 'text' | 'binary';
  /** synchronous_commit as the load's sessions ran with it. */
  readonly synchronousCommit?: string;
  /** COMMITs (chunks) in the load. */
  readonly commits: number;
  readonly sharedBuffersBytes: number;
  readonly indexBytes: number;
  /** Size of the table(s) at the end. */
  readonly heapBytes: number;
  readonly memoryBytes: number;
  /** The machine's 1-minute load average at the end of the load (a local server only). */
  readonly loadAverage?: number;
}

export interface Verdict {
  /** The rule that held, e.g. `server-cpu`. */
  readonly rule: string;
  /** What the load was bound by, in words: "the server's CPU". */
  readonly bound: string;
  /** The one change the measurements point to. */
  readonly change: string;
  /** Why the rule holds. */
  readonly why: string;
  /** Share of the looks the server was not waiting for pgsurge. */
  readonly busy: number;
  readonly shares: WaitShares;
  /** The whole verdict as one sentence, numbers first. */
  readonly text: string;
}

/** Below this many backend-looks the shares are noise. */
export const MIN_LOOKS = 20;

interface Derived {
  readonly busy: number;
  /** pgsurge's CPU in cores, averaged over the load (undefined when not measured). */
  readonly clientCores: number | undefined;
  readonly serverCores: number | undefined;
  readonly commitsPerSecond: number;
  /** Data file read share in the first and last third of the intervals. */
  readonly readsEarly: number;
  readonly readsLate: number;
  /** Data file reads + writes in the first and last third. */
  readonly ioEarly: number;
  readonly ioLate: number;
  /** The backends got far less CPU than their active looks ask for, or the machine has more runnable processes than cores. */
  readonly starved: boolean;
}

interface Rule {
  readonly id: string;
  readonly when: (i: DiagnosisInput, d: Derived) => boolean;
  readonly bound: string | ((i: DiagnosisInput, d: Derived) => string);
  readonly change: (i: DiagnosisInput, d: Derived) => string;
  readonly why: string | ((i: DiagnosisInput) => string);
}

/** Whether the extension looks are mostly backends writing their new blocks (IO:DataFileExtend) rather than queueing for the lock (Lock:extend, RelationExtension). */
function extendWrites(i: DiagnosisInput): boolean {
  let writes = 0;
  let queue = 0;
  for (const e of i.events) {
    if (e.class !== 'extension') continue;
    if (e.event.endsWith(':DataFileExtend')) writes += e.share;
    else queue += e.share;
  }
  return writes > queue;
}

const pct = (x: number): string => `${(100 * x).toFixed(x < 0.1 ? 1 : 0)}%`;
const mb = (b: number): string => (b < 1024 * 1024 ? `${Math.ceil(b / 1024)} kB` : `${Math.ceil(b / (1024 * 1024))} MB`);
const commitsOn = (i: DiagnosisInput): boolean => !['off', 'local'].includes((i.synchronousCommit ?? 'on').toLowerCase());

export const RULES: readonly Rule[] = [
  {
    id: 'too-short',
    when: (i) => i.looks < MIN_LOOKS,
    bound: 'nothing that can be told',
    change: () => 'a longer load shows it',
    why: `fewer than ${MIN_LOOKS} looks at the backends: one look more or less moves every share by several points`,
  },
  {
    id: 'input',
    when: (i, d) => i.input === 'stream' && i.shares.client >= 0.5 && (d.clientCores === undefined || d.clientCores < 0.5),
    bound: 'the input: pgsurge and the server both waited for the stream',
    change: () => 'feed the input faster, or give pgsurge a file (it splits files between its workers; a pipe it can only wait for)',
    why: 'the server waited for pgsurge most of the time while pgsurge used less than half a core: neither was working, so both were waiting for the rows to arrive; more workers would only wait side by side',
  },
  {
    id: 'commit-wait',
    // a fifth of all looks, or (when pgsurge was starved and kept the server waiting) half of the server's busy looks
    when: (i, d) => commitsOn(i) && d.commitsPerSecond >= 20 && (i.shares.wal >= 0.2 || (i.shares.wal >= 0.1 && i.shares.wal >= 0.5 * d.busy)),
    bound: 'commits waiting for their WAL to reach disk',
    change: () => '--durability fast (synchronous_commit=off: a COMMIT no longer waits for its flush; a crash can lose the last chunks, never corrupt) — or bigger chunks, fewer commits',
    why: 'with synchronous_commit on, every COMMIT waits for the WAL flush (WALSync/WALWrite); at many commits per second those waits add up to the WAL share seen, and they disappear when the flush is left to the WAL writer',
  },
  {
    id: 'wal-evictions',
    when: (i, d) => i.shares.wal >= 0.25 && d.commitsPerSecond < 20 && i.indexBytes + i.heapBytes > 4 * i.sharedBuffersBytes && i.sharedBuffersBytes < 32 * 1024 * 1024,
    bound: 'WAL flushes forced by evicting dirty pages from a small shared_buffers',
    change: (i) => `a bigger shared_buffers (now ${mb(i.sharedBuffersBytes)}; the table and its indexes are ${mb(i.heapBytes + i.indexBytes)})`,
    why: 'before a dirty page leaves shared_buffers its WAL must be on disk (FlushBuffer calls XLogFlush), and wal_buffers defaults to 1/32 of shared_buffers: with few commits, WAL waits this large come from the backends evicting pages and filling tiny WAL buffers, which more shared_buffers removes',
  },
  {
    id: 'wal',
    when: (i) => i.shares.wal >= 0.25,
    bound: 'WAL writing',
    change: () => 'move the WAL to a disk of its own (`pgsurge wal move --to <dir>`), or --durability fast when the waits are commit flushes',
    why: 'a quarter or more of the looks found the backends writing or flushing WAL or waiting for the WAL insert/write locks: every row goes through the WAL, sequentially; on the data disk it competes with data file writes and checkpoints',
  },
  {
    id: 'extension',
    when: (i) => i.shares.extension >= 0.1,
    bound: (i) => (extendWrites(i) ? 'relation extension: each new block written to the data file as the table grows (IO:DataFileExtend), not a queue for the lock' : 'relation extension: workers queueing to add blocks to the table or its indexes'),
    change: (i) =>
      extendWrites(i)
        ? 'a faster disk or filesystem for the data directory (`pgsurge probe`); PostgreSQL 16 and later extend a table by many blocks at once, which removes most of these writes on 15 and before (more workers or bigger chunks do not)'
        : i.workers > 1
          ? `fewer workers (-w ${Math.max(1, Math.floor(i.workers / 2))}) or bigger chunks (--chunk-size)`
          : 'bigger chunks (--chunk-size)',
    why: (i) =>
      extendWrites(i)
        ? 'most of the extension looks found a backend writing the new block itself (IO:DataFileExtend: on PostgreSQL 15 and before one 8 kB write per block added, a copy into the page cache), not waiting for another backend\'s (Lock:extend): the time is the write, which a queue of fewer writers would not shorten'
        : 'each relation has one extension lock: backends that fill their pages at the same time queue on it (Lock:extend) and each waits for another\'s new block; a B-tree adds one page per split, so wide random index keys take it nearly every row; fewer writers, or longer runs per transaction, queue less',
  },
  {
    id: 'index-reads',
    when: (i, d) =>
      i.shares.dataRead >= 0.2 ||
      (d.readsLate >= 0.15 && d.readsLate - d.readsEarly >= 0.1) ||
      // the decay knee: data file I/O (reads, and writes of the dirty pages they evict) taking over as the table grows
      (i.indexBytes > i.sharedBuffersBytes && d.ioLate >= 0.2 && d.ioLate - d.ioEarly >= 0.15) ||
      (i.indexBytes > i.sharedBuffersBytes && i.shares.dataRead + i.shares.dataWrite >= 0.25),
    bound: 'index (and table) blocks read back into shared_buffers, and evicted, once they no longer fit',
    change: (i) =>
      i.indexBytes > 0 && i.indexBytes * 1.25 < i.memoryBytes / 4
        ? `shared_buffers of at least ${mb(i.indexBytes * 1.25)} (now ${mb(i.sharedBuffersBytes)}; the index is ${mb(i.indexBytes)})`
        : 'build the indexes after the load (load the table bare, then CREATE INDEX: one sorted pass instead of a random read per row)',
    why: 'a unique index on random keys touches a random leaf page per row; while it fits in shared_buffers that is a hit, once it outgrows them each row waits for a read (DataFileRead) and often for the write of the dirty page it evicts (DataFileWrite), and the share of such waits grows with the table',
  },
  {
    id: 'checkpoints',
    when: (i) => i.shares.checkpoint >= 0.1,
    bound: 'checkpoints',
    change: () => 'a bigger max_wal_size (fewer checkpoints during the load)',
    why: 'backends waited on the checkpointer (its request queue full, or a requested checkpoint): with max_wal_size too small for the load, checkpoints come back-to-back',
  },
  {
    id: 'data-writes',
    when: (i) => i.shares.dataWrite >= 0.2,
    bound: 'data file writes',
    change: () => 'a faster disk for the data directory (`pgsurge probe` shows what it does)',
    why: 'backends wrote or flushed data blocks themselves (DataFileWrite/DataFileFlush): a bulk load writes its pages through a small ring of buffers, so the disk\'s write rate is the limit once the CPU is not',
  },
  {
    id: 'buffer',
    when: (i) => i.shares.buffer >= 0.25,
    bound: 'contention on shared buffers',
    change: (i) => `fewer workers (-w ${Math.max(1, Math.floor(i.workers / 2))})`,
    why: 'backends waited for each other on buffer mapping or buffer content locks (the same hot pages, e.g. an index\'s right edge with sequential keys): more writers only queue more',
  },
  {
    id: 'cpu-shared',
    // a starved pgsurge leaves the server waiting for it too: both count
    when: (i, d) => d.starved && i.shares.cpu + i.shares.client >= 0.5,
    bound: "the machine's CPU, shared with other processes",
    change: (i, d) =>
      `a quieter machine: the backends were running or runnable in ${pct(i.shares.cpu)} of the looks` +
      (d.serverCores !== undefined ? ` but got ${d.serverCores.toFixed(2)} cores for ${i.workers} backend${i.workers === 1 ? '' : 's'}` : '') +
      (i.loadAverage !== undefined ? `; load average ${i.loadAverage.toFixed(1)} on ${i.cores} cores` : ''),
    why: 'pg_stat_activity shows a backend that waits for a core as active with no wait event; its CPU time in /proc shows how much it got, the load average how many processes wanted the cores. Far less CPU than active looks, or a load average well above the cores, means other processes took them — and a starved pgsurge also leaves the server waiting for it',
  },
  {
    id: 'pgsurge-cpu',
    when: (i, d) => i.shares.client >= 0.3 && d.clientCores !== undefined && d.clientCores >= 0.8,
    bound: "pgsurge's own CPU (one core: Node's event loop)",
    change: () => 'split the input between two pgsurge processes (each has a core of its own), or give the server the wire it parses cheapest',
    why: "the server waited for pgsurge while pgsurge was using a whole core: its event loop is single-threaded, so more workers in the same process cannot feed the server faster",
  },
  {
    id: 'more-workers',
    when: (i) => i.shares.client >= 0.3,
    bound: 'pgsurge keeping the server waiting',
    change: (i) => (i.workers < i.cores ? `more workers (-w ${Math.min(i.cores, i.workers * 2)})` : 'bigger chunks (--chunk-size): fewer round trips between chunks'),
    why: 'the server waited for pgsurge in a good part of the looks while pgsurge had CPU to spare: a backend waits for its client between chunks and during each chunk\'s round trips; another worker fills those gaps, up to the cores',
  },
  {
    id: 'server-cpu',
    when: (i) => i.shares.cpu >= 0.5,
    bound: "the server's CPU",
    change: (i) =>
      i.workers < i.cores
        ? `more workers (-w ${i.cores}): more workers help only up to its cores (${i.workers} worker${i.workers === 1 ? '' : 's'} on ${i.cores} cores)`
        : i.wire === 'text'
          ? `--wire binary (the server parses no text) — more workers help only up to its cores (${i.workers} on ${i.cores})`
          : `nothing on pgsurge's side: more workers help only up to its cores (${i.workers} on ${i.cores}); a faster CPU, or fewer indexes during the load`,
    why: 'most looks found the backends running, not waiting: the rate is what their cores parse, check and write; a core per backend is the most one load can use, and parsing text is the part pgsurge can take away',
  },
  {
    id: 'mixed',
    when: () => true,
    bound: (i) => `no single cause (largest: ${WAIT_CLASS_LABELS[largest(i.shares)]} ${pct(i.shares[largest(i.shares)])})`,
    change: (i) => `look at the wait classes over time; the largest, ${WAIT_CLASS_LABELS[largest(i.shares)]}, is where to start`,
    why: 'no class reached its rule\'s threshold: the time was spread over several',
  },
];

function largest(s: WaitShares): WaitClass {
  return WAIT_CLASSES.reduce((best, c) => (s[c] > s[best] ? c : best), 'cpu');
}

/** The mean of `share` over the first and the last third of the intervals (zeros with fewer than 3). */
function thirds(intervals: DiagnosisInput['intervals'], share: (s: WaitShares) => number): { early: number; late: number } {
  const n = intervals.length;
  if (n < 3) return { early: 0, late: 0 };
  const k = Math.max(1, Math.floor(n / 3));
  const mean = (xs: DiagnosisInput['intervals']): number => xs.reduce((a, x) => a + share(x.shares), 0) / xs.length;
  return { early: mean(intervals.slice(0, k)), late: mean(intervals.slice(n - k)) };
}

function derive(i: DiagnosisInput): Derived {
  const { early, late } = thirds(i.intervals, (s) => s.dataRead);
  const io = thirds(i.intervals, (s) => s.dataRead + s.dataWrite);
  const serverCores = i.serverCpuSeconds !== undefined && i.seconds > 0 ? i.serverCpuSeconds / i.seconds : undefined;
  return {
    busy: busyShare(i.shares),
    clientCores: i.clientCpuSeconds !== undefined && i.seconds > 0 ? i.clientCpuSeconds / i.seconds : undefined,
    serverCores,
    commitsPerSecond: i.seconds > 0 ? i.commits / i.seconds : 0,
    readsEarly: early,
    readsLate: late,
    ioEarly: io.early,
    ioLate: io.late,
    starved: (serverCores !== undefined && serverCores < 0.5 * i.shares.cpu * i.workers) || (i.loadAverage !== undefined && i.loadAverage > 1.5 * i.cores),
  };
}

/** "on CPU 85%, WAL 6% (WALSync), extension lock 4%": the busy classes of 1% and more, largest first. */
export function describeShares(i: Pick<DiagnosisInput, 'shares' | 'events'>): string {
  const parts = WAIT_CLASSES.filter((c) => c !== 'client' && i.shares[c] >= 0.01)
    .sort((a, b) => i.shares[b] - i.shares[a])
    .map((c) => {
      const top = i.events.find((e) => e.class === c);
      // name the event when it is most of its class
      const event = top && c !== 'cpu' && top.share >= 0.6 * i.shares[c] ? ` (${top.event.split(':')[1]})` : '';
      return `${WAIT_CLASS_LABELS[c]} ${pct(i.shares[c])}${event}`;
    });
  return parts.length > 0 ? parts.join(', ') : 'no class above 1%';
}

/** The verdict: the first rule that holds, with the numbers behind it. */
export function diagnose(input: DiagnosisInput): Verdict {
  const d = derive(input);
  const rule = RULES.find((r) => r.when(input, d))!;
  const bound = typeof rule.bound === 'string' ? rule.bound : rule.bound(input, d);
  const change = rule.change(input, d);
  const cpu = [
    d.serverCores !== undefined ? `its backends used ${d.serverCores.toFixed(2)} of ${input.cores} cores` : undefined,
    d.clientCores !== undefined ? `pgsurge ${d.clientCores.toFixed(2)}` : undefined,
  ].filter((s) => s !== undefined);
  const text =
    rule.id === 'too-short'
      ? `too few looks at the backends (${input.looks}) to say where the time went — ${change}`
      : `the server was busy ${pct(d.busy)} of the load: ${describeShares(input)}; it waited for pgsurge ${pct(input.shares.client)}` +
        (cpu.length > 0 ? ` (${cpu.join('; ')})` : '') +
        ` — bound by ${bound}: ${change}`;
  return { rule: rule.id, bound, change, why: typeof rule.why === 'string' ? rule.why : rule.why(input), busy: d.busy, shares: input.shares, text };
}
