import type pg from 'pg';
import type { Chunk, LoadTarget } from '../core/chunk.js';
import { qualifiedName, quoteIdent } from '../core/identifiers.js';
import { tableColumns, type TableColumn } from '../core/table-columns.js';
import type { ChunkResult, ChunkWriter } from './chunk-writer.js';
import { LoadError } from '../core/load-error.js';
import { wireFormat } from '../wire/wire-format.js';
import { columnLiteralBatches, FieldCountError, hasNoEscapes, valuesBindBatches } from './column-literals.js';
import { bindMessage, parseMessage, runPrepared, SYNC } from './prepared-bind.js';
import { decodeRecordBatches, RecordDecodeError, type DecodedRecord, type FieldValue } from '../wire/decode-records.js';
import { ON_CONFLICT_RULES, type OnConflict } from './on-conflict.js';

/** How rows become INSERT statements. */
export const INSERT_STYLES = ['unnest', 'values', 'row'] as const;
export type InsertStyle = (typeof INSERT_STYLES)[number];

/** PostgreSQL's limit on bound parameters in one statement (the protocol's Int16 count). */
export const MAX_PARAMETERS = 65535;

/**
 * Rows per batch by default, measured with `pgsurge compare` on a lineitem-shaped file
 * (README, "Choosing --batch-rows"): unnest is flat from 1,000 to 20,000 rows; values is
 * best around 250–1,000 rows (a bigger VALUES list costs the server more to bind and
 * plan than it saves in round trips); for row, the batch is only the unit --commit-every counts.
 */
export const DEFAULT_BATCH_ROWS: Readonly<Record<InsertStyle, number>> = { unnest: 5000, values: 1000, row: 1000 };

export interface InsertWriterOptions {
  readonly style: InsertStyle;
  /** Rows per batch: one statement for unnest and values; for row, the rows between commits. */
  readonly batchRows: number;
  /**
   * Batches per transaction. Undefined: one transaction per chunk (the default, so a chunk
   * commits whole or not at all); 0: autocommit, every statement its own transaction.
   */
  readonly commitEvery?: number;
  readonly onConflict: OnConflict;
}

/** A table's statements for one connection. */
interface InsertPlan {
  readonly columns: readonly TableColumn[];
  /** Rows per statement after the parameter cap. */
  readonly batchRows: number;
  /** The statement for a full batch, prepared once per connection under `name`. */
  readonly name: string;
  readonly text: string;
  /** Builds the statement for a batch of `rows` rows (the last, short batch of a chunk). */
  readonly textFor: (rows: number) => string;
  readonly params: (rows: readonly DecodedRecord[]) => unknown[];
}

let statementCounter = 0;

/**
 * Writes a chunk as batched INSERTs with bound parameters (text format; values are never
 * spliced into SQL): the same records COPY would load, decoded as COPY decodes them.
 */
export function insertWriter(options: InsertWriterOptions): ChunkWriter {
  const plans = new WeakMap<pg.Client, Map<string, InsertPlan>>();

  async function planFor(client: pg.Client, target: LoadTarget): Promise<InsertPlan> {
    let byTable = plans.get(client);
    if (byTable === undefined) plans.set(client, (byTable = new Map()));
    const table = qualifiedName(target.table, target.schema);
    const key = target.columns === undefined ? table : `${table}\u0000${target.columns.join('\u0000')}`;
    let plan = byTable.get(key);
    if (plan === undefined) {
      const all = await tableColumns(client, target.table, target.schema);
      // A column list (--columns, a header, a JSON key set) fills those columns, in its order.
      const columns = target.columns === undefined ? all : target.columns.map((name) => all.find((c) => c.name === name)!);
      plan = insertPlan(table, columns, options);
      byTable.set(key, plan);
    }
    return plan;
  }

  return {
    name: `insert:${options.style}`,
    ownsTransactions: options.commitEvery !== undefined,
    failedRecord(error) {
      return (error as { pgsurgeRecord?: number } | undefined)?.pgsurgeRecord;
    },
    async writeRows(client: pg.Client, chunk: Chunk): Promise<ChunkResult> {
      const plan = await planFor(client, chunk.target);
      const format = decodeFormat(chunk.target);
      if (format !== 'csv' && options.style !== 'row' && hasNoEscapes(chunk.data)) {
        const delimiter = format === 'tbl' ? PIPE : TAB;
        if (options.style === 'unnest') return runBatches(client, fastUnnestBatches(plan, chunk.data, delimiter), options);
        return runBatches(client, fastValuesBatches(client, plan, chunk.data, delimiter), options);
      }
      return runBatches(client, decodedBatches(plan, chunk, options.style), options);
    },
  };
}

/**
 * How the decoder reads a chunk: COPY text with a tab or `|`, or CSV, with COPY's default
 * NULL, quote and escape (the options the decoder knows).
 */
function decodeFormat(target: LoadTarget): 'tbl' | 'text' | 'csv' {
  const wire = wireFormat(target);
  if (wire.null !== undefined || wire.quote !== undefined || wire.escape !== undefined || (wire.delimiter !== undefined && wire.delimiter !== '|')) {
    throw new LoadError('bad-option', "--mode insert reads records with COPY's default delimiters, NULL, quote and escape only", {
      hint: 'drop --delimiter/--null/--quote/--escape, or use --mode copy',
    });
  }
  return wire.format === 'csv' ? 'csv' : wire.delimiter === '|' ? 'tbl' : 'text';
}

/**
 * COPY's own words for the same input, with the record's place in the chunk; coded as
 * COPY codes it (22P04, bad_copy_file_format), so the record is isolated and rejected.
 */
function recordError(record: number, message: string): Error {
  return Object.assign(new Error(`record ${record} of the chunk: ${message}`), { code: '22P04', pgsurgeRecord: record });
}

function fieldCountError(e: FieldCountError): Error {
  return recordError(e.record, e.message);
}

const PIPE = 0x7c;
const TAB = 0x09;

/** One statement's worth of rows, run when the transaction logic asks for it. */
interface Batch {
  readonly rows: number;
  execute(client: pg.Client): Promise<number>;
}

/** Decoded a batch at a time; a record COPY would refuse stops the chunk (and rolls back its transaction). */
function* decodedBatches(plan: InsertPlan, chunk: Chunk, style: InsertStyle): Generator<Batch> {
  const columns = plan.columns.length;
  let before = 0;
  try {
    for (const batch of decodeRecordBatches(chunk.data, decodeFormat(chunk.target), plan.batchRows)) {
      for (let i = 0; i < batch.length; i++) {
        const n = batch[i]!.length;
        if (n !== columns) throw new FieldCountError(before + i + 1, n, columns);
      }
      before += batch.length;
      yield { rows: batch.length, execute: (client) => executeBatch(client, plan, batch, style) };
    }
  } catch (error) {
    if (error instanceof FieldCountError) throw fieldCountError(error);
    if (error instanceof RecordDecodeError) throw recordError(error.record, error.message);
    throw error;
  }
}

function* fastUnnestBatches(plan: InsertPlan, data: Buffer, delimiter: number): Generator<Batch> {
  try {
    for (const batch of columnLiteralBatches(data, delimiter, plan.columns.length, plan.batchRows)) {
      yield { rows: batch.rows, execute: async (client) => (await client.query({ name: plan.name, text: plan.text, values: batch.literals })).rowCount ?? 0 };
    }
  } catch (error) {
    throw error instanceof FieldCountError ? fieldCountError(error) : error;
  }
}

/** The statements for one table and style. */
export function insertPlan(table: string, columns: readonly TableColumn[], options: Pick<InsertWriterOptions, 'style' | 'batchRows' | 'onConflict'>): InsertPlan {
  const n = columns.length;
  const head = `INSERT INTO ${table} (${columns.map((c) => quoteIdent(c.name)).join(', ')})`;
  const tail = ON_CONFLICT_RULES[options.onConflict].leavesOut ? ' ON CONFLICT DO NOTHING' : '';
  const name = `pgsurge_${options.style}_${++statementCounter}`;
  switch (options.style) {
    case 'unnest': {
      // One unnest per column in the select list, run in lockstep (the arrays are equally
      // long): measured 10–30% faster than `SELECT * FROM unnest($1, $2, …)`, whose
      // function scan first copies every row into a tuplestore. Each array has the
      // column's type without its modifier; array columns travel as text[] and are cast
      // per element, since unnest would flatten a 2-D array.
      const text = `${head} SELECT ${columns.map((c, i) => (c.isArray ? `unnest($${i + 1}::text[])::${c.baseType}` : `unnest($${i + 1}::${c.baseType}[])`)).join(', ')}${tail}`;
      return {
        columns,
        batchRows: options.batchRows,
        name,
        text,
        textFor: () => text,
        params: (rows) => columns.map((_, col) => arrayLiteral(rows, col)),
      };
    }
    case 'values':
    case 'row': {
      const batchRows = options.style === 'row' ? options.batchRows : Math.max(1, Math.min(options.batchRows, Math.floor(MAX_PARAMETERS / n)));
      const perStatement = options.style === 'row' ? 1 : batchRows;
      const textFor = (rows: number): string => {
        const tuples: string[] = [];
        for (let r = 0; r < rows; r++) tuples.push(`(${columns.map((_, c) => `$${r * n + c + 1}`).join(',')})`);
        return `${head} VALUES ${tuples.join(',')}${tail}`;
      };
      return { columns, batchRows, name, text: textFor(perStatement), textFor, params: (rows) => flatten(rows, n) };
    }
  }
}

/**
 * A PostgreSQL array literal of one column of a batch: every element quoted (so commas,
 * braces, spaces and the word NULL stay data), `"` and `\` escaped, NULL for null.
 * Built with one native join when no element needs more than its quotes, since these
 * strings are most of the client's work in an unnest load.
 */
export function arrayLiteral(rows: readonly DecodedRecord[], column: number): string {
  const values = new Array<FieldValue>(rows.length);
  let plain = true;
  for (let r = 0; r < rows.length; r++) {
    const v = rows[r]![column] ?? null;
    values[r] = v;
    if (plain && (v === null || NEEDS_ESCAPE.test(v))) plain = false;
  }
  if (plain) return rows.length === 0 ? '{}' : `{"${values.join('","')}"}`;
  for (let r = 0; r < values.length; r++) {
    const v = values[r];
    values[r] = v === null ? 'NULL' : NEEDS_ESCAPE.test(v!) ? `"${v!.replace(ESCAPED, '\\$&')}"` : `"${v}"`;
  }
  return `{${values.join(',')}}`;
}
const NEEDS_ESCAPE = /["\\]/;
const ESCAPED = /["\\]/g;

/** A batch's fields in row order, one parameter each. */
function flatten(rows: readonly DecodedRecord[], columns: number): FieldValue[] {
  const out = new Array<FieldValue>(rows.length * columns);
  let k = 0;
  for (const row of rows) for (let c = 0; c < columns; c++) out[k++] = row[c] ?? null;
  return out;
}

/** Statements prepared by `fastValuesBatches` on each connection (node-postgres does not know them). */
const rawParsed = new WeakMap<pg.Client, Set<string>>();

/**
 * The values fast path: the Bind messages are built from the chunk's bytes (no string per
 * field, no per-parameter work in node-postgres). Full batches run the statement prepared
 * under its own name; the last, shorter batch of a chunk goes as the unnamed statement.
 */
function* fastValuesBatches(client: pg.Client, plan: InsertPlan, data: Buffer, delimiter: number): Generator<Batch> {
  const name = `${plan.name}_raw`;
  let parsed = rawParsed.get(client);
  if (parsed === undefined) rawParsed.set(client, (parsed = new Set()));
  const known = parsed;
  const ensureParsed = async (): Promise<void> => {
    if (known.has(name)) return;
    await runPrepared(client, Buffer.concat([parseMessage(name, plan.text), SYNC]));
    known.add(name);
  };
  const columns = plan.columns.length;
  // The batch's size is known only once it is cut: a full batch binds the named statement,
  // the last, shorter one is parsed as the unnamed statement in the same message.
  const message = (count: number, bytes: number, write: (out: Buffer, offset: number) => number): Buffer =>
    count === plan.batchRows * columns
      ? bindMessage(name, count, bytes, write)
      : Buffer.concat([parseMessage('', plan.textFor(count / columns)), bindMessage('', count, bytes, write)]);
  try {
    for (const batch of valuesBindBatches(data, delimiter, columns, plan.batchRows, message)) {
      const full = batch.rows === plan.batchRows;
      yield {
        rows: batch.rows,
        execute: async (c) => {
          if (full) await ensureParsed();
          return runPrepared(c, batch.message);
        },
      };
    }
  } catch (error) {
    throw error instanceof FieldCountError ? fieldCountError(error) : error;
  }
}

/**
 * Runs a chunk's batches; counts what the server stored. By default they run in the
 * caller's transaction (one per chunk, with its ledger row; a deadlock or a bad row fails
 * it and the caller retries or isolates). With `--commit-every n` the writer commits every
 * n batches itself (`0`: autocommit), as an application would; the load then has no ledger.
 */
async function runBatches(client: pg.Client, batches: Iterable<Batch>, options: InsertWriterOptions): Promise<ChunkResult> {
  const { commitEvery } = options;
  const own = commitEvery !== undefined && commitEvery > 0;
  let records = 0;
  let loaded = 0;
  let inTransaction = false;
  let open = 0;
  try {
    for (const batch of batches) {
      records += batch.rows;
      if (own && !inTransaction) {
        await client.query('BEGIN');
        inTransaction = true;
      }
      loaded += await batch.execute(client);
      if (own && ++open >= commitEvery) {
        await client.query('COMMIT');
        inTransaction = false;
        open = 0;
      }
    }
    if (inTransaction) await client.query('COMMIT');
    inTransaction = false;
  } catch (error) {
    if (inTransaction) await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
  // ON CONFLICT DO NOTHING leaves rows out on purpose: skipped. Otherwise the count goes as the server gave it, and the
  // caller's count guard holds it against the chunk's records (a BEFORE INSERT trigger may keep rows out too).
  return { loaded, skipped: ON_CONFLICT_RULES[options.onConflict].leavesOut ? records - loaded : 0 };
}

async function executeBatch(client: pg.Client, plan: InsertPlan, batch: readonly DecodedRecord[], style: InsertStyle): Promise<number> {
  if (style === 'row') {
    let stored = 0;
    for (const row of batch) stored += (await client.query({ name: plan.name, text: plan.text, values: row })).rowCount ?? 0;
    return stored;
  }
  const full = batch.length === plan.batchRows || style === 'unnest';
  const query = full ? { name: plan.name, text: plan.text, values: plan.params(batch) } : { text: plan.textFor(batch.length), values: plan.params(batch) };
  return (await client.query(query)).rowCount ?? 0;
}
