import type { LoadTarget } from '../core/chunk.js';
import { sqlIdent, sqlQualifiedName } from '../core/identifiers.js';
import { LoadError } from '../core/load-error.js';
import { createTableSql, knownColumns } from '../datasets/table-ddl.js';
import { parseEncoding } from './encodings.js';
import { readOnce } from './file-blocks.js';
import { describeInput } from './format-registry.js';
import type { FileDescription, SniffedDialect } from './input-format.js';
import type { InputOptions } from './input-options.js';

declare module '../core/chunk.js' {
  interface TargetInputFields {
    /** `--create` of a table pgsurge has no DDL for: what the file declares or shows, and the table made from it. */
    readonly described?: DescribedInput;
  }
}

/** An input described for `--create`: the file's columns and dialect, the CREATE TABLE they make. */
export interface DescribedInput {
  readonly description: FileDescription;
  /** The CREATE TABLE that `--create` runs when the table does not exist. */
  readonly createSql: string;
  /** The session DateStyle the sniffed dates need (`ISO, DMY` for DD/MM/YYYY), when the sniffer says so. */
  readonly datestyle?: string;
  /** `createSql` is pgsurge's built-in DDL of the table, whose columns the file has (`shapedLike`). */
  readonly builtIn?: boolean;
}

/** How much of a file to look at (`--sample N|all`), and the distribution column of a Citus table (`--distribute-by`). */
export interface DescribeForCreate {
  readonly sample?: number | 'all';
}

/**
 * The CREATE TABLE for what a file declares or shows: each column's name (quoted only
 * where it must be), its type (text where the file says none), NOT NULL where the file
 * declares a value is never null (a Parquet REQUIRED field).
 */
export function createTableFromFile(table: string, schema: string | undefined, description: FileDescription): string {
  if (description.columns.length === 0) {
    throw new LoadError('missing-table', `cannot tell the columns of ${sqlQualifiedName(table, schema)} from its file`, { hint: 'create the table first, or give the file a header' });
  }
  const width = Math.max(...description.columns.map((c) => sqlIdent(c.name).length));
  const body = description.columns.map((c) => `  ${sqlIdent(c.name).padEnd(width)} ${c.type ?? 'text'}${c.notNull ? ' NOT NULL' : ''}`).join(',\n');
  return `CREATE TABLE ${sqlQualifiedName(table, schema)} (\n${body}\n)`;
}

/** The dialect options a user did not give (explicit flags always win), for a file of `format`. */
export function dialectInputOptions(format: LoadTarget['format'], dialect: SniffedDialect, given: InputOptions = {}): InputOptions {
  const out: { -readonly [K in keyof InputOptions]: InputOptions[K] } = { ...given };
  if (out.header === undefined && out.columns === undefined && dialect.header) out.header = 'skip';
  if (out.delimiter === undefined && format !== 'tbl' && dialect.delimiter !== (format === 'csv' ? ',' : '\t')) out.delimiter = dialect.delimiter;
  if (format === 'csv') {
    if (out.quote === undefined && dialect.quote !== undefined && dialect.quote !== '"') out.quote = dialect.quote;
    if (out.escape === undefined && dialect.escape !== undefined && dialect.escape !== (dialect.quote ?? '"')) out.escape = dialect.escape;
  }
  const encoding = parseEncoding(dialect.encoding);
  if (out.encoding === undefined && encoding !== undefined && encoding !== 'UTF8') out.encoding = encoding;
  if (out.null === undefined && dialect.null !== defaultNull(format)) out.null = dialect.null;
  return out;
}

const defaultNull = (format: LoadTarget['format']): string => (format === 'csv' ? '' : '\\N');

/** A sniffed dialect's structure only: its header, delimiter, quote and escape, with COPY's default encoding and NULL. */
function structureOf(dialect: SniffedDialect, format: LoadTarget['format']): SniffedDialect {
  const { datestyle: _datestyle, ...rest } = dialect;
  return { ...rest, encoding: 'UTF8', null: defaultNull(format), nullMarkers: [defaultNull(format)] };
}

/** The load flags that say a sniffed dialect (the ones that differ from COPY's defaults for the format). */
export function dialectFlags(format: LoadTarget['format'], dialect: SniffedDialect): string[] {
  const o = dialectInputOptions(format, dialect);
  // As a shell reads it back: bare, single-quoted, double-quoted around a single quote, a tab as $'\t'.
  const q = (v: string): string =>
    /^[A-Za-z0-9_.,:@%+=-]+$/.test(v) ? v : v === '\t' ? "$'\\t'" : v.includes("'") && !/["$`\\!]/.test(v) ? `"${v}"` : `'${v.replace(/'/g, `'\\''`)}'`;
  return [
    ...(o.header ? ['--header'] : []),
    ...(o.delimiter !== undefined ? [`--delimiter ${q(o.delimiter)}`] : []),
    ...(o.quote !== undefined ? [`--quote ${q(o.quote)}`] : []),
    ...(o.escape !== undefined ? [`--escape ${q(o.escape)}`] : []),
    ...(o.encoding !== undefined ? [`--encoding ${o.encoding}`] : []),
    ...(o.null !== undefined ? [`--null ${q(o.null)}`] : []),
  ];
}

/**
 * A file holds the rows of a table pgsurge has DDL for (a DBT-3 table, the narrow table)
 * when its columns are the table's: by name where the file names them (a header, JSON
 * keys, Parquet's schema), by count where it does not. A user's own `orders.csv` with
 * other columns gets a table of its own columns, not DBT-3's.
 */
function shapedLike(description: FileDescription, known: readonly (readonly [string, string])[]): boolean {
  const { columns, dialect } = description;
  if (columns.length !== known.length) return false;
  if (dialect !== undefined && !dialect.header) return true;
  // A header's fields are the columns in their order (COPY reads by position); keys and Parquet's fields are read by name.
  if (dialect !== undefined) return columns.every((c, i) => c.name.toLowerCase() === known[i]![0].toLowerCase());
  return allKnown(columns.map((c) => c.name), known);
}

/** Every one of `names` is a column of the known table (letter case aside). */
function allKnown(names: readonly string[], known: readonly (readonly [string, string])[]): boolean {
  const columns = new Set(known.map(([name]) => name.toLowerCase()));
  return names.every((name) => columns.has(name.toLowerCase()));
}

/**
 * `--columns` naming only columns of a table pgsurge has DDL for says the file's fields are
 * those columns (a few of `orders`, the others left to their defaults): the built-in table.
 * Undefined without `--columns`, when the file's own columns decide (`shapedLike`).
 */
function namesKnownColumns(given: readonly string[] | undefined, known: readonly (readonly [string, string])[]): boolean | undefined {
  return given === undefined || given.length === 0 ? undefined : allKnown(given, known);
}

/**
 * `--columns` naming as many columns as a delimited file has fields names the table's
 * columns (a file without a header has only `c1`…`cN` else); the types stay the sniffed ones.
 */
function namedBy(description: FileDescription, given: readonly string[] | undefined): FileDescription {
  if (given === undefined || description.dialect === undefined || given.length !== description.columns.length) return description;
  return { ...description, columns: description.columns.map(({ key: _key, ...c }, i) => ({ ...c, name: given[i]! })) };
}

/**
 * `--create` with a table pgsurge has no DDL for: each input described (once per file),
 * its CREATE TABLE made, and a delimited text file read with its sniffed dialect where
 * the user gave no dialect flag (a flag given wins for what it says). Inputs of the
 * DBT-3 and narrow tables keep their built-in DDL: a `.tbl` returned as it is, any other
 * file read as sniffed when it has the table's columns (`shapedLike`). stdin and pipes
 * cannot be described (reading them for a sample would use them up).
 */
export async function describeForCreate(inputs: readonly LoadTarget[], options: DescribeForCreate): Promise<LoadTarget[]> {
  const out: LoadTarget[] = [];
  for (const input of inputs) {
    const known = knownColumns(input.table);
    // dbgen's .tbl of a DBT-3 table is the table's without a look; a pipe cannot be sampled.
    if (input.described !== undefined || readOnce(input.file) || (known !== undefined && input.format === 'tbl')) {
      out.push(input);
      continue;
    }
    const found = await describeInput(input, options.sample === undefined ? {} : { sample: options.sample }).catch((error: unknown) => {
      // A file that cannot be read is the load's to report, in its words.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'EACCES') return undefined;
      throw error;
    });
    if (found === undefined) {
      out.push(input);
      continue;
    }
    const builtIn = known !== undefined && (namesKnownColumns(input.input?.columns, known) ?? shapedLike(found, known));
    // A file of a built-in table is read with the structure sniffed (header, delimiter, quotes), not with a sniffed
    // encoding, NULL marker or DateStyle: the table's data needs none, and a damaged line is a reject, as without --create.
    const description = builtIn && found.dialect !== undefined ? { ...found, dialect: structureOf(found.dialect, input.format) } : namedBy(found, input.input?.columns);
    const createSql = builtIn ? createTableSql(input.table, input.schema)! : createTableFromFile(input.table, input.schema, description);
    const { dialect } = description;
    const given = input.input ?? {};
    // JSON keys made identifiers: each column is filled from its key.
    const renamed = description.columns.filter((c) => c.key !== undefined && c.key !== c.name);
    const keyed = renamed.length > 0 ? { ...given, keys: Object.fromEntries(renamed.map((c) => [c.name, c.key!])) } : given;
    const read = dialect !== undefined ? dialectInputOptions(input.format, dialect, keyed) : keyed;
    const datestyle = dialect?.datestyle;
    out.push({ ...input, input: read, described: { description, createSql, ...(datestyle ? { datestyle } : {}), ...(builtIn ? { builtIn } : {}) } });
  }
  return out;
}

/** One line saying what was sniffed of an input and how it is read, for the load's messages and `schema`. */
export function describedLine(input: LoadTarget): string | undefined {
  const d = input.described;
  if (d === undefined) return undefined;
  const { description } = d;
  const how = d.builtIn === true ? `pgsurge's built-in DDL of ${input.table}` : description.whole ? 'the whole file' : `a sample of ${description.sampled} records`;
  if (description.dialect === undefined) return `${input.file}: columns and types from ${description.sampled === 0 && d.builtIn !== true ? "the file's schema" : how}`;
  const flags = dialectFlags(input.format, description.dialect);
  return `${input.file}: ${description.dialect.format}, read as ${flags.length > 0 ? flags.join(' ') : "COPY's defaults"}${d.datestyle ? ` (DateStyle ${d.datestyle})` : ''}; types from ${how}`;
}

/** The hint for rows a load rejects from a table created from a sample: the value did not fit the sniffed type. */
export function sampledTypesHint(inputs: readonly LoadTarget[]): string | undefined {
  const sampled = inputs.filter((i) => i.described !== undefined && !i.described.description.whole);
  if (sampled.length === 0) return undefined;
  // A dry run's temporary table is named as the table it stands for.
  const nameOf = (i: LoadTarget): string => sqlQualifiedName(i.table, i.schema === 'pg_temp' ? undefined : i.schema);
  const tables = [...new Set(sampled.map(nameOf))].join(', ');
  const first = nameOf(sampled[0]!);
  return `the types of ${tables} were sniffed from a sample of the file, and a value later in it that does not fit its column's type is rejected: drop the table and load again with --sample all (which reads the whole file first), or widen the column (ALTER TABLE ${first} ALTER COLUMN <column> TYPE text, the column the reject file's .log names) and load the reject file into it`;
}
