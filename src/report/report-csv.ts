import type { Interval, Sample } from '../metrics/series.js';
import type { LoadReport } from './report-data.js';

/** The CSV columns: the series name, the cumulative sample, then the rates of the interval ending at it. */
export const SAMPLE_COLUMNS = [
  'seconds',
  'rowsLoaded',
  'bytesLoaded',
  'rowsInTable',
  'heapBytes',
  'indexBytes',
  'walBytes',
  'checkpointsTimed',
  'checkpointsRequested',
  'heapBlocksRead',
  'heapBlocksHit',
  'indexBlocksRead',
  'indexBlocksHit',
  'clientCpuSeconds',
] as const satisfies readonly (keyof Sample)[];

export const INTERVAL_COLUMNS = ['rowsPerSecond', 'mbPerSecond', 'walBytesPerRow', 'checkpoints', 'indexHitRatio', 'clientCpu'] as const satisfies readonly (keyof Interval)[];

export const CSV_COLUMNS = ['series', ...SAMPLE_COLUMNS, ...INTERVAL_COLUMNS] as const;

function cell(v: string | number | undefined): string {
  if (v === undefined) return '';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(8)));
  return /[",\n\r]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** One row per sample; the first sample of a series has empty rate columns (no interval ends there). */
export function reportCsv(report: LoadReport): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const series of report.series) {
    // intervals skip zero-length gaps, so match each interval to the sample it ends at by time
    const byEnd = new Map(series.intervals.map((i) => [i.endSeconds, i]));
    series.samples.forEach((s, k) => {
      const interval = k === 0 ? undefined : byEnd.get(s.seconds);
      lines.push([cell(series.name), ...SAMPLE_COLUMNS.map((c) => cell(s[c])), ...INTERVAL_COLUMNS.map((c) => cell(interval?.[c]))].join(','));
    });
  }
  return `${lines.join('\n')}\n`;
}
