/**
 * A count rounded to a whole number, digits grouped by commas (`6,001,274`). Done by hand:
 * `toLocaleString` loads ICU's number formatting on first use, ~20 ms that every command
 * paid at its summary.
 */
export function formatCount(n: number): string {
  const whole = Math.round(n);
  if (!Number.isSafeInteger(whole)) return String(whole);
  const digits = String(Math.abs(whole)).replace(/\B(?=(\d{3})+$)/g, ',');
  return whole < 0 ? `-${digits}` : digits;
}

/** Human sizes for messages: 1536 → `1.5 KB`. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v.toFixed(0) : v.toFixed(1)} ${units[i]}`;
}
