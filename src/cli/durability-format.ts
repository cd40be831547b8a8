import type { DurabilityReport } from '../writer/durability/durability-session.js';
import { formatCount } from '../core/format-count.js';
import type { LoadSummary } from '../metrics/load-counters.js';
import { MB } from '../metrics/rates.js';

/** The lines a load's summary gets about what its durability preset traded. */
export function formatDurability(summary: LoadSummary): string {
  const d: DurabilityReport | undefined = summary.durability;
  if (d === undefined) return '';
  const settings = (s: Readonly<Record<string, string>>): string =>
    ['fsync', 'full_page_writes', 'wal_level', 'synchronous_commit'].filter((k) => s[k] !== undefined).map((k) => `${k}=${s[k]}`).join(' ');
  const lines = [`durability: ${d.preset}${d.unlogged ? ' + unlogged' : ''}; the load ran with ${settings(d.settingsInEffect)}`];
  if (d.frozenRows > 0) lines.push(`COPY FREEZE: ${formatCount(d.frozenRows)} rows (the first chunk of ${d.frozenTables.join(', ')}, in the transaction that truncated it)`);
  for (const note of d.notes) lines.push(note);
  const rows = summary.total.rows;
  lines.push(`WAL written: ${(d.walBytes / MB).toFixed(1)} MB${rows > 0 ? ` (${(d.walBytes / rows).toFixed(0)} bytes/row)` : ''}`);
  if (d.steps.length > 0) {
    lines.push(`steps around the load: ${d.steps.map((s) => `${s.step} ${s.seconds.toFixed(2)} s`).join('; ')}`);
    const extra = d.steps.reduce((a, s) => a + s.seconds, 0);
    const total = summary.total.seconds + extra;
    lines.push(`load + those steps: ${total.toFixed(2)} s, ${formatCount(total > 0 ? rows / total : 0)} rows/s`);
  }
  if (d.preset === 'unsafe') lines.push(`settings restored: ${settings(d.settingsAfter)}, and a CHECKPOINT taken`);
  lines.push(`a crash could lose: ${d.crashCanLose}`);
  return lines.join('\n');
}
