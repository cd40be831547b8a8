/**
 * TPC-H's calendar: every date the generator can write, precomputed as `YYYY-MM-DD` bytes,
 * indexed by days since 1992-01-01.
 */

export const START_DATE = '1992-01-01';
/** Days from 1992-01-01 to 1998-12-31 inclusive. */
export const TOTAL_DAYS = 2557;
/** dbgen's CURRENTDATE, 1995-06-17, as a day index. */
export const CURRENT_DAY = dayIndex('1995-06-17');
/** The last order date: 1998-12-31 minus 151 days (the longest ship + receipt delay). */
export const MAX_ORDER_DAY = TOTAL_DAYS - 1 - 151;

export const DATE_WIDTH = 10;

export function dayIndex(iso: string): number {
  return Math.round((Date.parse(iso + 'T00:00:00Z') - Date.parse(START_DATE + 'T00:00:00Z')) / 86_400_000);
}

/** `YYYY-MM-DD` of every day from 1992-01-01 to 1998-12-31, 10 bytes each. */
export function buildDateTable(): Buffer {
  const out = Buffer.allocUnsafe(TOTAL_DAYS * DATE_WIDTH);
  const start = Date.parse(START_DATE + 'T00:00:00Z');
  for (let d = 0; d < TOTAL_DAYS; d++) {
    out.write(new Date(start + d * 86_400_000).toISOString().slice(0, 10), d * DATE_WIDTH, 'latin1');
  }
  return out;
}
