import type { LoadSummary } from '../metrics/load-counters.js';
import { MB } from '../metrics/rates.js';
import { formatCount } from '../core/format-count.js';
import { wireLines } from '../wire/wire-report.js';
import type { Diagnosis } from '../diagnose/diagnose-load.js';
import { totalWaits, WAIT_CLASS_LABELS, WAIT_CLASSES, waitShares } from '../metrics/wait-classes.js';

/** Renders rows as a plain aligned table (numbers right-aligned). */
export function renderTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const numeric = header.map((_, i) => rows.length > 0 && rows.every((r) => /^[-\d.,:]+\s*[a-zA-Z/%]*$/.test(r[i] ?? '')));
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/**
 * The load in one line: rows loaded of rows read (with the accounting when some were not
 * loaded), the seconds and rows/s as the table shows them (first chunk sent to last chunk
 * committed), the whole load's time when it differs, workers, target.
 */
function totalsLine(summary: LoadSummary): string {
  const s = summary.total;
  const [loaded, skipped] = countNames(summary);
  const accounting = s.rejected + s.skipped > 0 ? ` (read ${formatCount(s.read)} = ${loaded} ${formatCount(s.loaded)} + rejected ${formatCount(s.rejected)} + ${skipped} ${formatCount(s.skipped)})` : '';
  return `${loaded} ${formatCount(s.loaded)} of ${formatCount(s.read)} ${summary.deletes ? 'keys' : 'rows'} read${accounting} in ${s.seconds.toFixed(2)} s (${formatCount(s.rowsPerSecond)} rows/s${s.elapsedSeconds.toFixed(2) !== s.seconds.toFixed(2) ? `; ${s.elapsedSeconds.toFixed(2)} s with connecting, planning and the end checks` : ''}) with ${summary.workers} worker${summary.workers === 1 ? '' : 's'} into ${summary.target}`;
}

/** What the summary calls its loaded and skipped counts: a delete's are the rows deleted and the keys that matched none. */
function countNames(summary: LoadSummary): readonly [string, string] {
  return summary.deletes ? ['deleted', 'not found'] : ['loaded', 'skipped'];
}

/** Where the load's rejected rows are, a line per reject file. */
export function rejectLines(summary: LoadSummary): string[] {
  return (summary.rejectFiles ?? []).map((f) => `rejected rows: ${f.path} (${formatCount(f.rows)}), why: ${f.path}.log`);
}

/** What `-q` prints of a load: the one line of its totals, what earlier runs of it had committed, its load id. */
export function formatQuietSummary(summary: LoadSummary): string {
  const e = (summary.files ?? []).reduce((a, f) => ({ loaded: a.loaded + f.earlier.loaded, rejected: a.rejected + f.earlier.rejected, skipped: a.skipped + f.earlier.skipped }), { loaded: 0, rejected: 0, skipped: 0 });
  const resumed = e.loaded + e.rejected + e.skipped > 0 ? `; earlier runs of this load had committed ${formatCount(e.loaded)} rows and rejected ${formatCount(e.rejected)}` : '';
  return `${totalsLine(summary)}${resumed}${summary.loadId ? `; load id ${summary.loadId}` : ''}`;
}

export function formatSummary(summary: LoadSummary): string {
  const rows = summary.tables.map((t) => [
    t.table,
    formatCount(t.read),
    formatCount(t.loaded),
    formatCount(t.rejected),
    formatCount(t.skipped),
    (t.bytes / MB).toFixed(1),
    t.seconds.toFixed(2),
    formatCount(t.rowsPerSecond),
    t.mbPerSecond.toFixed(1),
  ]);
  const s = summary.total;
  if (summary.tables.length > 1) {
    rows.push(['total', formatCount(s.read), formatCount(s.loaded), formatCount(s.rejected), formatCount(s.skipped), (s.bytes / MB).toFixed(1), s.seconds.toFixed(2), formatCount(s.rowsPerSecond), s.mbPerSecond.toFixed(1)]);
  }
  const [loaded, skipped] = countNames(summary);
  const parts = [renderTable(['table', 'read', loaded, 'rejected', skipped, 'MB', 'seconds', 'rows/s', 'MB/s'], rows)];

  // Per input: the accounting (read = loaded + rejected + skipped), and what earlier runs of the load committed.
  const files = summary.files ?? [];
  const resumed = files.some((f) => f.earlier.loaded + f.earlier.rejected + f.earlier.skipped > 0);
  if (files.length > 0) {
    const header = ['file', 'table', 'read', loaded, 'rejected', skipped, ...(resumed ? [`earlier runs: ${loaded}`, 'rejected', skipped] : [])];
    const fileRows = files.map((f) => [
      f.file,
      f.table,
      formatCount(f.read),
      formatCount(f.loaded),
      formatCount(f.rejected),
      formatCount(f.skipped),
      ...(resumed ? [formatCount(f.earlier.loaded), formatCount(f.earlier.rejected), formatCount(f.earlier.skipped)] : []),
    ]);
    parts.push(renderTable(header, fileRows));
  }
  const lines: string[] = [totalsLine(summary)];
  if (resumed) {
    const e = files.reduce((a, f) => ({ loaded: a.loaded + f.earlier.loaded, rejected: a.rejected + f.earlier.rejected }), { loaded: 0, rejected: 0 });
    lines.push(`resumed: earlier runs of this load had committed ${formatCount(e.loaded)} rows and rejected ${formatCount(e.rejected)}; those were not read again`);
  }
  if (summary.ledger === null) lines.push('the ledger could not be read (the server is gone?): what this load committed stays in the table, and a resume reads the ledger and loads only the rest');
  else if (summary.ledger !== undefined) {
    const l = summary.ledger;
    lines.push(`the ledger holds, for this load (all runs): ${formatCount(l.loaded)} rows loaded, ${formatCount(l.rejected)} rejected, ${formatCount(l.skipped)} skipped: those are in the table (or the reject file) and a resume skips them`);
  }
  for (const t of summary.tables) {
    if (t.skippedByTrigger === undefined) continue;
    const names = t.rowTriggers?.join(', ') ?? 'its BEFORE INSERT trigger';
    lines.push(
      `skipped by the table's trigger: ${formatCount(t.skippedByTrigger)} rows of ${t.table}: the server did not store them in ${t.table} itself and counted them nowhere, without an error, as a BEFORE INSERT row trigger does when it returns NULL (${names}; trigger-based partitioning puts such rows in another table)`,
    );
  }
  lines.push(...rejectLines(summary));
  lines.push(...wireLines(summary.wire));
  if (summary.loadId) lines.push(`load id: ${summary.loadId}`);
  parts.push(lines.join('\n'));
  return parts.join('\n\n');
}

/**
 * Where the load's backends spent their time and the verdict: a line of wait classes,
 * the verdict, the rule's reason, the load against the probe's figures.
 */
export function formatDiagnosis(d: Diagnosis): string {
  const w = d.waits;
  const shares = waitShares(w.waits);
  const classes = WAIT_CLASSES.filter((c) => shares[c] >= 0.001)
    .sort((a, b) => shares[b] - shares[a])
    .map((c) => `${WAIT_CLASS_LABELS[c]} ${(100 * shares[c]).toFixed(1)}%`)
    .join(', ');
  const events = w.events.slice(0, 4).map((e) => `${e.event} ${((100 * e.looks) / Math.max(1, totalWaits(w.waits))).toFixed(1)}%`).join(', ');
  const lines = [
    `where the time went (${formatCount(w.looks)} looks every ${w.everyMs} ms at the load's backends): ${classes || 'nothing seen'}${events ? `; top waits: ${events}` : ''}`,
    `verdict: ${d.verdict.text}`,
    `  why (rule ${d.verdict.rule}): ${d.verdict.why}`,
    ...(d.againstProbe ?? []).map((l) => `  against the probe: ${l}`),
  ];
  return lines.join('\n');
}
