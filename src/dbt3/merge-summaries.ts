import type { LoadSummary } from '../metrics/load-counters.js';
import { mbPerSecond, perSecond } from '../metrics/rates.js';

/**
 * One summary for the eight per-table loads of a dbt3 load: their tables, files and
 * reject files side by side, the totals summed, the rates over `seconds` (the span from
 * the first load's start to the last one's end, which the loads' own clocks do not know).
 */
export function mergeSummaries(summaries: readonly LoadSummary[], workers: number, target: string, seconds?: number): LoadSummary {
  // One load of all tables (the default): its own summary, with whatever fields load() gives it.
  if (summaries.length === 1) return summaries[0]!;
  const tables = summaries.flatMap((s) => s.tables);
  const files = summaries.flatMap((s) => s.files);
  const rejectFiles = summaries.flatMap((s) => s.rejectFiles ?? []);
  const sum = (f: (t: LoadSummary['total']) => number): number => summaries.reduce((a, s) => a + f(s.total), 0);
  const rows = sum((t) => t.rows);
  const bytes = sum((t) => t.bytes);
  const span = seconds ?? sum((t) => t.seconds);
  const loadIds = summaries.map((s) => s.loadId).filter((id): id is string => id !== undefined);
  return {
    tables,
    files,
    ...(loadIds.length > 0 ? { loadId: loadIds.join(',') } : {}),
    ...(rejectFiles.length > 0 ? { rejectFiles } : {}),
    total: {
      read: sum((t) => t.read),
      loaded: sum((t) => t.loaded),
      rejected: sum((t) => t.rejected),
      skipped: sum((t) => t.skipped),
      rows,
      bytes,
      chunks: sum((t) => t.chunks),
      seconds: span,
      rowsPerSecond: perSecond(rows, span),
      mbPerSecond: mbPerSecond(bytes, span),
      elapsedSeconds: seconds ?? sum((t) => t.elapsedSeconds),
    },
    workers,
    target,
  };
}
