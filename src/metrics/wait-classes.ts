/**
 * What a load's backend is doing at one look at `pg_stat_activity`, in the classes a DBA
 * reasons with. Names of wait events differ between versions (WALWriteLock became the
 * LWLock `WALWrite` in 13; the extension lock is the heavyweight Lock `extend` in every
 * version this tool supports, and `DataFileExtend` its IO event, seen on 15 and 18): both spellings
 * are listed, and 17's new spelling of the IO events (WalSync) is matched without case,
 * so the same load classifies alike on 15 and 18.
 */
export const WAIT_CLASSES = ['cpu', 'client', 'wal', 'extension', 'dataRead', 'dataWrite', 'buffer', 'checkpoint', 'lock', 'other'] as const;
export type WaitClass = (typeof WAIT_CLASSES)[number];

/** How each class reads in sentences and legends. */
export const WAIT_CLASS_LABELS: Readonly<Record<WaitClass, string>> = {
  cpu: 'on CPU',
  client: 'waiting for pgsurge',
  wal: 'WAL',
  extension: 'extension lock',
  dataRead: 'data file reads',
  dataWrite: 'data file writes',
  buffer: 'buffer contention',
  checkpoint: 'checkpoints',
  lock: 'locks',
  other: 'other waits',
};

/** Counts of looks per class: how many times a backend of the load was seen in each. */
export type WaitCounts = Readonly<Record<WaitClass, number>>;

export const NO_WAITS: WaitCounts = Object.freeze(Object.fromEntries(WAIT_CLASSES.map((c) => [c, 0])) as Record<WaitClass, number>);

// wait_event_type → wait_event → class, for the events that are not "other of their type".
const BY_EVENT: Readonly<Record<string, Readonly<Record<string, WaitClass>>>> = {
  IO: {
    WALWrite: 'wal',
    WALSync: 'wal',
    WALInitWrite: 'wal',
    WALInitSync: 'wal',
    WALRead: 'wal',
    WALCopyWrite: 'wal',
    WALCopySync: 'wal',
    WALBootstrapWrite: 'wal',
    WALBootstrapSync: 'wal',
    DataFileRead: 'dataRead',
    DataFilePrefetch: 'dataRead',
    DataFileWrite: 'dataWrite',
    DataFileFlush: 'dataWrite',
    DataFileSync: 'dataWrite',
    DataFileTruncate: 'dataWrite',
    // writing the new block at the end of the relation (16+: a run of zeroed blocks): part of extending it
    DataFileExtend: 'extension',
    BufFileRead: 'dataRead',
    // 18's asynchronous I/O: a backend waiting for a read it handed to an I/O worker (a load's I/O is reads)
    AioIoCompletion: 'dataRead',
    BufFileWrite: 'dataWrite',
  },
  LWLock: {
    WALWrite: 'wal',
    WALWriteLock: 'wal',
    WALInsert: 'wal',
    WALBufMapping: 'wal',
    WALBufMappingLock: 'wal',
    BufferMapping: 'buffer',
    BufferContent: 'buffer',
    BufferIO: 'buffer',
    // the relation extension lock became an LWLock-like wait in some builds; both say "extending"
    RelationExtension: 'extension',
    CheckpointerComm: 'checkpoint',
    CheckpointerCommLock: 'checkpoint',
  },
  Lock: {
    extend: 'extension',
  },
  IPC: {
    SyncRep: 'wal',
    CheckpointStart: 'checkpoint',
    CheckpointDone: 'checkpoint',
    BufferIO: 'buffer',
  },
  Timeout: {
    CommitDelay: 'wal',
    RegisterSyncRequest: 'checkpoint',
  },
};

// 17 renamed the IO events' spelling (WALSync → WalSync): look them up without case.
const BY_EVENT_LOWER: ReadonlyMap<string, WaitClass> = new Map(
  Object.entries(BY_EVENT).flatMap(([type, events]) => Object.entries(events).map(([event, c]) => [`${type}:${event}`.toLowerCase(), c] as const)),
);

/**
 * One backend at one look: its state and wait event → a class, or undefined for a
 * backend that does not count (gone, or running the sampler's own query).
 * `idle` and `idle in transaction` backends wait for their client: that is pgsurge
 * keeping the server waiting, whatever the wait event says.
 */
export function classifyWait(state: string | null, waitEventType: string | null, waitEvent: string | null): WaitClass | undefined {
  if (state === null || state === 'disabled') return undefined;
  if (state === 'idle' || state.startsWith('idle in transaction')) return 'client';
  if (waitEventType === null || waitEventType === '') return 'cpu';
  if (waitEventType === 'Client') return 'client';
  const known = BY_EVENT_LOWER.get(`${waitEventType}:${waitEvent ?? ''}`.toLowerCase());
  if (known) return known;
  if (waitEventType === 'BufferPin') return 'buffer';
  if (waitEventType === 'Lock') return 'lock';
  return 'other';
}

export function addWaits(a: WaitCounts, b: WaitCounts): WaitCounts {
  return Object.fromEntries(WAIT_CLASSES.map((c) => [c, a[c] + b[c]])) as WaitCounts;
}

export function subtractWaits(a: WaitCounts, b: WaitCounts): WaitCounts {
  return Object.fromEntries(WAIT_CLASSES.map((c) => [c, a[c] - b[c]])) as WaitCounts;
}

export function totalWaits(w: WaitCounts): number {
  return WAIT_CLASSES.reduce((n, c) => n + w[c], 0);
}

/** Each class's share of the looks (0–1); all zero when there were none. */
export type WaitShares = Readonly<Record<WaitClass, number>>;

export function waitShares(w: WaitCounts): WaitShares {
  const total = totalWaits(w);
  return Object.fromEntries(WAIT_CLASSES.map((c) => [c, total > 0 ? w[c] / total : 0])) as WaitShares;
}

/** Share of the looks in which the server worked or waited on itself, i.e. was not waiting for pgsurge. */
export function busyShare(s: WaitShares): number {
  return WAIT_CLASSES.reduce((n, c) => (c === 'client' ? n : n + s[c]), 0);
}
