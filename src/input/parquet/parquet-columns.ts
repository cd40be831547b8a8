import { parquetSchema, type FileMetaData } from 'hyparquet';
import type { LoadTarget } from '../../core/chunk.js';
import type { TableColumn } from '../../core/table-columns.js';
import { qualifiedName } from '../../core/identifiers.js';
import { LoadError } from '../../core/load-error.js';
import { fieldShape, UnsupportedParquetType, type FieldShape } from './parquet-types.js';

declare module '../../core/chunk.js' {
  interface TargetInputFields {
    /** Parquet inputs: which field of the file fills each of `columns`, and how its values become the column's text. */
    readonly parquetColumns?: readonly ParquetColumn[];
  }
}

/** How a column's values become the column's text: as they are, bytea's hex, JSON, or an array literal. */
export type ParquetRendering = 'text' | 'bytea' | 'json' | 'array';

/** One column of the load: the table's column, the file's field that fills it, and how. */
export interface ParquetColumn {
  /** The table's column (COPY's column list). */
  readonly column: string;
  /** The file's top-level field of the same name. */
  readonly field: string;
  readonly shape: FieldShape;
  readonly rendering: ParquetRendering;
}

/** The file's top-level fields, by name, in order. */
export function parquetFields(metadata: FileMetaData, file: string): FieldShape[] {
  return parquetSchema(metadata).children.map((tree) => {
    try {
      return fieldShape(tree);
    } catch (error) {
      if (!(error instanceof UnsupportedParquetType)) throw error;
      return { shape: 'leaf', name: tree.element.name, leaf: { kind: 'bytes' }, label: `unsupported ${error.message}`, unsupported: error.message } as FieldShape & { unsupported: string };
    }
  });
}

/**
 * The column plan of a Parquet input, checked before anything loads: the table's columns
 * (or `--columns`) matched by name to the file's fields (exactly, else ignoring case when
 * that finds one), each of a type its column can take. A table column the file lacks, a
 * file field the table lacks, or a type the column cannot take, stops the load here with
 * one message naming all of them.
 */
export function planParquetColumns(target: LoadTarget, table: readonly TableColumn[], fields: readonly FieldShape[], named: readonly string[] | undefined): ParquetColumn[] {
  const tableName = qualifiedName(target.table, target.schema);
  const byName = new Map(table.map((c) => [c.name, c]));
  const problems: string[] = [];
  const wanted: TableColumn[] = [];
  if (named !== undefined) {
    for (const name of named) {
      const c = byName.get(name);
      if (c === undefined) problems.push(`--columns names ${JSON.stringify(name)}, which table ${tableName} does not have`);
      else if (c.generated) problems.push(`--columns names ${JSON.stringify(name)}, which is generated and takes no input`);
      else wanted.push(c);
    }
  } else wanted.push(...table.filter((c) => !c.generated));

  const fieldOf = (column: string): FieldShape | undefined => fields.find((f) => f.name === column) ?? unique(fields.filter((f) => f.name.toLowerCase() === column.toLowerCase()));
  const plan: ParquetColumn[] = [];
  const used = new Set<string>();
  for (const c of wanted) {
    const field = fieldOf(c.name);
    if (field === undefined) {
      problems.push(`table ${tableName} has column ${c.name}, the file has no field of that name`);
      continue;
    }
    used.add(field.name);
    const unsupported = (field as { unsupported?: string }).unsupported;
    if (unsupported !== undefined) {
      problems.push(`field ${field.name} is of type ${unsupported}, which pgsurge does not read`);
      continue;
    }
    const rendering = renderingFor(field, c);
    if (rendering === undefined) problems.push(`field ${field.name} is ${field.label} in the file, column ${c.name} is ${c.type}`);
    else plan.push({ column: c.name, field: field.name, shape: field, rendering });
  }
  if (named === undefined) {
    const extra = fields.filter((f) => !used.has(f.name));
    for (const f of extra) problems.push(`the file has field ${f.name} (${f.label}), table ${tableName} has no such column`);
  }
  if (problems.length > 0) {
    throw new LoadError('bad-option', `${target.file} does not match table ${tableName}: ${problems.join('; ')}`, {
      hint: 'load a subset of the fields with --columns a,b,c, or fix the table; nothing was loaded',
    });
  }
  return plan;
}

function unique<T>(xs: readonly T[]): T | undefined {
  return xs.length === 1 ? xs[0] : undefined;
}

/**
 * Which Parquet values a column takes: text columns (and types with their own text input,
 * such as enums, inet, uuid) take any value's text; numbers go to numeric columns, dates
 * and times to date/time columns, booleans to boolean; LIST/MAP/STRUCT to json, jsonb or
 * text as JSON, and a LIST to an array column. Into json/jsonb a STRING or JSON field goes
 * as its bytes (the JSON text), any other field as JSON made from its value. Anything else would fail on every row.
 */
function renderingFor(field: FieldShape, c: TableColumn): ParquetRendering | undefined {
  const category = c.category ?? 'S';
  // A string (or JSON) field into json/jsonb holds the JSON text itself (Spark writes JSON so): its bytes go as they are and the
  // server's json input decides, as for CSV of the same data; made into a JSON string, an object would load as "{\"a\": 1}".
  if (c.kind === 'json') return field.shape === 'leaf' && (field.leaf.kind === 'string' || field.leaf.kind === 'json') ? 'text' : 'json';
  if (c.kind === 'array') {
    if (field.shape !== 'list') return undefined;
    let element = field.element;
    while (element.shape === 'list') element = element.element;
    if (element.shape !== 'leaf') return c.elementJson ? 'array' : undefined;
    return takes(element, category, c.typname) ? 'array' : undefined;
  }
  if (field.shape !== 'leaf') return category === 'S' ? 'json' : undefined;
  if (field.leaf.kind === 'bytes' && c.typname === 'bytea') return 'bytea';
  return takes(field, category, c.typname) ? 'text' : undefined;
}

function takes(field: FieldShape & { shape: 'leaf' }, category: string, typname: string | undefined): boolean {
  switch (field.leaf.kind) {
    case 'string':
    case 'json':
    case 'bytes':
      // Text: the column's input function decides, row by row (a bad one is rejected).
      return true;
    case 'uuid':
      return typname === 'uuid' || category === 'S';
    case 'int':
    case 'uint32':
    case 'uint64':
    case 'decimal':
    case 'float':
    case 'double':
    case 'float16':
      return category === 'N' || category === 'S';
    case 'date':
    case 'time':
    case 'timestamp':
    case 'int96':
      return category === 'D' || category === 'S';
    case 'boolean':
      return category === 'B' || category === 'S';
  }
}
