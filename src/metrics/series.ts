import { MB, perSecond } from './rates.js';
import { subtractWaits, totalWaits, waitShares, type WaitCounts, type WaitShares } from './wait-classes.js';

/**
 * One sample taken during a load: the loader's counters and the server's facts at one
 * moment, cumulative since the load started (except sizes and rows in the table, which
 * are absolute). Snapshots only; every rate is derived from two of them by the pure
 * functions below.
 */
export interface Sample {
  /** Seconds since the load started (client clock). */
  readonly seconds: number;
  /** Rows the server confirmed so far in this load. */
  readonly rowsLoaded: number;
  /** Input bytes those rows came from. */
  readonly bytesLoaded: number;
  /**
   * Rows loaded, with the rows of each chunk committed later counted for the share of its
   * sending time (first byte to commit) that had passed at this sample; bytes the same.
   * What rates are drawn from: a chunk's rows arrive over its time, not all at its commit
   * (absent where no chunk was under way: the same as `rowsLoaded`).
   */
  readonly rowsStreamed?: number;
  readonly bytesStreamed?: number;
  /** Rows in the table(s): rows before the load + rows loaded. */
  readonly rowsInTable: number;
  /** `pg_table_size` of the table(s) (heap, TOAST, free space and visibility maps), a partitioned table's summed over its partitions. */
  readonly heapBytes: number;
  /** `pg_indexes_size` of the table(s), likewise: with `heapBytes`, `pg_total_relation_size`. */
  readonly indexBytes: number;
  /** WAL the server wrote since the load started (all sessions: `pg_current_wal_lsn()` difference). */
  readonly walBytes: number;
  /** Checkpoints since the load started, on schedule (`checkpoint_timeout`) … */
  readonly checkpointsTimed: number;
  /** … and requested (`max_wal_size` reached, or CHECKPOINT). */
  readonly checkpointsRequested: number;
  /** Blocks of the table(s) read from outside shared_buffers / found in them since the start (`pg_statio_user_tables`). */
  readonly heapBlocksRead: number;
  readonly heapBlocksHit: number;
  /** The same for their indexes. */
  readonly indexBlocksRead: number;
  readonly indexBlocksHit: number;
  /** The loader process's CPU since the start (`process.cpuUsage()`), seconds. */
  readonly clientCpuSeconds: number;
  /** Looks at the load's backends per wait class since the start (wait sampling on). */
  readonly waits?: WaitCounts;
  /** CPU seconds of the load's backends since the start (a server on this machine only). */
  readonly serverCpuSeconds?: number;
}

/** What happened between two samples. */
export interface Interval {
  /** Seconds since the start, at the interval's end. */
  readonly endSeconds: number;
  readonly seconds: number;
  /** Rows in the table at the interval's start and end. */
  readonly fromRows: number;
  readonly toRows: number;
  /** Rows in the table at the end counting the rows streamed (`Sample.rowsStreamed`): where a timer's sample sits on a rows axis. */
  readonly toRowsStreamed: number;
  readonly rows: number;
  readonly rowsPerSecond: number;
  readonly mbPerSecond: number;
  /** WAL bytes per row loaded in the interval (undefined when no row was loaded). */
  readonly walBytesPerRow: number | undefined;
  readonly checkpoints: number;
  /** Blocks read from outside shared_buffers in the interval (heap, index). */
  readonly heapBlocksRead: number;
  readonly indexBlocksRead: number;
  /** Share of index block accesses found in shared_buffers (undefined when there were none). */
  readonly indexHitRatio: number | undefined;
  /** Loader CPU in the interval as a share of one core. */
  readonly clientCpu: number;
  /** Share of the looks at the load's backends in each wait class during the interval (when sampled and looked at). */
  readonly waits?: WaitShares;
  /** The load's backends' CPU in the interval, in cores (a local server only). */
  readonly serverCpu?: number;
  /** Table and index size at the interval's end. */
  readonly heapBytes: number;
  readonly indexBytes: number;
}

const ratio = (part: number, whole: number): number | undefined => (whole > 0 ? part / whole : undefined);

const rowsStreamed = (s: Sample): number => s.rowsStreamed ?? s.rowsLoaded;
const bytesStreamed = (s: Sample): number => s.bytesStreamed ?? s.bytesLoaded;

/** The interval between two samples; its rates from the rows and bytes streamed, its `rows` those committed. */
export function intervalBetween(a: Sample, b: Sample): Interval {
  const seconds = b.seconds - a.seconds;
  const rows = b.rowsLoaded - a.rowsLoaded;
  const indexRead = b.indexBlocksRead - a.indexBlocksRead;
  const indexHit = b.indexBlocksHit - a.indexBlocksHit;
  return {
    endSeconds: b.seconds,
    seconds,
    fromRows: a.rowsInTable,
    toRows: b.rowsInTable,
    toRowsStreamed: b.rowsInTable - b.rowsLoaded + rowsStreamed(b),
    rows,
    rowsPerSecond: perSecond(rowsStreamed(b) - rowsStreamed(a), seconds),
    mbPerSecond: perSecond((bytesStreamed(b) - bytesStreamed(a)) / MB, seconds),
    walBytesPerRow: rows > 0 ? (b.walBytes - a.walBytes) / rows : undefined,
    checkpoints: b.checkpointsTimed + b.checkpointsRequested - a.checkpointsTimed - a.checkpointsRequested,
    heapBlocksRead: b.heapBlocksRead - a.heapBlocksRead,
    indexBlocksRead: indexRead,
    indexHitRatio: ratio(indexHit, indexHit + indexRead),
    clientCpu: perSecond(b.clientCpuSeconds - a.clientCpuSeconds, seconds),
    ...waitsBetween(a, b),
    heapBytes: b.heapBytes,
    indexBytes: b.indexBytes,
  };
}

function waitsBetween(a: Sample, b: Sample): Pick<Interval, 'waits' | 'serverCpu'> {
  const out: { waits?: WaitShares; serverCpu?: number } = {};
  if (a.waits && b.waits) {
    const d = subtractWaits(b.waits, a.waits);
    if (totalWaits(d) > 0) out.waits = waitShares(d);
  }
  if (a.serverCpuSeconds !== undefined && b.serverCpuSeconds !== undefined) out.serverCpu = perSecond(b.serverCpuSeconds - a.serverCpuSeconds, b.seconds - a.seconds);
  return out;
}

/** Consecutive samples → intervals (one fewer); intervals of zero length are merged into the next. */
export function intervalsOf(samples: readonly Sample[]): Interval[] {
  const out: Interval[] = [];
  let from = samples[0];
  for (const s of samples.slice(1)) {
    if (from === undefined || s.seconds <= from.seconds) continue;
    out.push(intervalBetween(from, s));
    from = s;
  }
  return out;
}

export function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export interface KneeOptions {
  /** Intervals left out at the start (connections opening, caches filling). */
  readonly skip: number;
  /** Intervals after those whose median rate is the early level. */
  readonly earlyIntervals: number;
  /** The knee is where the rate drops below this share of the early level. */
  readonly fraction: number;
  /**
   * Intervals in a row that must stay below it (the last interval may stand alone), so
   * one interval slowed by a checkpoint or a neighbour's burst is not called a knee.
   */
  readonly sustain: number;
}

export const DEFAULT_KNEE: KneeOptions = { skip: 1, earlyIntervals: 3, fraction: 0.5, sustain: 2 };

export interface Knee {
  /** Index of the interval in the series. */
  readonly index: number;
  /** Rows in the table at the start and end of that interval. */
  readonly fromRows: number;
  readonly toRows: number;
  readonly rowsPerSecond: number;
  readonly earlyRowsPerSecond: number;
  /** rowsPerSecond / earlyRowsPerSecond. */
  readonly share: number;
  readonly heapBytes: number;
  readonly indexBytes: number;
}

/** The early level: the median rate of the first intervals (after the skipped ones). */
export function earlyLevel(intervals: readonly Interval[], options: KneeOptions = DEFAULT_KNEE): number | undefined {
  return median(intervals.slice(options.skip, options.skip + options.earlyIntervals).map((i) => i.rowsPerSecond));
}

/** The first interval that can be a knee: after the skipped and the early ones. */
export function kneeSearchStart(options: KneeOptions = DEFAULT_KNEE): number {
  return options.skip + options.earlyIntervals;
}

/**
 * The knee of a decay curve: the first interval after the early ones whose rate is below
 * `fraction` of the early level and stays there for `sustain` intervals. Undefined when
 * the rate never falls that far (or there are too few intervals to say).
 */
export function findKnee(intervals: readonly Interval[], options: KneeOptions = DEFAULT_KNEE): Knee | undefined {
  const early = earlyLevel(intervals, options);
  if (early === undefined || early <= 0 || intervals.length <= kneeSearchStart(options)) return undefined;
  const low = (i: Interval): boolean => i.rowsPerSecond < options.fraction * early;
  for (let k = kneeSearchStart(options); k < intervals.length; k++) {
    const run = intervals.slice(k, k + options.sustain);
    if (!run.every(low)) continue;
    const at = intervals[k]!;
    return {
      index: k,
      fromRows: at.fromRows,
      toRows: at.toRows,
      rowsPerSecond: at.rowsPerSecond,
      earlyRowsPerSecond: early,
      share: at.rowsPerSecond / early,
      heapBytes: at.heapBytes,
      indexBytes: at.indexBytes,
    };
  }
  return undefined;
}

/** The slowest interval after the early ones, relative to the early level (for "no knee: lowest was 72 %"). */
export function lowestShare(intervals: readonly Interval[], options: KneeOptions = DEFAULT_KNEE): { index: number; share: number } | undefined {
  const early = earlyLevel(intervals, options);
  if (early === undefined || early <= 0) return undefined;
  let best: { index: number; share: number } | undefined;
  for (let k = kneeSearchStart(options); k < intervals.length; k++) {
    const share = intervals[k]!.rowsPerSecond / early;
    if (best === undefined || share < best.share) best = { index: k, share };
  }
  return best;
}
