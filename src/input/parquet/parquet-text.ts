import type { WireBuffer } from '../../codecs/field-encoder.js';
import type { FieldShape, LeafKind, TimeUnit } from './parquet-types.js';

/*
 * Parquet's physical values → PostgreSQL's text forms, exactly: a DECIMAL printed from its
 * unscaled integer and scale, a DATE from its day count, TIME and TIMESTAMP from their
 * count of units (every digit kept: nanoseconds are left for the server to round, as it
 * rounds any input), a FLOAT as the shortest text that reads back as the same float32, a
 * DOUBLE as JavaScript's shortest round-trip form. Pure functions, no server.
 */

/** What one physical value is; `null` never reaches these (the caller writes NULL). */
export type RawValue = number | bigint | boolean | Uint8Array | RawValue[] | { [key: string]: RawValue } | null;

const UTF8 = new TextDecoder('utf-8');
const UNITS_PER_DAY: Record<TimeUnit, bigint> = { MILLIS: 86_400_000n, MICROS: 86_400_000_000n, NANOS: 86_400_000_000_000n };
const DIGITS: Record<TimeUnit, number> = { MILLIS: 3, MICROS: 6, NANOS: 9 };

/** An unscaled integer with `scale` digits after the point: (12345n, 2) → `123.45`, (-5, 3) → `-0.005`. */
export function decimalText(unscaled: bigint | number, scale: number): string {
  const negative = unscaled < 0;
  let digits = (negative ? -BigInt(unscaled) : BigInt(unscaled)).toString();
  if (scale > 0) {
    if (digits.length <= scale) digits = '0'.repeat(scale - digits.length + 1) + digits;
    digits = `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  }
  return negative ? `-${digits}` : digits;
}

/** A big-endian two's-complement integer (DECIMAL on BYTE_ARRAY or FIXED_LEN_BYTE_ARRAY). */
export function bigEndianSigned(bytes: Uint8Array): bigint | number {
  const n = bytes.length;
  if (n === 0) return 0;
  if (n <= 6) {
    let v = 0;
    for (let i = 0; i < n; i++) v = v * 256 + bytes[i]!;
    return bytes[0]! & 0x80 ? v - 2 ** (8 * n) : v;
  }
  let v = 0n;
  for (let i = 0; i < n; i++) v = (v << 8n) | BigInt(bytes[i]!);
  return bytes[0]! & 0x80 ? v - (1n << BigInt(8 * n)) : v;
}

function pad(n: number, width: number): string {
  const s = String(n);
  return s.length >= width ? s : '0'.repeat(width - s.length) + s;
}

/** Days since 1970-01-01 → `YYYY-MM-DD` (proleptic Gregorian; year 0 and before as `… BC`, as PostgreSQL writes them). */
export function dateText(days: number): string {
  // Howard Hinnant's days_from_civil, inverted.
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  const md = `-${pad(m, 2)}-${pad(d, 2)}`;
  return y > 0 ? `${pad(y, 4)}${md}` : `${pad(1 - y, 4)}${md} BC`;
}

/** A time of day in `unit`s since midnight → `HH:MM:SS[.fraction]` (all the unit's digits). */
export function timeText(units: bigint | number, unit: TimeUnit): string {
  const v = BigInt(units);
  const perSecond = 10n ** BigInt(DIGITS[unit]);
  const seconds = Number(v / perSecond);
  const fraction = v % perSecond;
  const hms = `${pad(Math.floor(seconds / 3600), 2)}:${pad(Math.floor(seconds / 60) % 60, 2)}:${pad(seconds % 60, 2)}`;
  return fraction === 0n ? hms : `${hms}.${fraction.toString().padStart(DIGITS[unit], '0')}`;
}

/** `unit`s since 1970-01-01 00:00 → `YYYY-MM-DD HH:MM:SS[.fraction][+00][ BC]`; `utc` adds the zone (timestamptz). */
export function timestampText(units: bigint | number, unit: TimeUnit, utc: boolean): string {
  const v = BigInt(units);
  const perDay = UNITS_PER_DAY[unit];
  let days = v / perDay;
  let rest = v % perDay;
  if (rest < 0n) {
    rest += perDay;
    days -= 1n;
  }
  const date = dateText(Number(days));
  const bc = date.endsWith(' BC');
  const text = `${bc ? date.slice(0, -3) : date} ${timeText(rest, unit)}${utc ? '+00' : ''}`;
  return bc ? `${text} BC` : text;
}

/** The shortest decimal text that reads back as the same float32 (the value is held exactly as a double). */
export function float4Text(x: number): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? 'NaN' : x > 0 ? 'Infinity' : '-Infinity';
  if (Object.is(x, -0)) return '-0';
  for (let p = 1; p < 9; p++) {
    const s = x.toPrecision(p);
    if (Math.fround(Number(s)) === x) return String(Number(s));
  }
  return String(Number(x.toPrecision(9)));
}

/** JavaScript's shortest round-trip text of a double, with PostgreSQL's names for what is not finite, and -0 kept. */
export function float8Text(x: number): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? 'NaN' : x > 0 ? 'Infinity' : '-Infinity';
  return Object.is(x, -0) ? '-0' : String(x);
}

/** IEEE 754 half precision, little-endian (Parquet's FLOAT16). */
export function float16Value(b: Uint8Array): number {
  const h = b[0]! | (b[1]! << 8);
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac === 0 ? sign * Infinity : NaN;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export function uuidText(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < 16; i++) {
    s += HEX[b[i]!];
    if (i === 3 || i === 5 || i === 7 || i === 9) s += '-';
  }
  return s;
}

/** bytea's hex form, `\x0102…`. */
export function byteaText(b: Uint8Array): string {
  let s = '\\x';
  for (let i = 0; i < b.length; i++) s += HEX[b[i]!];
  return s;
}

/**
 * A leaf value's text as PostgreSQL's input function reads it. `bytes` is `bytea`'s hex
 * form where the column is bytea (`asBytea`), else the bytes taken as text.
 */
export function leafText(leaf: LeafKind, v: RawValue, asBytea: boolean): string {
  switch (leaf.kind) {
    case 'int':
      return String(v);
    case 'uint32':
      return String((v as number) >>> 0);
    case 'uint64':
      return BigInt.asUintN(64, BigInt(v as bigint)).toString();
    case 'decimal':
      return decimalText(v instanceof Uint8Array ? bigEndianSigned(v) : (v as number | bigint), leaf.scale);
    case 'date':
      return dateText(v as number);
    case 'time':
      return timeText(v as number | bigint, leaf.unit);
    case 'timestamp':
      return timestampText(v as number | bigint, leaf.unit, leaf.utc);
    case 'int96':
      return timestampText(v as bigint, 'NANOS', false);
    case 'float':
      return float4Text(v as number);
    case 'double':
      return float8Text(v as number);
    case 'float16':
      return float8Text(float16Value(v as Uint8Array));
    case 'boolean':
      return v ? 't' : 'f';
    case 'string':
    case 'json':
      return UTF8.decode(v as Uint8Array);
    case 'uuid':
      return uuidText(v as Uint8Array);
    case 'bytes':
      return asBytea ? byteaText(v as Uint8Array) : UTF8.decode(v as Uint8Array);
  }
}

/** A value as JSON text: numbers as numbers (exact digits), text, dates and bytes as strings, groups as arrays and objects. */
export function jsonText(shape: FieldShape, v: RawValue): string {
  if (v === null || v === undefined) return 'null';
  switch (shape.shape) {
    case 'leaf': {
      const leaf = shape.leaf;
      switch (leaf.kind) {
        case 'int':
        case 'uint32':
        case 'uint64':
        case 'decimal':
          return leafText(leaf, v, false);
        case 'float':
        case 'double':
        case 'float16': {
          const t = leafText(leaf, v, false);
          // JSON has no NaN or Infinity; -0 is a number.
          return /^-?[0-9]/.test(t) ? t : JSON.stringify(t);
        }
        case 'boolean':
          return v ? 'true' : 'false';
        case 'json': {
          const t = UTF8.decode(v as Uint8Array);
          try {
            JSON.parse(t);
            return t;
          } catch {
            return JSON.stringify(t);
          }
        }
        case 'bytes':
          return JSON.stringify(byteaText(v as Uint8Array));
        default:
          return JSON.stringify(leafText(leaf, v, false));
      }
    }
    case 'list':
      return `[${(v as RawValue[]).map((e) => jsonText(shape.element, e)).join(',')}]`;
    case 'map':
      // The reader keys a map's entries by the key's text (string keys are decoded as such).
      return `{${Object.entries(v as Record<string, RawValue>).map(([k, e]) => `${JSON.stringify(k)}:${jsonText(shape.value, e)}`).join(',')}}`;
    case 'struct':
      return `{${shape.fields.map((f) => `${JSON.stringify(f.name)}:${jsonText(f, (v as Record<string, RawValue>)[f.name] ?? null)}`).join(',')}}`;
  }
}

/** A LIST as a PostgreSQL array literal: `{1,2,NULL}`, `{{1,2},{3,4}}`; elements quoted, groups inside as JSON (a json[] column). */
export function arrayLiteral(shape: FieldShape, v: RawValue, asBytea: boolean): string {
  if (shape.shape !== 'list') return quoteArrayElement(shape.shape === 'leaf' ? leafText(shape.leaf, v, asBytea) : jsonText(shape, v));
  const items = (v as RawValue[]).map((e) => (e === null || e === undefined ? 'NULL' : arrayLiteral(shape.element, e, asBytea)));
  return `{${items.join(',')}}`;
}

function quoteArrayElement(text: string): string {
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

const BACKSLASH = 0x5c;

/** Appends bytes as one COPY text field: backslash, newline, carriage return and tab escaped. */
export function putCopyBytes(out: WireBuffer, b: Uint8Array): void {
  putCopyRange(out, b, 0, b.length);
}

/** Appends `b[from, to)` as one COPY text field (see `putCopyBytes`). */
export function putCopyRange(out: WireBuffer, b: Uint8Array, from: number, to: number): void {
  out.reserve(2 * (to - from));
  const o = out.bytes;
  let p = out.pos;
  for (let i = from; i < to; i++) {
    const c = b[i]!;
    if (c === BACKSLASH || c === 0x0a || c === 0x0d || c === 0x09) {
      o[p++] = BACKSLASH;
      o[p++] = c === BACKSLASH ? BACKSLASH : c === 0x0a ? 0x6e : c === 0x0d ? 0x72 : 0x74;
    } else o[p++] = c;
  }
  out.pos = p;
}

/** Appends a string as one COPY text field (UTF-8, escaped). */
export function putCopyText(out: WireBuffer, s: string): void {
  // Most texts made here are ASCII without anything to escape: digits, dates, hex.
  let plain = true;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 0x7e || c === BACKSLASH || c < 0x20) {
      plain = false;
      break;
    }
  }
  if (!plain) {
    putCopyBytes(out, Buffer.from(s, 'utf8'));
    return;
  }
  out.reserve(s.length);
  const o = out.bytes;
  let p = out.pos;
  for (let i = 0; i < s.length; i++) o[p++] = s.charCodeAt(i);
  out.pos = p;
}

/** Appends one ASCII byte (a delimiter, a newline). */
export function putByte(out: WireBuffer, c: number): void {
  out.reserve(1);
  out.bytes[out.pos++] = c;
}

