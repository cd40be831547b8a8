import cliProgress from 'cli-progress';
import { inputBytesOf } from '../core/chunk.js';
import { formatCount as count } from '../core/format-count.js';
import type { LoadReporter } from '../metrics/load-counters.js';
import type { SampleListener } from '../metrics/sampler.js';
import type { Interval, Sample } from '../metrics/series.js';
import { MB, perSecond } from '../metrics/rates.js';

/**
 * Progress while a load runs, on stderr (stdout stays for results):
 * - `tty`: a live bar (cli-progress): rows and percent, rows/s now and on average, MB/s,
 *   ETA, table + index size from the latest sample;
 * - `lines`: one plain line per sample, for logs and pipes;
 * - `json`: one NDJSON `sample` event per sample on stdout, for other programs;
 * - `quiet`: nothing (the CLI still prints the summary).
 */
export type ProgressMode = 'tty' | 'lines' | 'json' | 'quiet';

export interface ProgressOptions {
  readonly mode: ProgressMode;
  /** Where progress goes (the CLI's stderr). */
  readonly stream: NodeJS.WritableStream;
  /** Where NDJSON events go (the CLI's stdout). */
  readonly out: NodeJS.WritableStream;
  /** Rows the load will bring, when known: percent and ETA from rows, else from bytes. */
  readonly totalRows?: number;
  readonly clock?: () => number;
}

export type ProgressReporter = LoadReporter &
  SampleListener & {
    finish(): void;
    /** What the bar would show now. */
    state(): ProgressState;
  };

/** The mode for the command line's flags and the stream: `--json`, `--quiet`, a terminal or not. */
export function progressMode(flags: { json?: boolean; quiet?: boolean }, stream: { isTTY?: boolean }): ProgressMode {
  if (flags.json) return 'json';
  if (flags.quiet) return 'quiet';
  return stream.isTTY === true ? 'tty' : 'lines';
}

/** What the progress output knows at one moment; the text is a pure function of it. */
export interface ProgressState {
  readonly seconds: number;
  readonly rows: number;
  readonly bytes: number;
  readonly totalRows: number | undefined;
  readonly totalBytes: number | undefined;
  readonly rowsPerSecondNow: number;
  readonly heapBytes: number | undefined;
  readonly indexBytes: number | undefined;
}

export function percentDone(s: Pick<ProgressState, 'rows' | 'bytes' | 'totalRows' | 'totalBytes'>): number | undefined {
  if (s.totalRows !== undefined && s.totalRows > 0) return Math.min(100, (100 * s.rows) / s.totalRows);
  if (s.totalBytes !== undefined && s.totalBytes > 0) return Math.min(100, (100 * s.bytes) / s.totalBytes);
  return undefined;
}

/** Seconds left at the average rate so far, from the share done. */
export function etaSeconds(s: ProgressState): number | undefined {
  const pct = percentDone(s);
  if (pct === undefined || pct <= 0 || s.seconds <= 0) return undefined;
  return (s.seconds * (100 - pct)) / pct;
}

const mb = (bytes: number): string => `${(bytes / MB).toFixed(bytes < 10 * MB ? 1 : 0)} MB`;

export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** The numbers after the bar: `1,250,000 rows 25.0% | 98,000 rows/s now, 104,000 avg | 4.3 MB/s | ETA 38s | table 52 MB + index 27 MB`. */
export function formatProgress(s: ProgressState): string {
  const pct = percentDone(s);
  const eta = etaSeconds(s);
  const parts = [
    `${count(s.rows)} rows${pct !== undefined ? ` ${pct.toFixed(1)}%` : ''}`,
    `${count(s.rowsPerSecondNow)} rows/s now, ${count(perSecond(s.rows, s.seconds))} avg`,
    `${perSecond(s.bytes / MB, s.seconds).toFixed(1)} MB/s`,
  ];
  if (eta !== undefined) parts.push(`ETA ${formatDuration(eta)}`);
  if (s.heapBytes !== undefined) parts.push(`table ${mb(s.heapBytes)} + index ${mb(s.indexBytes ?? 0)}`);
  return parts.join(' | ');
}

/** One plain line for a sample: `12.0s  1,250,000 rows 25.0% | 98,000 rows/s, 4.3 MB/s | table 52 MB + index 27 MB | WAL 120 B/row | 1 checkpoint`. */
export function formatSampleLine(sample: Sample, interval: Interval | undefined, totals: { totalRows?: number; totalBytes?: number }): string {
  const pct = percentDone({ rows: sample.rowsLoaded, bytes: sample.bytesLoaded, totalRows: totals.totalRows, totalBytes: totals.totalBytes });
  const parts = [`${sample.seconds.toFixed(1)}s  ${count(sample.rowsLoaded)} rows${pct !== undefined ? ` ${pct.toFixed(1)}%` : ''}`];
  if (interval) parts.push(`${count(interval.rowsPerSecond)} rows/s, ${interval.mbPerSecond.toFixed(1)} MB/s`);
  parts.push(`table ${mb(sample.heapBytes)} + index ${mb(sample.indexBytes)}`);
  if (interval?.walBytesPerRow !== undefined) parts.push(`WAL ${interval.walBytesPerRow.toFixed(0)} B/row`);
  const cp = sample.checkpointsTimed + sample.checkpointsRequested;
  parts.push(`${cp} checkpoint${cp === 1 ? '' : 's'}`);
  return parts.join(' | ');
}

/** The NDJSON event for a sample: the cumulative sample and the interval's rates. */
export function sampleEvent(index: number, sample: Sample, interval: Interval | undefined): Record<string, unknown> {
  return { event: 'sample', index, ...sample, interval: interval ?? null };
}

/** Rows/s over the last few seconds of chunk completions. */
class RecentRate {
  private readonly points: { at: number; rows: number }[] = [];
  constructor(private readonly windowMs = 5000) {}
  add(at: number, rows: number): void {
    this.points.push({ at, rows });
    while (this.points.length > 2 && this.points[0]!.at < at - this.windowMs) this.points.shift();
  }
  /** Rows completed after the window's first chunk, over the time since it; the average since `start` until a second has passed. */
  rate(start: number, now: number): number {
    const first = this.points[0];
    if (!first) return 0;
    if (this.points.length < 2 || now - first.at < 1000) return perSecond(this.points.reduce((s, p) => s + p.rows, 0), (now - start) / 1000);
    const rows = this.points.slice(1).reduce((s, p) => s + p.rows, 0);
    return perSecond(rows, (now - first.at) / 1000);
  }
}

export function progressReporter(options: ProgressOptions): ProgressReporter {
  const { stream, out } = options;
  const clock = options.clock ?? (() => performance.now());
  let rows = 0;
  let bytes = 0;
  let totalBytes: number | undefined;
  let started = clock();
  let last: Sample | undefined;
  const recent = new RecentRate();
  let bar: cliProgress.SingleBar | undefined;

  const state = (): ProgressState => {
    const now = clock();
    return {
      seconds: (now - started) / 1000,
      rows,
      bytes,
      totalRows: options.totalRows,
      totalBytes,
      rowsPerSecondNow: recent.rate(started, now),
      heapBytes: last?.heapBytes,
      indexBytes: last?.indexBytes,
    };
  };
  const barTotal = (): number => options.totalRows ?? totalBytes ?? 0;
  const barValue = (): number => (options.totalRows !== undefined ? rows : bytes);
  const redraw = (): void => bar?.update(Math.min(barValue(), barTotal()), { text: formatProgress(state()) });

  return {
    start(info) {
      totalBytes = info.totalBytes;
      started = clock();
      if (options.mode === 'tty') {
        const known = barTotal() > 0;
        bar = new cliProgress.SingleBar(
          { stream, format: known ? '{bar} {text}' : '{text}', hideCursor: true, clearOnComplete: true, fps: 5, barsize: 24, linewrap: false },
          cliProgress.Presets.shades_classic,
        );
        bar.start(known ? barTotal() : 1, 0, { text: formatProgress(state()) });
      }
    },
    chunkLoaded(info) {
      rows += info.rows;
      bytes += inputBytesOf(info.chunk.location);
      recent.add(clock(), info.rows);
      redraw();
    },
    sample({ sample, interval, index }) {
      last = sample;
      if (options.mode === 'lines') stream.write(`${formatSampleLine(sample, interval, { totalRows: options.totalRows, totalBytes })}\n`);
      else if (options.mode === 'json') out.write(`${JSON.stringify(sampleEvent(index, sample, interval))}\n`);
      else redraw();
    },
    sampleFailed(error) {
      if (options.mode === 'quiet' || options.mode === 'json') return;
      bar?.stop();
      bar = undefined;
      stream.write(`pgsurge: a sample failed (the load goes on): ${(error as Error).message}\n`);
    },
    finish() {
      bar?.stop();
      bar = undefined;
    },
    state,
  };
}

/** Several reporters as one; `start` waits for all of them. */
export function allReporters(...reporters: readonly (LoadReporter | undefined)[]): LoadReporter {
  const list = reporters.filter((r): r is LoadReporter => r !== undefined);
  return {
    async start(info) {
      for (const r of list) await r.start?.(info);
    },
    chunkLoaded(info) {
      for (const r of list) r.chunkLoaded?.(info);
    },
    note(message) {
      for (const r of list) r.note?.(message);
    },
    warning(message) {
      for (const r of list) r.warning?.(message);
    },
    workersNamed(prefix) {
      for (const r of list) r.workersNamed?.(prefix);
    },
    retrying(info) {
      for (const r of list) r.retrying?.(info);
    },
  };
}
