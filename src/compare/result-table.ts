import { formatBytes } from '../core/format-count.js';
import { formatCount } from '../core/format-count.js';
import { renderTable } from '../report/summary-format.js';
import type { CompareResult } from './run-compare.js';

/** The comparison as one plain table, fastest variant = 1.00. */
export function formatCompareTable(result: CompareResult): string {
  const firstLabel = result.results[0]?.variant.label ?? '';
  const header = ['variant', 'workers', 'rows/s', 'min–max rows/s', 'MB/s', '× fastest', `× ${firstLabel} (paired)`, 'WAL B/row', 'client CPU s', 'table size'];
  const rows = result.results.map((r) => [
    r.variant.label,
    String(r.workers),
    formatCount(r.median.rowsPerSecond),
    `${formatCount(r.min.rowsPerSecond)}–${formatCount(r.max.rowsPerSecond)}`,
    r.median.mbPerSecond.toFixed(1),
    r.ratioToFastest.toFixed(2),
    r.pairedRatioToFirst.toFixed(2),
    r.median.walBytesPerRow.toFixed(0),
    r.median.clientCpuSeconds.toFixed(2),
    formatBytes(r.median.tableBytes),
  ]);
  const rowsLoaded = result.results.map((r) => r.rows);
  const same = rowsLoaded.every((n) => n === rowsLoaded[0]);
  const notes = [
    `${formatCount(rowsLoaded[0] ?? 0)} rows${same ? '' : ' (the variants loaded different row counts!)'} from ${result.file}${result.maxRows !== undefined ? ` (first ${formatCount(result.maxRows)} rows)` : ''}, ${result.repeat} run${result.repeat === 1 ? '' : 's'} each, interleaved; medians shown`,
    `server: ${result.serverVersion.split(' on ')[0]}, ${result.target}`,
    'WAL bytes are cluster-wide: anything else writing on the server at the time counts too',
    // Which wire each COPY variant went through (its last run), and why when text.
    ...result.results.flatMap((r) => (r.runs.at(-1)?.wire !== undefined ? [`${r.variant.label}: ${r.runs.at(-1)!.wire}`] : [])),
  ];
  return `${renderTable(header, rows)}\n\n${notes.join('\n')}`;
}

/** The same figures as JSON (every run included). */
export function compareJson(result: CompareResult): string {
  return `${JSON.stringify(result, null, 2)}\n`;
}
