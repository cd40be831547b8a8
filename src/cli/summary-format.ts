import type { LoadSummary } from '../metrics/load-counters.js';
import { MB } from '../metrics/rates.js';

/** Renders rows as a plain aligned table (numbers right-aligned). */
export function renderTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const numeric = header.map((_, i) => rows.length > 0 && rows.every((r) => /^[-\d.,:]+\s*[a-zA-Z/%]*$/.test(r[i] ?? '')));
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function formatCount(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function formatSummary(summary: LoadSummary): string {
  // Skipped rows (`--on-conflict skip`) get their own columns only when there are any.
  const withSkipped = summary.total.skipped > 0;
  const counts = (t: { rows: number; skipped: number; read: number }): string[] =>
    withSkipped ? [formatCount(t.read), formatCount(t.rows), formatCount(t.skipped)] : [formatCount(t.rows)];
  const rows = summary.tables.map((t) => [
    t.table,
    ...counts(t),
    (t.bytes / MB).toFixed(1),
    t.seconds.toFixed(2),
    formatCount(t.rowsPerSecond),
    t.mbPerSecond.toFixed(1),
  ]);
  const s = summary.total;
  if (summary.tables.length > 1) rows.push(['total', ...counts(s), (s.bytes / MB).toFixed(1), s.seconds.toFixed(2), formatCount(s.rowsPerSecond), s.mbPerSecond.toFixed(1)]);
  const table = renderTable(['table', ...(withSkipped ? ['read', 'loaded', 'skipped'] : ['rows']), 'MB', 'seconds', 'rows/s', 'MB/s'], rows);
  const skippedNote = withSkipped ? ` (read ${formatCount(s.read)} = loaded ${formatCount(s.rows)} + skipped ${formatCount(s.skipped)} on conflict)` : '';
  return `${table}\n\nloaded ${formatCount(s.rows)} rows${skippedNote} in ${s.seconds.toFixed(2)} s with ${summary.workers} worker${summary.workers === 1 ? '' : 's'} into ${summary.target}`;
}
