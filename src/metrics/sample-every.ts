import { formatCount } from '../core/format-count.js';

/** How often the sampler looks: every so many milliseconds, or every so many rows loaded. */
export type SampleEvery = { readonly ms: number } | { readonly rows: number };

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, sec: 1000, min: 60_000, h: 3_600_000 };
const COUNT_UNITS: Record<string, number> = { '': 1, rows: 1, k: 1_000, K: 1_000, M: 1_000_000, G: 1_000_000_000 };

/**
 * `1s`, `500ms`, `2min` → a duration; `500k`, `1M`, `250000` → a row count. Returns a
 * message naming what is wrong instead of throwing, so the CLI words the error.
 */
export function parseSampleEvery(value: string): SampleEvery | string {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$/.exec(value);
  if (!m) return 'a duration such as 1s or 500ms, or a row count such as 500k or 1M';
  const n = Number(m[1]);
  const unit = m[2]!;
  if (unit === 'm') return 'a duration such as 1min or a row count such as 1M (`m` is ambiguous)';
  const ms = DURATION_UNITS[unit];
  if (ms !== undefined) {
    const total = Math.round(n * ms);
    return total >= 10 ? { ms: total } : 'at least 10ms';
  }
  const per = COUNT_UNITS[unit];
  if (per !== undefined) {
    const rows = Math.round(n * per);
    return rows >= 1 ? { rows } : 'at least 1 row';
  }
  return 'a duration (ms, s, min, h) or a row count (plain, k, M)';
}

export function describeSampleEvery(every: SampleEvery): string {
  return 'ms' in every ? (every.ms % 1000 === 0 ? `${every.ms / 1000}s` : `${every.ms}ms`) : `${formatCount(every.rows)} rows`;
}
