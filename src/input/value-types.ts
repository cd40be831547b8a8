/**
 * The PostgreSQL type a column's values show: each value is tested against the types whose
 * input function would accept it (a conservative reading of PostgreSQL 15's and 18's
 * `int4in`, `int8in`, `numeric_in`, `float8in`, `boolin`, `date_in`, `time_in`, `timestamp_in`,
 * `uuid_in`, `jsonb_in`: a value said to fit is one the server reads; some the server would
 * read too, such as `0x1F` or `1_000` on 16 and later, are left to a wider type), and a
 * column is the narrowest type every value fits. Whole numbers start at `integer`, never
 * `smallint`: small numbers in a sample say little of the rows not sampled or of the rows a
 * later load appends, and two bytes saved a row are not worth their rejects.
 */

const BOOL = 1 << 0;
const INT4 = 1 << 2;
const INT8 = 1 << 3;
const NUMERIC = 1 << 4;
const FLOAT8 = 1 << 5;
const DATE = 1 << 6;
const TIME = 1 << 7;
const TIMESTAMP = 1 << 8;
const TIMESTAMPTZ = 1 << 9;
const UUID = 1 << 10;
const JSONB = 1 << 11;
const ALL = (1 << 12) - 1;

/** The types in the order a column takes the first its values all fit (text when none). */
const NARROWEST: readonly (readonly [number, SniffedType])[] = [
  [BOOL, 'boolean'],
  [INT4, 'integer'],
  [INT8, 'bigint'],
  [NUMERIC, 'numeric'],
  [FLOAT8, 'double precision'],
  [DATE, 'date'],
  [TIME, 'time'],
  [TIMESTAMP, 'timestamp'],
  [TIMESTAMPTZ, 'timestamptz'],
  [UUID, 'uuid'],
  [JSONB, 'jsonb'],
];

export type SniffedType =
  | 'boolean'
  | 'integer'
  | 'bigint'
  | 'numeric'
  | 'double precision'
  | 'date'
  | 'time'
  | 'timestamp'
  | 'timestamptz'
  | 'uuid'
  | 'jsonb'
  | 'text';

/** How a column's `DD/MM/YYYY`-like dates read: day first, month first, or not yet told apart. */
export type DateOrder = 'DMY' | 'MDY';

const BOOLEANS = new Set(['t', 'true', 'f', 'false', 'y', 'yes', 'n', 'no', 'on', 'off']);
const INTEGER = /^[ \t]*[+-]?(0|[1-9][0-9]*)[ \t]*$/;
const DECIMAL = /^[ \t]*[+-]?(0|[1-9][0-9]*)?(\.[0-9]*)?([eE][+-]?[0-9]{1,3})?[ \t]*$/;
/** What a number can start with (after blanks): a digit, a sign, a point, `inf…` or `nan`. */
const NUMBER_LEAD = /^[ \t]*[0-9+\-.iInN]/;
const FLOAT_WORDS = /^[ \t]*([+-]?infinity|nan)[ \t]*$/i;
const ISO_DATE = /^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})/;
const DMY_DATE = /^([0-9]{1,2})([/.-])([0-9]{1,2})\2([0-9]{4})/;
const TIME_OF_DAY = /^([0-9]{1,2}):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,9})?)?( ?[AaPp][Mm])?/;
const ZONE = /^(Z|[+-](0[0-9]|1[0-4])(:?[0-5][0-9])?)$/;
const UUID_TEXT = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
/** `\u0000` (jsonb refuses it) or a lone surrogate escape (refused in a UTF8 database). */
const BAD_JSON_ESCAPE = /\\u0000|\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}/;

const DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function validDay(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1 || day > DAYS[month - 1]!) return false;
  if (month === 2 && day === 29) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return year >= 1;
}

/** Which of a date's readings hold: ISO (any DateStyle), day first, month first; with what follows the date. */
interface DatePart {
  readonly iso: boolean;
  readonly dmy: boolean;
  readonly mdy: boolean;
  readonly rest: string;
}

function datePart(v: string): DatePart | undefined {
  const iso = ISO_DATE.exec(v);
  if (iso !== null) {
    if (!validDay(Number(iso[1]), Number(iso[2]), Number(iso[3]))) return undefined;
    return { iso: true, dmy: true, mdy: true, rest: v.slice(iso[0].length) };
  }
  const m = DMY_DATE.exec(v);
  if (m === null) return undefined;
  const [a, b, year] = [Number(m[1]), Number(m[3]), Number(m[4])];
  const dmy = validDay(year, b, a);
  const mdy = validDay(year, a, b);
  return dmy || mdy ? { iso: false, dmy, mdy, rest: v.slice(m[0].length) } : undefined;
}

/** What one value fits, of the types still in `mask`. */
interface Fit {
  mask: number;
  exponent: boolean;
  slashDate: boolean;
  dmy: boolean;
  mdy: boolean;
}

function numberFits(v: string, mask: number, fit: Fit): void {
  if (INTEGER.test(v)) {
    const digits = v.trim();
    let m = NUMERIC | FLOAT8 | INT8 | INT4;
    if (digits.length <= 15) {
      // Exact as a double: no BigInt needed.
      const n = Number(digits);
      if (n < -(2 ** 31) || n >= 2 ** 31) m &= ~INT4;
    } else {
      const n = BigInt(digits);
      if (n < -(2n ** 63n) || n >= 2n ** 63n) m &= ~INT8;
      m &= ~INT4;
    }
    fit.mask |= m & mask;
    return;
  }
  if (FLOAT_WORDS.test(v)) {
    fit.mask |= (NUMERIC | FLOAT8) & mask;
    fit.exponent = true;
    return;
  }
  if (!DECIMAL.test(v) || !/[0-9]/.test(v)) return;
  const hasExponent = /[eE]/.test(v);
  const n = Number(v);
  const zero = /^[ \t]*[+-]?[0.]*([eE].*)?[ \t]*$/.test(v);
  if (Number.isFinite(n) && (n !== 0 || zero)) fit.mask |= FLOAT8 & mask;
  if (!hasExponent || Math.abs(Number(/[eE]([+-]?[0-9]+)/.exec(v)![1])) <= 999) fit.mask |= NUMERIC & mask;
  if (hasExponent) fit.exponent = true;
}

/** The length of a time of day at the start of `v` (24-hour, or 12-hour with AM or PM), or -1. */
function timeOfDay(v: string): number {
  const m = TIME_OF_DAY.exec(v);
  if (m === null) return -1;
  const hour = Number(m[1]);
  return hour <= (m[4] === undefined ? 23 : 12) ? m[0].length : -1;
}

function temporalFits(v: string, mask: number, fit: Fit): void {
  if (mask & TIME && timeOfDay(v) === v.length) fit.mask |= TIME;
  if ((mask & (DATE | TIMESTAMP | TIMESTAMPTZ)) === 0) return;
  const date = datePart(v);
  if (date === undefined) return;
  if (!date.iso) {
    fit.slashDate = true;
    fit.dmy = date.dmy;
    fit.mdy = date.mdy;
  }
  // A date or a timestamp without an offset fits timestamptz too (read in the session's TimeZone):
  // a column mixing them with zoned timestamps is timestamptz.
  if (date.rest === '') {
    fit.mask |= (DATE | TIMESTAMP | TIMESTAMPTZ) & mask;
    return;
  }
  if (date.rest[0] !== ' ' && date.rest[0] !== 'T') return;
  const time = timeOfDay(date.rest.slice(1));
  if (time < 0) return;
  const zone = date.rest.slice(1 + time);
  if (zone === '') fit.mask |= (TIMESTAMP | TIMESTAMPTZ) & mask;
  else if (ZONE.test(zone)) fit.mask |= TIMESTAMPTZ & mask;
}

function jsonFits(v: string): boolean {
  if (BAD_JSON_ESCAPE.test(v)) return false;
  try {
    JSON.parse(v);
    return true;
  } catch {
    return false;
  }
}

/** The types of `mask` that value `v` fits (never NULL: the caller leaves NULLs out). */
function fitsOf(v: string, mask: number, fit: Fit): void {
  const c = v.charCodeAt(0);
  if (mask & BOOL && v.length <= 7 && BOOLEANS.has(v.trim().toLowerCase())) fit.mask |= BOOL;
  if (mask & (INT4 | INT8 | NUMERIC | FLOAT8) && NUMBER_LEAD.test(v)) numberFits(v, mask, fit);
  if (mask & (DATE | TIME | TIMESTAMP | TIMESTAMPTZ) && c >= 0x30 && c <= 0x39) temporalFits(v, mask, fit);
  if (mask & UUID && v.length === 36 && UUID_TEXT.test(v)) fit.mask |= UUID;
  if (mask & JSONB && (c === 0x7b || c === 0x5b) && jsonFits(v)) fit.mask |= JSONB;
}

/**
 * One column's values, one at a time: the types they all fit so far. NULLs are not
 * given to it. The result is the narrowest of them, text when none is left.
 */
export class ColumnTypes {
  private mask = ALL;
  private exponent = false;
  private slashDates = false;
  private dmy = true;
  private mdy = true;
  /** Values seen (NULLs left out). */
  values = 0;
  private readonly fit: Fit = { mask: 0, exponent: false, slashDate: false, dmy: true, mdy: true };

  add(v: string): void {
    this.values++;
    if (this.mask === 0) return;
    const fit = this.fit;
    fit.mask = 0;
    fit.exponent = false;
    fit.slashDate = false;
    fit.dmy = true;
    fit.mdy = true;
    if (v !== '') fitsOf(v, this.mask, fit);
    this.mask &= fit.mask;
    this.exponent ||= fit.exponent;
    if (fit.slashDate) {
      this.slashDates = true;
      this.dmy &&= fit.dmy;
      this.mdy &&= fit.mdy;
    }
  }

  /** Every type the values so far all fit, narrowest first (text last, always), whatever their dates' order. */
  candidates(): SniffedType[] {
    return [...NARROWEST.filter(([bit]) => this.mask & bit).map(([, type]) => type), 'text'];
  }

  /** A copy that goes on from here on its own. */
  clone(): ColumnTypes {
    const copy = new ColumnTypes();
    copy.mask = this.mask;
    copy.exponent = this.exponent;
    copy.slashDates = this.slashDates;
    copy.dmy = this.dmy;
    copy.mdy = this.mdy;
    copy.values = this.values;
    return copy;
  }

  /** The narrowest type every value fits, and for dates written `DD/MM/YYYY` or `MM/DD/YYYY` the order they were told apart by. */
  result(): { type: SniffedType; dateOrder?: DateOrder } {
    let mask = this.mask;
    // A number written with an exponent, NaN or Infinity is a float; plain decimals are exact.
    if (mask & FLOAT8 && this.exponent) mask &= ~NUMERIC;
    // Slash dates are dates only when one order reads them all and the other does not:
    // a column whose every day and month are 12 or less is left as text, not guessed.
    let dateOrder: DateOrder | undefined;
    if (this.slashDates) {
      if (this.dmy !== this.mdy) dateOrder = this.dmy ? 'DMY' : 'MDY';
      else mask &= ~(DATE | TIMESTAMP | TIMESTAMPTZ);
    }
    if (this.values === 0) return { type: 'text' };
    for (const [bit, type] of NARROWEST) {
      if (mask & bit) return (bit & (DATE | TIMESTAMP | TIMESTAMPTZ)) !== 0 && dateOrder !== undefined ? { type, dateOrder } : { type };
    }
    return { type: 'text' };
  }
}
