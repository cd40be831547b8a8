import { renderTable } from './summary-format.js';
import { formatCount as count } from '../core/format-count.js';
import { MB } from '../metrics/rates.js';
import { WAIT_CLASS_LABELS, WAIT_CLASSES } from '../metrics/wait-classes.js';
import { earlyLevel, findKnee, kneeSearchStart, lowestShare, type Interval, type Knee, type KneeOptions, DEFAULT_KNEE } from '../metrics/series.js';

const mb = (b: number): string => (b / MB).toFixed(0);

/** `2,250,000` → `2.25M`; for axis labels and sentences. */
export function shortCount(n: number): string {
  if (n >= 1e6) return `${Number((n / 1e6).toFixed(2))}M`;
  if (n >= 1e3) return `${Number((n / 1e3).toFixed(1))}k`;
  return String(Math.round(n));
}

/** The curve, one row per bucket: rows in the table at its end, the rate, and what the server saw. */
export function decayTable(intervals: readonly Interval[], knee?: Knee): string {
  const rows = intervals.map((i, k) => [
    count(i.toRows),
    count(i.rowsPerSecond),
    i.mbPerSecond.toFixed(1),
    i.walBytesPerRow === undefined ? '-' : i.walBytesPerRow.toFixed(0),
    mb(i.heapBytes),
    mb(i.indexBytes),
    String(i.checkpoints),
    count(i.indexBlocksRead),
    i.indexHitRatio === undefined ? '-' : `${(100 * i.indexHitRatio).toFixed(1)}%`,
    knee?.index === k ? '<- knee' : '',
  ]);
  return renderTable(['rows in table', 'rows/s', 'MB/s', 'WAL B/row', 'table MB', 'index MB', 'ckpts', 'idx blks read', 'idx hit', ''], rows);
}

/** Rows/s against rows in the table as horizontal bars, one per bucket: plain ASCII, fits 80 columns. */
export function asciiDecayChart(intervals: readonly Interval[], knee?: Knee, width = 46): string {
  const max = Math.max(0, ...intervals.map((i) => i.rowsPerSecond));
  if (intervals.length === 0 || max <= 0) return '(no intervals to chart)';
  const labels = intervals.map((i) => shortCount(i.toRows));
  const lw = Math.max(...labels.map((l) => l.length), 'rows'.length);
  const lines = [`${'rows'.padStart(lw)} | rows/s (full bar = ${count(max)})`];
  intervals.forEach((i, k) => {
    const n = Math.round((width * i.rowsPerSecond) / max);
    lines.push(`${labels[k]!.padStart(lw)} | ${'#'.repeat(n)}${' '.repeat(width - n)} ${shortCount(i.rowsPerSecond)}${knee?.index === k ? '  <- knee' : ''}`);
  });
  return lines.join('\n');
}

const times = (bytes: number, sharedBuffers: number): string => (sharedBuffers > 0 ? ` (${(bytes / sharedBuffers).toFixed(2)}× shared_buffers)` : '');

/** One or two sentences: where the knee is and how big table and index were there, or that there is none. */
export function describeKnee(intervals: readonly Interval[], sharedBuffersBytes: number, sharedBuffersShown: string, options: KneeOptions = DEFAULT_KNEE): { knee: Knee | undefined; text: string } {
  const knee = findKnee(intervals, options);
  const early = earlyLevel(intervals, options);
  const pct = `${Math.round(options.fraction * 100)}%`;
  if (early === undefined || intervals.length <= kneeSearchStart(options)) {
    return { knee, text: `too few buckets to look for a knee (${intervals.length}; need more than ${kneeSearchStart(options)})` };
  }
  if (knee) {
    return {
      knee,
      text:
        `knee at ${shortCount(knee.fromRows)}–${shortCount(knee.toRows)} rows: ${count(knee.rowsPerSecond)} rows/s, ${(100 * knee.share).toFixed(0)}% of the early ${count(early)} rows/s (median of buckets ${options.skip + 1}–${kneeSearchStart(options)}) ` +
        `(first bucket below ${pct} for ${options.sustain} bucket${options.sustain === 1 ? '' : 's'} in a row). ` +
        `There the table was ${mb(knee.heapBytes)} MB${times(knee.heapBytes, sharedBuffersBytes)} and the index ${mb(knee.indexBytes)} MB${times(knee.indexBytes, sharedBuffersBytes)}; shared_buffers = ${sharedBuffersShown}.`,
    };
  }
  const low = lowestShare(intervals, options);
  const at = low ? intervals[low.index] : undefined;
  return {
    knee,
    text:
      `no knee: rows/s never stayed below ${pct} of the early ${count(early)} rows/s (median of buckets ${options.skip + 1}–${kneeSearchStart(options)})` +
      (low && at ? `; the slowest bucket (at ${shortCount(at.toRows)} rows) ran at ${(100 * low.share).toFixed(0)}%` : '') +
      (at ? `. At the end the table was ${mb(intervals.at(-1)!.heapBytes)} MB${times(intervals.at(-1)!.heapBytes, sharedBuffersBytes)} and the index ${mb(intervals.at(-1)!.indexBytes)} MB${times(intervals.at(-1)!.indexBytes, sharedBuffersBytes)}; shared_buffers = ${sharedBuffersShown}.` : '.'),
  };
}

/**
 * The decay curve explained: per bucket, rows/s beside the share of looks in each wait
 * class (only classes that reach 1% somewhere), so the knee shows as data file reads
 * taking over from CPU.
 */
export function waitClassTable(intervals: readonly Interval[]): string {
  const shown = WAIT_CLASSES.filter((c) => intervals.some((i) => (i.waits?.[c] ?? 0) >= 0.01));
  const rows = intervals.map((i) => [
    count(i.toRows),
    count(i.rowsPerSecond),
    ...shown.map((c) => (i.waits ? `${(100 * i.waits[c]).toFixed(0)}%` : '-')),
    i.serverCpu === undefined ? '-' : i.serverCpu.toFixed(2),
  ]);
  return renderTable(['rows in table', 'rows/s', ...shown.map((c) => WAIT_CLASS_LABELS[c]), 'server cores'], rows);
}
