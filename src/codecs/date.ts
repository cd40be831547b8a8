/**
 * date: `date_recv` reads an int32, the days since 2000-01-01.
 *
 * Accepted text: `YYYY-MM-DD` exactly (four-digit year 0001–9999, two-digit month and day,
 * a day that exists: 2024-02-29 yes, 2023-02-29 no). PostgreSQL reads that form the same
 * way under every DateStyle (the docs: "ISO 8601; January 8 in any mode"), so the session's
 * DateStyle does not matter. Refused: everything else — `infinity`, `epoch`, `today`, BC,
 * a time after the date, one-digit fields, other orders (`01/08/1999`), blanks, and
 * impossible days (the server says "date/time field value out of range").
 */
import type { FieldEncoder, WireBuffer } from './field-encoder.js';
import { writeInt32 } from './integers.js';

/** date2j(2000, 1, 1): PostgreSQL's epoch as a Julian day. */
const POSTGRES_EPOCH_JDATE = 2451545;

/** PostgreSQL's date2j (Julian day of a proleptic Gregorian date), for years ≥ 1. */
export function date2j(year: number, month: number, day: number): number {
  if (month > 2) {
    month += 1;
    year += 4800;
  } else {
    month += 13;
    year += 4799;
  }
  const century = Math.floor(year / 100);
  let julian = year * 365 - 32167;
  julian += Math.floor(year / 4) - century + Math.floor(century / 4);
  julian += Math.floor((7834 * month) / 256) + day;
  return julian;
}

const DAYS_IN_MONTH = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
/** Days from 1 January to the 1st of each month (index 1–12) in a common year. */
const DAYS_BEFORE_MONTH = [0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
/** Days from 2000-01-01 to 1 January of each year 0001–9999 (a table: cheaper per field than date2j's divisions). */
const YEAR_START = new Int32Array(10000);
for (let y = 1; y <= 9999; y++) YEAR_START[y] = date2j(y, 1, 1) - POSTGRES_EPOCH_JDATE;

const isLeap = (y: number): boolean => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);

/**
 * The days since 2000-01-01 of the `YYYY-MM-DD` at `src[p, p + 10)`, or NaN when those ten
 * bytes are not such a date (the caller checks what follows).
 */
export function parseIsoDate(src: Uint8Array, p: number): number {
  if (src[p + 4] !== 45 || src[p + 7] !== 45) return NaN;
  const y0 = src[p]! - 48;
  const y1 = src[p + 1]! - 48;
  const y2 = src[p + 2]! - 48;
  const y3 = src[p + 3]! - 48;
  const m0 = src[p + 5]! - 48;
  const m1 = src[p + 6]! - 48;
  const d0 = src[p + 8]! - 48;
  const d1 = src[p + 9]! - 48;
  // Each is a digit when its unsigned value is below 10 (a byte below '0' wraps around).
  if ((y0 >>> 0) > 9 || (y1 >>> 0) > 9 || (y2 >>> 0) > 9 || (y3 >>> 0) > 9 || (m0 >>> 0) > 9 || (m1 >>> 0) > 9 || (d0 >>> 0) > 9 || (d1 >>> 0) > 9) return NaN;
  const year = y0 * 1000 + y1 * 100 + y2 * 10 + y3;
  const month = m0 * 10 + m1;
  const day = d0 * 10 + d1;
  if (year === 0 || month === 0 || month > 12 || day === 0) return NaN;
  const leap = isLeap(year);
  if (day > DAYS_IN_MONTH[month]! + (leap && month === 2 ? 1 : 0)) return NaN;
  return YEAR_START[year]! + DAYS_BEFORE_MONTH[month]! + (leap && month > 2 ? 1 : 0) + day - 1;
}

export const dateEncoder: FieldEncoder = {
  fast: 'date',
  encode(src, start, end, out) {
    if (end - start !== 10) return false;
    const days = parseIsoDate(src, start);
    if (days !== days) return false;
    writeDateDays(out, days);
    return true;
  },
};

/** Appends a date field: `days` since 2000-01-01 (an int32). */
export function writeDateDays(out: WireBuffer, days: number): void {
  writeInt32(out, days);
}
