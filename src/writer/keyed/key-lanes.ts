import { unescapeTextInto } from '../../wire/decode-records.js';
import { parseDecimal, plainSmallInteger, sameBytes } from '../citus/route-records.js';

/**
 * Key column types whose equal values pgsurge can tell from their COPY text exactly as the
 * server's `=` would: integers (read as `int2in`/`int4in`/`int8in` read plain decimal, any
 * other spelling asked of the server), and text under a deterministic collation (equal
 * exactly when their bytes are; `character(n)` ignores trailing spaces). An upsert whose key
 * has another type (numeric, timestamps, citext, a nondeterministic collation) keeps every
 * key's rows in order through the order table instead.
 */
export type LaneType = 'int2' | 'int4' | 'int8' | 'text' | 'bpchar';

const LANE_TYPES: Readonly<Record<string, LaneType>> = { int2: 'int2', int4: 'int4', int8: 'int8', text: 'text', varchar: 'text', bpchar: 'bpchar' };

/** The lane type of a column of catalog type `typname`, or undefined when its values cannot be compared here. */
export function laneTypeOf(typname: string, deterministic: boolean): LaneType | undefined {
  const t = LANE_TYPES[typname];
  if (t === undefined) return undefined;
  return t === 'text' || t === 'bpchar' ? (deterministic ? t : undefined) : t;
}

/** How to find a chunk's key fields in its COPY text records. */
export interface LaneSpec {
  /** The 0-based field of each key column in the records, in the key's order (-1: the chunk does not fill it). */
  readonly fields: readonly number[];
  readonly types: readonly LaneType[];
  /** `varchar(n)`'s n, by key column (undefined: no limit): the server cuts a longer value's trailing spaces to n characters. */
  readonly lengths?: readonly (number | undefined)[];
  /** COPY's delimiter byte. */
  readonly delimiter: number;
  /** COPY's NULL string as bytes, compared before unescaping as COPY does (CSV: with the field unquoted). */
  readonly nullMarker: Buffer;
  /** CSV records (COPY's CSV format): its quote and escape bytes. Absent: COPY text. */
  readonly csv?: { readonly quote: number; readonly escape: number };
  /**
   * The table has a constraint between rows besides the key (another unique index, an
   * exclusion constraint): a part that repeats a key is applied in runs of rows of distinct
   * keys, in file order, so that every row meets it, as one by one.
   */
  readonly inRuns?: boolean;
}

/** A chunk's records and each one's key, as a string equal for two records exactly when the server finds their keys equal. */
export interface KeyedRecords {
  /** `ends[i]`: the end of record i in the chunk's data. */
  readonly ends: number[];
  /** Record i's key; undefined when no other record's key can equal it (a NULL, a missing field, a value the server refuses). */
  readonly keys: (string | undefined)[];
  /** Integer values not in plain decimal, by record: the caller asks the server what they are (`settledKeys` in lane-router.ts). */
  readonly unsure: Map<number, { readonly column: number; readonly value: string }[]>;
}

const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const INT_RANGE: Record<'int2' | 'int4', readonly [number, number]> = { int2: [-32768, 32767], int4: [-2147483648, 2147483647] };
/**
 * Separates a key's columns in its string: no integer holds it, and no text value the server
 * takes (a NUL byte in a text field is refused, so two keys it confuses are refused rows).
 */
const SEP = '\u0000';

/**
 * The canonical text of one key value (undefined: the server would refuse it; null: not
 * decided here, ask the server). Integers as decimal without sign, spaces or leading zeros
 * (`-0` is `0`); text as its bytes (latin1, one char per byte); bpchar without trailing spaces;
 * varchar(n) longer than n characters cut to n when the rest is spaces (else refused), as `varchar_input` does.
 */
function canonical(type: LaneType, bytes: Uint8Array, from: number, to: number, length?: number): string | null | undefined {
  if (type === 'text' || type === 'bpchar') {
    let end = to;
    if (type === 'bpchar') while (end > from && bytes[end - 1] === SPACE) end--;
    else if (length !== undefined) {
      // The byte after the n-th character (UTF-8: a character starts at each byte that is not 10xxxxxx).
      let chars = 0;
      let cut = from;
      while (cut < to && (chars < length || (bytes[cut]! & 0xc0) === 0x80)) if ((bytes[cut++]! & 0xc0) !== 0x80) chars++;
      for (let i = cut; i < to; i++) if (bytes[i] !== SPACE) return undefined;
      end = cut;
    }
    return Buffer.from(bytes.buffer, bytes.byteOffset + from, end - from).toString('latin1');
  }
  const small = plainSmallInteger(bytes, from, to);
  if (small !== undefined) {
    if (type !== 'int8') {
      const [lo, hi] = INT_RANGE[type];
      if (small < lo || small > hi) return undefined;
    }
    return String(small === 0 ? 0 : small);
  }
  const v = parseDecimal(bytes, from, to, type);
  return v === undefined ? null : String(v);
}

/** The canonical text of an integer as the server prints it (`SELECT $1::int8::text`). */
export function canonicalInt(printed: string): string {
  return String(BigInt(printed));
}

/**
 * Splits a chunk's COPY text records (each ending in `\n`; a backslash escapes the byte
 * after it, as COPY reads them) and reads each one's key from its key fields.
 */
export function keyedRecords(data: Buffer, spec: LaneSpec): KeyedRecords {
  if (spec.csv !== undefined) return keyedCsvRecords(data, spec, spec.csv);
  const ends: number[] = [];
  const keys: (string | undefined)[] = [];
  const unsure = new Map<number, { column: number; value: string }[]>();
  const { fields, types, delimiter, nullMarker } = spec;
  const last = Math.max(...fields);
  const starts = new Int32Array(last + 1);
  const stops = new Int32Array(last + 1);
  const escapedField = new Uint8Array(last + 1);
  const n = data.length;
  let i = 0;
  // The next newline and backslash at or after a place already passed (-1: none left); 0: not looked for yet.
  let nextNewline = 0;
  let nextBackslash = 0;
  while (i < n) {
    starts.fill(-1);
    stops.fill(-1);
    escapedField.fill(0);
    let f = 0;
    starts[0] = i;
    for (; i < n; i++) {
      const b = data[i]!;
      if (b === BACKSLASH) {
        if (f <= last) escapedField[f] = 1;
        i++;
        continue;
      }
      if (b === NEWLINE || b === delimiter) {
        if (f <= last) stops[f] = i;
        if (b === NEWLINE) break;
        f++;
        if (f <= last) starts[f] = i + 1;
        else {
          // Past the last key field: the record ends at the next newline no backslash escapes.
          if (nextNewline !== -1 && nextNewline <= i) nextNewline = data.indexOf(NEWLINE, i + 1);
          if (nextBackslash !== -1 && nextBackslash <= i) nextBackslash = data.indexOf(BACKSLASH, i + 1);
          if (nextNewline !== -1 && (nextBackslash === -1 || nextBackslash > nextNewline)) {
            i = nextNewline;
            break;
          }
        }
      }
    }
    const end = Math.min(i + 1, n);
    // A record that ends in \r\n: the \r is part of the line break.
    if (f <= last && stops[f] === i && i > starts[f]! && data[i - 1] === CR) stops[f] = i - 1;
    if (f <= last && stops[f]! < 0 && starts[f]! >= 0) stops[f] = Math.min(i, n);
    const record = ends.length;
    ends.push(end);
    i = end;
    const values: (KeyValue | undefined)[] = [];
    for (let k = 0; k < fields.length; k++) {
      const field = fields[k]!;
      const from = field < 0 ? -1 : starts[field]!;
      const to = field < 0 ? -1 : stops[field]!;
      // Missing, or NULL (compared before unescaping, as COPY does).
      if (from < 0 || to < 0 || (to - from === nullMarker.length && sameBytes(data, from, nullMarker))) {
        values.push(undefined);
        break;
      }
      if (escapedField[field] !== 1) values.push({ bytes: data, from, to });
      else {
        const out = Buffer.allocUnsafe(to - from);
        values.push({ bytes: out, from: 0, to: unescapeTextInto(data, from, to, out, 0) });
      }
    }
    const key = keyOf(types, spec.lengths, values, record, unsure);
    keys.push(key);
  }
  return { ends, keys, unsure };
}

/** A key field's value: its bytes (unescaped, unquoted). */
interface KeyValue {
  readonly bytes: Uint8Array;
  readonly from: number;
  readonly to: number;
}

/**
 * A record's key from its key fields' values (undefined where one is NULL or missing: no
 * key); an integer only the server reads goes to `unsure`, its place held by `?`.
 */
function keyOf(types: readonly LaneType[], lengths: LaneSpec['lengths'], values: readonly (KeyValue | undefined)[], record: number, unsure: KeyedRecords['unsure']): string | undefined {
  if (values.length < types.length) return undefined;
  let key = '';
  for (let k = 0; k < types.length; k++) {
    const v = values[k];
    if (v === undefined) return undefined;
    const c = canonical(types[k]!, v.bytes, v.from, v.to, lengths?.[k]);
    if (c === undefined) return undefined;
    if (c === null) {
      let list = unsure.get(record);
      if (list === undefined) unsure.set(record, (list = []));
      list.push({ column: k, value: Buffer.from(v.bytes.subarray(v.from, v.to)).toString('utf8') });
    }
    key += `${k === 0 ? '' : SEP}${c ?? '?'}`;
  }
  return key;
}

/**
 * `keyedRecords` for COPY's CSV format, read as the server reads it
 * (`CopyReadAttributesCSV`): a quote starts a quoted stretch anywhere in a field, inside
 * one the escape byte before a quote or an escape makes it a plain byte, and a newline or
 * delimiter is data; a field is NULL when its raw bytes, with no quote in them, are the
 * NULL string (empty by default: `""` is an empty string, not NULL). A record ends at a
 * newline outside quotes (`\r\n`: the `\r` is the line break's).
 */
function keyedCsvRecords(data: Buffer, spec: LaneSpec, csv: { readonly quote: number; readonly escape: number }): KeyedRecords {
  const ends: number[] = [];
  const keys: (string | undefined)[] = [];
  const unsure = new Map<number, { column: number; value: string }[]>();
  const { fields, types, delimiter, nullMarker } = spec;
  const { quote, escape } = csv;
  const last = Math.max(...fields);
  const wanted = new Int32Array(last + 1).fill(-1);
  fields.forEach((f, k) => {
    if (f >= 0) wanted[f] = k;
  });
  const n = data.length;
  let i = 0;
  // The next newline and quote at or after a place already passed (-1: none left); -2: not looked for yet.
  let nextNewline = -2;
  let nextQuote = -2;
  while (i < n) {
    const values: (KeyValue | undefined)[] = new Array(fields.length).fill(undefined);
    let f = 0;
    let ended = false;
    while (!ended) {
      // One field, from i: its raw bytes [rawStart, rawEnd), and whether a quote is among them.
      const k = f <= last ? wanted[f]! : -1;
      const rawStart = i;
      let sawQuote = false;
      let inQuote = false;
      let rawEnd = -1;
      for (;;) {
        if (i >= n) {
          rawEnd = n;
          ended = true;
          break;
        }
        const b = data[i]!;
        if (inQuote) {
          // The escape before a quote or an escape makes it a plain byte (`""` inside quotes, with the default escape).
          if (b === escape && i + 1 < n && (data[i + 1] === escape || data[i + 1] === quote)) i += 2;
          else {
            if (b === quote) inQuote = false;
            i++;
          }
          continue;
        }
        if (b === delimiter) {
          rawEnd = i++;
          break;
        }
        if (b === NEWLINE) {
          rawEnd = i > rawStart && data[i - 1] === CR ? i - 1 : i;
          i++;
          ended = true;
          break;
        }
        if (b === quote) inQuote = sawQuote = true;
        i++;
      }
      // A key field, not NULL (the NULL string unquoted): its value, unquoted where it holds a quote.
      if (k >= 0 && (sawQuote || rawEnd - rawStart !== nullMarker.length || !sameBytes(data, rawStart, nullMarker))) {
        const bytes = sawQuote ? csvField(data, rawStart, rawEnd, quote, escape) : data;
        values[k] = sawQuote ? { bytes, from: 0, to: bytes.length } : { bytes, from: rawStart, to: rawEnd };
      }
      f++;
      if (!ended && f > last) {
        // Past the last key field: the record ends at the next newline, unless a quote comes first (it may quote one).
        if (nextNewline !== -1 && nextNewline < i) nextNewline = data.indexOf(NEWLINE, i);
        if (nextQuote !== -1 && nextQuote < i) nextQuote = data.indexOf(quote, i);
        if (nextNewline !== -1 && (nextQuote === -1 || nextQuote > nextNewline)) {
          i = nextNewline + 1;
          ended = true;
        }
      }
    }
    const record = ends.length;
    ends.push(i);
    keys.push(fields.some((field) => field < 0 || field >= f) ? undefined : keyOf(types, spec.lengths, values, record, unsure));
  }
  return { ends, keys, unsure };
}

/** A CSV field's bytes without its quotes and escapes (`data[from, to)`, raw). */
function csvField(data: Buffer, from: number, to: number, quote: number, escape: number): Buffer {
  const out: number[] = [];
  let inQuote = false;
  for (let i = from; i < to; i++) {
    const b = data[i]!;
    if (inQuote && b === escape && i + 1 < to && (data[i + 1] === escape || data[i + 1] === quote)) out.push(data[++i]!);
    else if (b === quote) inQuote = !inQuote;
    else out.push(b);
  }
  return Buffer.from(out);
}

/**
 * Record `record`'s key once the server said what its unsure values are (`values`, by key
 * column; undefined where the server refused one: then no key).
 */
export function settledKey(keys: readonly (string | undefined)[], record: number, values: ReadonlyMap<number, string | undefined>): string | undefined {
  const key = keys[record];
  if (key === undefined) return undefined;
  const parts = key.split(SEP);
  for (const [column, value] of values) {
    if (value === undefined) return undefined;
    parts[column] = value;
  }
  return parts.join(SEP);
}

/** A key's hash: FNV-1a of its string (32 bits, unsigned). */
export function keyHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
