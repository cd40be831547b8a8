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
import type { FieldEncoder, WireBuffer } from '../field-encoder.js';
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

function digit(src: Uint8Array, p: number): number {
  const d = src[p]! - 48;
  return d >= 0 && d <= 9 ? d : NaN;
}

/**
 * The days since 2000-01-01 of the `YYYY-MM-DD` at `src[p, p + 10)`, or NaN when those ten
 * bytes are not such a date (the caller checks what follows).
 */
export function parseIsoDate(src: Uint8Array, p: number): number {
  if (src[p + 4] !== 45 || src[p + 7] !== 45) return NaN;
  const year = digit(src, p) * 1000 + digit(src, p + 1) * 100 + digit(src, p + 2) * 10 + digit(src, p + 3);
  const month = digit(src, p + 5) * 10 + digit(src, p + 6);
  const day = digit(src, p + 8) * 10 + digit(src, p + 9);
  // NaN fails every comparison, so a non-digit anywhere lands here.
  if (!(year >= 1 && month >= 1 && month <= 12 && day >= 1)) return NaN;
  const leap = month === 2 && (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)) ? 1 : 0;
  if (day > DAYS_IN_MONTH[month]! + leap) return NaN;
  return date2j(year, month, day) - POSTGRES_EPOCH_JDATE;
}

export const dateEncoder: FieldEncoder = {
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
