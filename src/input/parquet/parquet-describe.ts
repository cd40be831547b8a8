import { parquetSchema, type FileMetaData, type SchemaElement, type SchemaTree } from 'hyparquet';
import type { DescribedColumn } from '../input-format.js';
import { fieldShape, UnsupportedParquetType, type FieldShape, type LeafKind } from './parquet-types.js';

/** PostgreSQL's type for a signed integer of `bits` (no one-byte integer there: INT8 is a smallint). */
const signed = (bits: number): string => (bits <= 16 ? 'smallint' : bits <= 32 ? 'integer' : 'bigint');
/** PostgreSQL's type that holds every unsigned integer of `bits`: one size up, numeric(20,0) for 64. */
const unsigned = (bits: number): string => (bits <= 8 ? 'smallint' : bits <= 16 ? 'integer' : bits <= 32 ? 'bigint' : 'numeric(20,0)');

/** The width of an integer leaf: its INTEGER annotation, its legacy INT_n/UINT_n, else its physical type's. */
function bitsOf(e: SchemaElement): number {
  if (e.logical_type?.type === 'INTEGER') return e.logical_type.bitWidth;
  const legacy = /^U?INT_(\d+)$/.exec(e.converted_type ?? '');
  if (legacy) return Number(legacy[1]);
  return e.type === 'INT32' ? 32 : 64;
}

function leafType(e: SchemaElement, leaf: LeafKind): string {
  switch (leaf.kind) {
    case 'int':
      return signed(bitsOf(e));
    case 'uint32':
    case 'uint64':
      return unsigned(bitsOf(e));
    case 'decimal':
      return `numeric(${leaf.precision},${leaf.scale})`;
    case 'float':
    case 'float16':
      return 'real';
    case 'double':
      return 'double precision';
    case 'boolean':
      return 'boolean';
    case 'string':
      return 'text';
    case 'json':
      return 'jsonb';
    case 'uuid':
      return 'uuid';
    case 'bytes':
      return 'bytea';
    case 'date':
      return 'date';
    case 'time':
      return 'time';
    case 'timestamp':
      return leaf.utc ? 'timestamptz' : 'timestamp';
    case 'int96':
      // The legacy Impala/Spark timestamp, read as the wall-clock time it holds (as a load renders it).
      return 'timestamp';
  }
}

/** A field's PostgreSQL type: a scalar's own, a LIST of a scalar its array, any other group (STRUCT, MAP, nested LIST) jsonb. */
function typeOf(tree: SchemaTree, shape: FieldShape): string {
  if (shape.shape === 'leaf') return leafType(tree.element, shape.leaf);
  if (shape.shape === 'list' && shape.element.shape === 'leaf') return `${leafType(leafElement(tree), shape.element.leaf)}[]`;
  return 'jsonb';
}

/** The schema element of a LIST's scalar element: the field itself (a legacy repeated scalar) or the leaf inside its repeated group. */
function leafElement(tree: SchemaTree): SchemaElement {
  let t = tree;
  while (t.children.length > 0) t = t.children[0]!;
  return t.element;
}

/**
 * The columns a Parquet file's schema declares, in order: each top-level field's name,
 * PostgreSQL type and whether it is REQUIRED. INTERVAL becomes `interval`; a type
 * pgsurge does not read (BSON, GEOMETRY…) has no type.
 */
export function describeParquet(metadata: FileMetaData): DescribedColumn[] {
  return parquetSchema(metadata).children.map((tree) => {
    const e = tree.element;
    const notNull = e.repetition_type === 'REQUIRED';
    try {
      return { name: e.name, type: typeOf(tree, fieldShape(tree)), notNull };
    } catch (error) {
      if (!(error instanceof UnsupportedParquetType)) throw error;
      return error.message === 'INTERVAL' && tree.children.length === 0 ? { name: e.name, type: 'interval', notNull } : { name: e.name, notNull };
    }
  });
}
