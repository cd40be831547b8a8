import type { SchemaElement, SchemaTree } from 'hyparquet';

/**
 * What a Parquet value is, read from its schema element once: the physical type with its
 * logical (or legacy converted) annotation. The reader is asked for the physical values
 * only (annotations stripped, see `rawMetadata`), so every conversion to text or binary
 * is exact and ours: a DECIMAL stays an unscaled integer, a TIMESTAMP its count of units.
 */
export type LeafKind =
  | { readonly kind: 'int' } // INT32/INT64, INT_8…INT_64: a number or a bigint, signed
  | { readonly kind: 'uint32' } // UINT_8/16/32 on INT32: the reader hands the signed 32 bits
  | { readonly kind: 'uint64' } // UINT_64 on INT64: the signed 64 bits
  | { readonly kind: 'decimal'; readonly scale: number; readonly precision: number }
  | { readonly kind: 'date' } // days since 1970-01-01
  | { readonly kind: 'time'; readonly unit: TimeUnit }
  | { readonly kind: 'timestamp'; readonly unit: TimeUnit; readonly utc: boolean }
  | { readonly kind: 'int96' } // legacy Impala/Spark timestamp: nanoseconds since the epoch (the reader's parser)
  | { readonly kind: 'float' } // FLOAT: a float32, held as the number it is exactly
  | { readonly kind: 'double' }
  | { readonly kind: 'float16' } // FIXED_LEN_BYTE_ARRAY(2), little-endian half precision
  | { readonly kind: 'boolean' }
  | { readonly kind: 'string' } // UTF8/STRING, ENUM, JSON, BSON-less text: UTF-8 bytes
  | { readonly kind: 'json' } // JSON: UTF-8 bytes of a JSON document
  | { readonly kind: 'uuid' } // FIXED_LEN_BYTE_ARRAY(16)
  | { readonly kind: 'bytes' }; // BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY without annotation

export type TimeUnit = 'MILLIS' | 'MICROS' | 'NANOS';

/** A field of the file: a leaf with its kind, or a group (LIST, MAP, STRUCT) of fields. */
export type FieldShape =
  | { readonly shape: 'leaf'; readonly name: string; readonly leaf: LeafKind; readonly label: string }
  | { readonly shape: 'list'; readonly name: string; readonly element: FieldShape; readonly label: string }
  | { readonly shape: 'map'; readonly name: string; readonly key: FieldShape; readonly value: FieldShape; readonly label: string }
  | { readonly shape: 'struct'; readonly name: string; readonly fields: readonly FieldShape[]; readonly label: string };

export class UnsupportedParquetType extends Error {}

/** The kind of a primitive schema element. */
export function leafKind(e: SchemaElement): LeafKind {
  const lt = e.logical_type;
  const ct = e.converted_type;
  switch (e.type) {
    case 'BOOLEAN':
      return { kind: 'boolean' };
    case 'FLOAT':
      return { kind: 'float' };
    case 'DOUBLE':
      return { kind: 'double' };
    case 'INT96':
      return { kind: 'int96' };
    case 'INT32':
    case 'INT64': {
      if (lt?.type === 'DECIMAL' || ct === 'DECIMAL') return decimalOf(e);
      if (lt?.type === 'DATE' || ct === 'DATE') return { kind: 'date' };
      if (lt?.type === 'TIME') return { kind: 'time', unit: lt.unit };
      if (ct === 'TIME_MILLIS') return { kind: 'time', unit: 'MILLIS' };
      if (ct === 'TIME_MICROS') return { kind: 'time', unit: 'MICROS' };
      if (lt?.type === 'TIMESTAMP') return { kind: 'timestamp', unit: lt.unit, utc: lt.isAdjustedToUTC };
      // The legacy annotations meant an instant (UTC-normalised), as the format's spec says.
      if (ct === 'TIMESTAMP_MILLIS') return { kind: 'timestamp', unit: 'MILLIS', utc: true };
      if (ct === 'TIMESTAMP_MICROS') return { kind: 'timestamp', unit: 'MICROS', utc: true };
      const unsigned = (lt?.type === 'INTEGER' && !lt.isSigned) || ct === 'UINT_8' || ct === 'UINT_16' || ct === 'UINT_32' || ct === 'UINT_64';
      if (unsigned) return { kind: e.type === 'INT32' ? 'uint32' : 'uint64' };
      if (ct === 'INTERVAL') throw new UnsupportedParquetType('INTERVAL');
      return { kind: 'int' };
    }
    case 'BYTE_ARRAY':
    case 'FIXED_LEN_BYTE_ARRAY': {
      if (lt?.type === 'DECIMAL' || ct === 'DECIMAL') return decimalOf(e);
      if (lt?.type === 'UUID') return { kind: 'uuid' };
      if (lt?.type === 'FLOAT16') return { kind: 'float16' };
      if (lt?.type === 'JSON' || ct === 'JSON') return { kind: 'json' };
      if (lt?.type === 'STRING' || lt?.type === 'ENUM' || ct === 'UTF8' || ct === 'ENUM') return { kind: 'string' };
      if (ct === 'INTERVAL') throw new UnsupportedParquetType('INTERVAL');
      if (lt?.type === 'BSON' || ct === 'BSON') throw new UnsupportedParquetType('BSON');
      if (lt?.type === 'GEOMETRY' || lt?.type === 'GEOGRAPHY' || lt?.type === 'VARIANT') throw new UnsupportedParquetType(lt.type);
      return { kind: 'bytes' };
    }
    default:
      throw new UnsupportedParquetType(String(e.type));
  }
}

function decimalOf(e: SchemaElement): LeafKind {
  const lt = e.logical_type;
  const scale = lt?.type === 'DECIMAL' ? lt.scale : (e.scale ?? 0);
  const precision = lt?.type === 'DECIMAL' ? lt.precision : (e.precision ?? 38);
  return { kind: 'decimal', scale, precision };
}

/** `DECIMAL(15,2)`, `TIMESTAMP(MICROS, UTC)`, `LIST<INT64>`: how a message names a field's type. */
export function leafLabel(e: SchemaElement, k: LeafKind): string {
  switch (k.kind) {
    case 'decimal':
      return `DECIMAL(${k.precision},${k.scale})`;
    case 'timestamp':
      return `TIMESTAMP(${k.unit}${k.utc ? ', UTC' : ''})`;
    case 'time':
      return `TIME(${k.unit})`;
    case 'int':
      return e.logical_type?.type === 'INTEGER' ? `INT${e.logical_type.bitWidth}` : (e.converted_type ?? e.type!);
    case 'uint32':
    case 'uint64':
      return e.logical_type?.type === 'INTEGER' ? `UINT${e.logical_type.bitWidth}` : (e.converted_type ?? e.type!);
    case 'string':
      return e.logical_type?.type === 'ENUM' || e.converted_type === 'ENUM' ? 'ENUM' : 'STRING';
    default:
      return k.kind === 'bytes' ? e.type! : k.kind.toUpperCase();
  }
}

/**
 * The shape of a top-level field, following the format's rules for nested types: a LIST
 * is `<list> (repeated group { element })` (or a legacy repeated field), a MAP is
 * `(repeated key_value { key, value })`, any other group is a STRUCT. hyparquet assembles
 * values in the same shapes: arrays, objects keyed by the map's keys, objects by field name.
 */
export function fieldShape(tree: SchemaTree): FieldShape {
  const e = tree.element;
  const name = e.name;
  if (tree.children.length === 0) {
    const leaf = leafKind(e);
    const shape: FieldShape = { shape: 'leaf', name, leaf, label: leafLabel(e, leaf) };
    // A repeated primitive outside a LIST is a list of it (the legacy form).
    return e.repetition_type === 'REPEATED' ? { shape: 'list', name, element: shape, label: `LIST<${shape.label}>` } : shape;
  }
  const annotation = e.logical_type?.type ?? e.converted_type;
  if (annotation === 'LIST') {
    const repeated = tree.children[0]!;
    // Three-level form: the repeated group holds the one element; else the repeated field is the element (as hyparquet assembles it).
    const elementTree = repeated.children.length === 1 ? repeated.children[0]! : { ...repeated, element: { ...repeated.element, repetition_type: 'OPTIONAL' as const } };
    const element = fieldShape(elementTree);
    return { shape: 'list', name, element, label: `LIST<${element.label}>` };
  }
  if (annotation === 'MAP' || annotation === 'MAP_KEY_VALUE') {
    const kv = tree.children[0]!;
    const key = fieldShape(kv.children[0]!);
    const value = fieldShape(kv.children[1]!);
    return { shape: 'map', name, key, value, label: `MAP<${key.label}, ${value.label}>` };
  }
  const fields = tree.children.map(fieldShape);
  const shape: FieldShape = { shape: 'struct', name, fields, label: `STRUCT<${fields.map((f) => `${f.name} ${f.label}`).join(', ')}>` };
  return e.repetition_type === 'REPEATED' ? { shape: 'list', name, element: shape, label: `LIST<${shape.label}>` } : shape;
}
