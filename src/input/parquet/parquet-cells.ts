import type { WireBuffer } from '../../codecs/field-encoder.js';
import { writeBool, writeBytea, writeDateDays, writeFloat4, writeFloat8, writeInt16, writeInt32, writeInt64, writeJsonb, writeNumericFromDecimal, writeScaledNumeric, writeText, writeTimestampMicros, writeUuid } from '../../codecs/index.js';
import { putField } from '../../codecs/store.js';
import { writeNull } from '../../codecs/binary-copy.js';
import type { ParquetColumn } from './parquet-columns.js';
import { int64BigInt, int64Number, rawValueOf, type FlatColumn } from './flat-decoder.js';
import { bigEndianSigned, dateText, decimalText, jsonText, putCopyRange, putCopyText, type RawValue } from './parquet-text.js';
import type { FieldShape, LeafKind } from './parquet-types.js';

/*
 * One column of a decoded slice as cells: `text` writes row r as a COPY text field (`\N`
 * for NULL), `binary` as a binary COPY field (length -1 for NULL) of the table column's
 * type, straight from the physical value, no text in between. Exact or not at all: a pair
 * of Parquet type and column type without an exact binary form has no binary writer (the
 * table goes as text), and a value that does not fit its column (an INT64 past an int4)
 * makes `binary` return false (the chunk goes as text, where the server rejects the row).
 */

/** A decoded column of a slice: the flat decoder's (rows from `base`), or hyparquet's values (the slice's rows). */
export type DecodedColumn = { readonly flat: FlatColumn; readonly base: number } | { readonly values: ArrayLike<RawValue | undefined> };

export type TextCell = (r: number, out: WireBuffer) => void;
export type BinaryCell = (r: number, out: WireBuffer) => boolean;

function putNullText(out: WireBuffer): void {
  out.reserve(2);
  out.bytes[out.pos++] = 0x5c;
  out.bytes[out.pos++] = 0x4e;
}

/** Appends the decimal digits of a safe integer. */
export function putInteger(out: WireBuffer, v: number): void {
  out.reserve(21);
  const b = out.bytes;
  let p = out.pos;
  if (v < 0) {
    b[p++] = 0x2d;
    v = -v;
  }
  let digits = 1;
  for (let t = v; t >= 10; t = Math.floor(t / 10)) digits++;
  for (let k = digits - 1; k >= 0; k--) {
    const q = Math.floor(v / 10);
    b[p + k] = 48 + (v - q * 10);
    v = q;
  }
  out.pos = p + digits;
}

const POW10 = [1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000];

/** Appends a safe unscaled integer with `scale` (0–8) digits after the point, as `decimalText` writes it. */
export function putDecimal(out: WireBuffer, unscaled: number, scale: number): void {
  if (scale === 0) return putInteger(out, unscaled);
  const neg = unscaled < 0;
  const a = neg ? -unscaled : unscaled;
  const p10 = POW10[scale]!;
  const whole = Math.floor(a / p10);
  let frac = a - whole * p10;
  if (neg) putByteAt(out, 0x2d);
  putInteger(out, whole);
  out.reserve(1 + scale);
  const b = out.bytes;
  const p = out.pos;
  b[p] = 0x2e;
  for (let k = scale; k >= 1; k--) {
    const q = Math.floor(frac / 10);
    b[p + k] = 48 + (frac - q * 10);
    frac = q;
  }
  out.pos = p + 1 + scale;
}

function putByteAt(out: WireBuffer, c: number): void {
  out.reserve(1);
  out.bytes[out.pos++] = c;
}

/** The text cell of a column: fast paths for the flat decoder's common values, `slow` (the value's own writer) for the rest. */
export function textCell(decoded: DecodedColumn, column: ParquetColumn, slow: (v: RawValue, out: WireBuffer) => void): TextCell {
  if ('values' in decoded) {
    const values = decoded.values;
    return (r, out) => {
      const v = values[r];
      if (v === null || v === undefined) putNullText(out);
      else slow(v, out);
    };
  }
  const { flat: c, base } = decoded;
  const index = c.index;
  const leaf = column.shape.shape === 'leaf' && column.rendering === 'text' ? column.shape.leaf : undefined;
  const cell = (write: (i: number, out: WireBuffer) => void): TextCell => (r, out) => {
    const i = index[base + r]!;
    if (i < 0) putNullText(out);
    else write(i, out);
  };
  if (leaf !== undefined) {
    if (leaf.kind === 'int' && c.type === 'INT32') return cell((i, out) => putInteger(out, c.i32[i]!));
    if (leaf.kind === 'int' && c.type === 'INT64')
      return cell((i, out) => {
        const n = int64Number(c, i);
        if (n === n) putInteger(out, n);
        else putCopyText(out, int64BigInt(c, i).toString());
      });
    if (leaf.kind === 'decimal' && (c.type === 'INT32' || c.type === 'INT64') && leaf.scale >= 0 && leaf.scale <= 8) {
      const scale = leaf.scale;
      if (c.type === 'INT32') return cell((i, out) => putDecimal(out, c.i32[i]!, scale));
      return cell((i, out) => {
        const n = int64Number(c, i);
        if (n === n) putDecimal(out, n, scale);
        else putCopyText(out, decimalText(int64BigInt(c, i), scale));
      });
    }
    if (leaf.kind === 'date' && c.type === 'INT32') {
      // Dates repeat (a few thousand distinct in a TPC-H column): their text is kept.
      const seen = new Map<number, string>();
      return cell((i, out) => {
        const d = c.i32[i]!;
        let t = seen.get(d);
        if (t === undefined) {
          t = dateText(d);
          if (seen.size < 65536) seen.set(d, t);
        }
        putCopyText(out, t);
      });
    }
    if ((leaf.kind === 'string' || leaf.kind === 'json' || leaf.kind === 'bytes') && c.span !== undefined) {
      const span = c.span;
      return cell((i, out) => putCopyRange(out, c.bytes, span[2 * i]!, span[2 * i + 1]!));
    }
  }
  return cell((i, out) => slow(rawValueOf(c, i), out));
}

/** What the binary wire needs of the session: numeric's ±Infinity is not made here, so only the encoding matters (checked by the caller). */
export interface BinaryTarget {
  /** `pg_type.typname` of the column's (base) type. */
  readonly typname: string;
}

export const UNIX_TO_POSTGRES_DAYS = 10957; // 1970-01-01 → 2000-01-01
const UNIX_TO_POSTGRES_MICROS = 946_684_800_000_000n;
const INT8_MIN = -(2n ** 63n);
const INT8_MAX = 2n ** 63n - 1n;

/**
 * The binary cell of a column into a column of type `target`, or undefined when that pair
 * has no exact binary form (the table then goes as text): integers into int2/int4/int8
 * (a value out of range: false) and numeric, DECIMAL into numeric, DATE into date,
 * TIMESTAMP into timestamp (local) or timestamptz (UTC-adjusted), FLOAT into float4,
 * DOUBLE into float8, BOOLEAN into bool, text into text/varchar/bpchar, bytes into bytea,
 * UUID into uuid; STRING and JSON into json/jsonb as their bytes (the server's json_recv /
 * jsonb_recv check them), and any other field into json/jsonb as the JSON text the text wire sends.
 */
export function binaryCell(decoded: DecodedColumn, column: ParquetColumn, target: BinaryTarget): BinaryCell | undefined {
  const write = valueWriterOf(column, target);
  if (write === undefined) return undefined;
  if ('values' in decoded) {
    const values = decoded.values;
    return (r, out) => {
      const v = values[r];
      if (v === null || v === undefined) {
        writeNull(out);
        return true;
      }
      return write(v, out);
    };
  }
  const { flat: c, base } = decoded;
  const index = c.index;
  const value = flatValueWriter(c, column, target.typname, write);
  return (r, out) => {
    const i = index[base + r]!;
    if (i < 0) {
      writeNull(out);
      return true;
    }
    return value.write(i, out);
  };
}

/**
 * How a flat column's value i is written into the column type: `write` writes any value
 * (false: it does not fit the column); `kind` names the forms the tuple writer
 * (flat-tuples.ts) writes inline, from the decoded bytes: `int32` (INT32 into int4), `date`
 * (DATE into date), `le8` (INT64 into int8, DOUBLE into float8: the 8 bytes reversed),
 * `span` (the bytes as they are: text, json, bytea), `decimal32`/`decimal64` (a DECIMAL of
 * `scale` 0–8 on INT32/INT64 into numeric: `putScaledNumeric`, a safe integer's); `value`
 * any other (a call of `write`).
 */
export interface FlatValueWriter {
  readonly kind: 'int32' | 'date' | 'le8' | 'span' | 'decimal32' | 'decimal64' | 'value';
  readonly write: (i: number, out: WireBuffer) => boolean;
  /** decimal32/decimal64: digits after the point. */
  readonly scale?: number;
}

/** The writer of a flat column's values into `target`'s type, or undefined when the pair has no exact binary form (as `binaryCell`). */
export function flatColumnWriter(c: FlatColumn, column: ParquetColumn, target: BinaryTarget): FlatValueWriter | undefined {
  const write = valueWriterOf(column, target);
  return write === undefined ? undefined : flatValueWriter(c, column, target.typname, write);
}

function valueWriterOf(column: ParquetColumn, target: BinaryTarget): ValueWriter | undefined {
  return column.rendering === 'json' ? jsonWriter(column.shape, target.typname) : column.shape.shape === 'leaf' && column.rendering !== 'array' ? valueWriter(column.shape.leaf, column.rendering, target.typname) : undefined;
}

function flatValueWriter(c: FlatColumn, column: ParquetColumn, typname: string, write: ValueWriter): FlatValueWriter {
  const fast = column.shape.shape === 'leaf' && column.rendering !== 'json' ? flatWriter(c, column.shape.leaf, typname) : undefined;
  return fast ?? { kind: 'value', write: (i, out) => write(rawValueOf(c, i), out) };
}

type ValueWriter = (v: RawValue, out: WireBuffer) => boolean;

/** Into json/jsonb: the JSON text the text wire sends (`jsonText`), framed as binary (jsonb's version byte first). */
function jsonWriter(shape: FieldShape, typname: string): ValueWriter | undefined {
  if (typname !== 'json' && typname !== 'jsonb') return undefined;
  const write = typname === 'json' ? writeText : writeJsonb;
  return (v, out) => {
    write(out, Buffer.from(jsonText(shape, v), 'utf8'));
    return true;
  };
}

/** Writes one physical value (as hyparquet hands it) into the column type; undefined when the pair has no exact binary form. */
function valueWriter(leaf: LeafKind, rendering: 'text' | 'bytea', typname: string): ValueWriter | undefined {
  const integer = (toBig: (v: RawValue) => bigint): ValueWriter | undefined => {
    switch (typname) {
      case 'int2':
        return (v, out) => fits(toBig(v), -32768n, 32767n, (n) => writeInt16(out, Number(n)));
      case 'int4':
        return (v, out) => fits(toBig(v), -2147483648n, 2147483647n, (n) => writeInt32(out, Number(n)));
      case 'int8':
        return (v, out) => fits(toBig(v), INT8_MIN, INT8_MAX, (n) => writeInt64(out, n));
      case 'numeric':
        return (v, out) => writeNumericFromDecimal(out, toBig(v), 0);
      default:
        return undefined;
    }
  };
  switch (leaf.kind) {
    case 'int':
      return integer((v) => BigInt(v as number | bigint));
    case 'uint32':
      return integer((v) => BigInt((v as number) >>> 0));
    case 'uint64':
      return integer((v) => BigInt.asUintN(64, v as bigint));
    case 'decimal': {
      if (typname !== 'numeric') return undefined;
      const scale = leaf.scale;
      return (v, out) => writeNumericFromDecimal(out, BigInt(v instanceof Uint8Array ? bigEndianSigned(v) : (v as number | bigint)), scale);
    }
    case 'date':
      return typname === 'date' ? (v, out) => (writeDateDays(out, (v as number) - UNIX_TO_POSTGRES_DAYS), true) : undefined;
    case 'timestamp': {
      // Into timestamp the text wire's `+00` is ignored, so either kind is its count of units; into timestamptz only an instant is (a local time would be read in the session's zone).
      if (typname !== 'timestamp' && !(typname === 'timestamptz' && leaf.utc)) return undefined;
      const unit = leaf.unit;
      return (v, out) => {
        let units = BigInt(v as bigint | number);
        if (unit === 'MILLIS') units *= 1000n;
        else if (unit === 'NANOS') {
          // The text wire leaves the rounding of nanoseconds to the server: not made here.
          if (units % 1000n !== 0n) return false;
          units /= 1000n;
        }
        writeTimestampMicros(out, units - UNIX_TO_POSTGRES_MICROS);
        return true;
      };
    }
    case 'float':
      return typname === 'float4' ? (v, out) => (writeFloat4(out, v as number), true) : undefined;
    case 'double':
      return typname === 'float8' ? (v, out) => (writeFloat8(out, v as number), true) : undefined;
    case 'boolean':
      return typname === 'bool' ? (v, out) => (writeBool(out, v as boolean), true) : undefined;
    case 'string':
      // Into json/jsonb the bytes are the JSON text (the column plan's 'text' rendering): json_recv and jsonb_recv parse them, as the text wire's input does.
      if (typname === 'jsonb') return (v, out) => (writeJsonb(out, v as Uint8Array), true);
      return typname === 'text' || typname === 'varchar' || typname === 'bpchar' || typname === 'json' ? (v, out) => (writeText(out, v as Uint8Array), true) : undefined;
    case 'json':
      if (typname === 'json' || typname === 'text' || typname === 'varchar') return (v, out) => (writeText(out, v as Uint8Array), true);
      return typname === 'jsonb' ? (v, out) => (writeJsonb(out, v as Uint8Array), true) : undefined;
    case 'bytes':
      if (rendering === 'bytea') return typname === 'bytea' ? (v, out) => (writeBytea(out, v as Uint8Array), true) : undefined;
      return typname === 'text' || typname === 'varchar' || typname === 'bpchar' ? (v, out) => (writeText(out, v as Uint8Array), true) : undefined;
    case 'uuid':
      return typname === 'uuid' ? (v, out) => (writeUuid(out, v as Uint8Array), true) : undefined;
    default:
      return undefined;
  }
}

function fits(v: bigint, min: bigint, max: bigint, write: (v: bigint) => void): boolean {
  if (v < min || v > max) return false;
  write(v);
  return true;
}

/** Fast writers straight from the flat decoder's bytes for lineitem-like columns; undefined where `valueWriter` does. */
function flatWriter(c: FlatColumn, leaf: LeafKind, typname: string): FlatValueWriter | undefined {
  const value = (write: (i: number, out: WireBuffer) => boolean): FlatValueWriter => ({ kind: 'value', write });
  if (leaf.kind === 'int' && c.type === 'INT32') {
    const i32 = c.i32;
    if (typname === 'int4') return { kind: 'int32', write: (i, out) => (writeInt32(out, i32[i]!), true) };
    if (typname === 'int8') return value((i, out) => (writeInt64(out, i32[i]!), true));
    if (typname === 'int2')
      return value((i, out) => {
        const v = i32[i]!;
        if (v < -32768 || v > 32767) return false;
        writeInt16(out, v);
        return true;
      });
  }
  if (leaf.kind === 'int' && c.type === 'INT64') {
    if (typname === 'int8') return { kind: 'le8', write: (i, out) => (putFieldLittleEndian8(out, c.bytes, i), true) };
    if (typname === 'int4')
      return value((i, out) => {
        const n = int64Number(c, i);
        if (!(n >= -2147483648 && n <= 2147483647)) return false;
        writeInt32(out, n);
        return true;
      });
  }
  if (leaf.kind === 'decimal' && typname === 'numeric' && (c.type === 'INT32' || c.type === 'INT64') && leaf.scale >= 0 && leaf.scale <= 8) {
    const scale = leaf.scale;
    if (c.type === 'INT32') return { kind: 'decimal32', scale, write: (i, out) => (writeScaledNumeric(out, c.i32[i]!, scale), true) };
    return {
      kind: 'decimal64',
      scale,
      write: (i, out) => {
      const n = int64Number(c, i);
      if (n === n) writeScaledNumeric(out, n, scale);
        else return writeNumericFromDecimal(out, int64BigInt(c, i), scale);
        return true;
      },
    };
  }
  if (leaf.kind === 'date' && typname === 'date' && c.type === 'INT32') return { kind: 'date', write: (i, out) => (writeInt32(out, c.i32[i]! - UNIX_TO_POSTGRES_DAYS), true) };
  if (leaf.kind === 'double' && typname === 'float8' && c.type === 'DOUBLE') return { kind: 'le8', write: (i, out) => (putFieldLittleEndian8(out, c.bytes, i), true) };
  if (c.span !== undefined) {
    const span = c.span;
    const text = typname === 'text' || typname === 'varchar' || typname === 'bpchar';
    if (((leaf.kind === 'string' || leaf.kind === 'json') && (text || typname === 'json')) || (leaf.kind === 'bytes' && typname === 'bytea'))
      return {
        kind: 'span',
        write: (i, out) => {
          const s = span[2 * i]!;
          putField(out, c.bytes, s, span[2 * i + 1]! - s);
          return true;
        },
      };
  }
  return undefined;
}

/** An 8-byte field from little-endian value i of `bytes` (INT64, DOUBLE): the bytes reversed. */
function putFieldLittleEndian8(out: WireBuffer, bytes: Uint8Array, i: number): void {
  out.reserve(12);
  const b = out.bytes;
  const p = out.pos;
  const s = 8 * i;
  b[p] = 0;
  b[p + 1] = 0;
  b[p + 2] = 0;
  b[p + 3] = 8;
  for (let k = 0; k < 8; k++) b[p + 4 + k] = bytes[s + 7 - k]!;
  out.pos = p + 12;
}
