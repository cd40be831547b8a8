/**
 * timestamp, timestamptz: `timestamp_recv`/`timestamptz_recv` read an int64, microseconds
 * since 2000-01-01 00:00:00 (UTC for timestamptz), and apply the column's precision
 * (timestamp(p) rounds) themselves, as the input functions do.
 *
 * Accepted text: `YYYY-MM-DD` (as for date: years 0001–9999, a day that exists, read the
 * same under every DateStyle), optionally followed by a blank or `T` and `HH:MM`,
 * `HH:MM:SS` or `HH:MM:SS.f` with one to six fraction digits (hours 00–23). For timestamptz,
 * then an explicit offset `+HH`, `+HHMM` or `+HH:MM` (or `-`; at most 15 hours, as
 * PostgreSQL allows) — or no offset at all when the session's TimeZone is UTC, where a local
 * time is UTC.
 *
 * Refused: `infinity`, `epoch`, `now`, BC, an offset on a timestamp without time zone
 * (which PostgreSQL silently drops), a zone spelled by name or abbreviation (`Z`, `UTC`,
 * `Europe/Paris`), no offset when the session zone is not UTC (the server's zone rules
 * decide, DST included), `24:00:00` and leap second `:60`, more than six fraction digits
 * (the server rounds), blanks, anything malformed or out of range.
 */
import type { FieldEncoder, WireBuffer } from './field-encoder.js';
import { parseIsoDate } from './date.js';
import { putInt32, putInt64BigInt } from './store.js';

/** Session time zones in which a timestamptz written without an offset is UTC. */
const UTC_ZONES = new Set(['utc', 'etc/utc', 'gmt', 'etc/gmt', 'uct', 'etc/uct', 'universal', 'etc/universal', 'zulu', 'etc/zulu', 'greenwich', 'etc/greenwich', 'gmt0', 'etc/gmt0', 'gmt+0', 'gmt-0', 'etc/gmt+0', 'etc/gmt-0']);

export function isUtcZone(timeZone: string): boolean {
  return UTC_ZONES.has(timeZone.toLowerCase());
}

function two(src: Uint8Array, p: number): number {
  const a = src[p]! - 48;
  const b = src[p + 1]! - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : NaN;
}

const FRACTION_SCALE = [0, 100000, 10000, 1000, 100, 10, 1];

/**
 * Encodes `src[start, end)`. `offset`: 'none' (timestamp: no offset allowed), 'required'
 * (timestamptz in a zone other than UTC), 'optional' (timestamptz in a UTC session).
 */
function encodeTimestamp(src: Uint8Array, start: number, end: number, out: WireBuffer, offset: 'none' | 'required' | 'optional'): boolean {
  if (end - start < 10) return false;
  const days = parseIsoDate(src, start);
  if (days !== days) return false;
  let p = start + 10;
  let seconds = days * 86400;
  let micros = 0;
  let hasOffset = false;
  if (p < end) {
    const sep = src[p];
    if ((sep !== 32 && sep !== 84) || end - p < 6 || src[p + 3] !== 58) return false;
    const hh = two(src, p + 1);
    const mm = two(src, p + 4);
    if (!(hh <= 23 && mm <= 59)) return false;
    seconds += hh * 3600 + mm * 60;
    p += 6;
    if (p < end && src[p] === 58) {
      if (end - p < 3) return false;
      const ss = two(src, p + 1);
      if (!(ss <= 59)) return false;
      seconds += ss;
      p += 3;
      if (p < end && src[p] === 46) {
        p++;
        const fracStart = p;
        while (p < end && src[p]! >= 48 && src[p]! <= 57) p++;
        const n = p - fracStart;
        if (n === 0 || n > 6) return false;
        for (let i = fracStart; i < p; i++) micros = micros * 10 + (src[i]! - 48);
        micros *= FRACTION_SCALE[n]!;
      }
    }
    if (p < end) {
      if (offset === 'none') return false;
      const sign = src[p];
      if ((sign !== 43 && sign !== 45) || end - p < 3) return false;
      const oh = two(src, p + 1);
      let om = 0;
      p += 3;
      if (p < end) {
        if (src[p] === 58) p++;
        if (end - p !== 2) return false;
        om = two(src, p);
        p += 2;
      }
      if (!(oh <= 15 && om <= 59)) return false;
      // +05:30 is 5½ hours east of Greenwich: UTC is the local time minus the offset.
      seconds -= (sign === 43 ? 1 : -1) * (oh * 3600 + om * 60);
      hasOffset = true;
    }
  }
  if (offset === 'required' && !hasOffset) return false;
  writeSecondsMicros(out, seconds, micros);
  return true;
}

/**
 * Appends an int64 field `seconds · 10^6 + micros` without a bigint: the product passes
 * 2^53 for dates far from 2000, so it is built in 20-bit limbs (|seconds| < 2^39 here).
 */
function writeSecondsMicros(out: WireBuffer, seconds: number, micros: number): void {
  const a = Math.floor(seconds / 1048576);
  let high = a * 1000000; // seconds' high part, in units of 2^20 µs
  let low = (seconds - a * 1048576) * 1000000 + micros; // < 2^40
  const carry = Math.floor(low / 1048576);
  high += carry;
  low -= carry * 1048576;
  const hi32 = Math.floor(high / 4096);
  const lo32 = (high - hi32 * 4096) * 1048576 + low;
  out.reserve(12);
  const b = out.bytes;
  const p = out.pos;
  putInt32(b, p, 8);
  putInt32(b, p + 4, hi32);
  b[p + 8] = lo32 / 16777216;
  b[p + 9] = lo32 >>> 16;
  b[p + 10] = lo32 >>> 8;
  b[p + 11] = lo32;
  out.pos = p + 12;
}

export const timestampEncoder: FieldEncoder = { encode: (src, start, end, out) => encodeTimestamp(src, start, end, out, 'none') };
const timestamptzInUtc: FieldEncoder = { encode: (src, start, end, out) => encodeTimestamp(src, start, end, out, 'optional') };
const timestamptzWithOffset: FieldEncoder = { encode: (src, start, end, out) => encodeTimestamp(src, start, end, out, 'required') };

/** The timestamptz encoder for a session in `timeZone`. */
export function timestamptzEncoder(timeZone: string): FieldEncoder {
  return isUtcZone(timeZone) ? timestamptzInUtc : timestamptzWithOffset;
}

/** Appends a timestamp or timestamptz field: microseconds since 2000-01-01 00:00:00 (UTC for timestamptz). */
export function writeTimestampMicros(out: WireBuffer, micros: bigint): void {
  out.reserve(12);
  putInt32(out.bytes, out.pos, 8);
  putInt64BigInt(out.bytes, out.pos + 4, micros);
  out.pos += 12;
}
