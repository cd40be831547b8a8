import { createHash, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import type { LoadTarget } from '../core/chunk.js';
import { checkColumnCount } from '../input/column-check.js';
import { qualifiedName } from '../core/identifiers.js';
import type { Target } from '../cluster/target.js';
import { cannotRead, LoadError } from '../core/load-error.js';
import { planInputColumns } from '../input/plan-input-columns.js';
import { tableColumns, type TableColumnCache } from '../core/table-columns.js';
import { prepareTable, withTableCreationLocks, requireSchema } from './table-check.js';
import { preflight } from './preflight.js';
import { beforeInsertRowTriggers } from '../core/row-triggers.js';
import { fileIdentity, fileKeyOf, identityString } from '../writer/ledger/file-identity.js';
import { ensureLedger, forgetTable, LEDGER_SCHEMA, unloggedTableReset, LedgerWriter, NO_LEDGER, NOTHING_COVERED, openLoad, type ChunkLedger, type Covered, type LedgerInput } from '../writer/ledger/ledger.js';
import { earlierLoadToContinue, readOptionsOf, rerunChanges, type RerunInput } from './load-rerun.js';
import { partLabel } from '../input/load-part.js';
import { DELIMITED_FORMATS } from '../input/formats.js';
import { fileBlocks } from '../input/file-blocks.js';
import { refuseWideEncoding } from '../input/record-window.js';
import type { ByteRange } from '../input/byte-ranges.js';
import { checkPartOptions, lockLoad, partRejectPath, partShares } from './part-load.js';
import type { LoadReporter } from '../metrics/load-counters.js';
import { claimRejectPath, rejectPathFor } from '../writer/rejects/reject-file.js';
import { copyWriter } from '../writer/copy-writer.js';
import { citusLoad, type CitusLoad } from '../writer/citus/citus-load.js';
import type { LoadOptions } from './load-options.js';
import { waitForEarlierRun, workerNamePrefix } from './load-sessions.js';

/** `--part K/N`: the part's label and its byte range of each input (by path as named). */
export interface PartPlan {
  readonly label: string;
  readonly shares: ReadonlyMap<string, ByteRange>;
}

/** The inputs as found before anything connects. */
export interface CheckedInputs {
  /** Each input's size in bytes; undefined for stdin and what is not a plain file. */
  readonly sizes: readonly (number | undefined)[];
  /** Each file's identity (device, inode, content); undefined for stdin. */
  readonly identities: readonly (string | undefined)[];
  readonly part: PartPlan | undefined;
}

/** Everything decided on the control connection before a row moves: tables, load id, lock, reject paths, ledger. */
export interface LoadPlan extends CheckedInputs {
  readonly withLedger: boolean;
  readonly loadId: string;
  /** The workers' application_name prefix (`workerNamePrefix`). */
  readonly workerPrefix: string;
  readonly tables: ReadonlyMap<LoadTarget, PreparedTable>;
  /** The inputs with their column plans, in input order. */
  readonly planned: readonly LoadTarget[];
  /** Input path → its table's BEFORE INSERT row triggers (the count guard's one allowance). */
  readonly rowTriggers: ReadonlyMap<string, readonly string[]>;
  readonly citus: CitusLoad | undefined;
  /** The target as the summary names it (with the Citus cluster). */
  readonly where: string;
  /** Input path → its reject file's path. */
  readonly rejectPaths: ReadonlyMap<string, string>;
  /** The unlogged tables written to (oid → name), checked after a reconnect. */
  readonly unlogged: ReadonlyMap<number, string>;
  /** pg_postmaster_start_time() as the load began ('' without the ledger). */
  readonly serverStart: string;
  /** Input path as named → its ledger entry. */
  readonly ledgerInputs: ReadonlyMap<string, LedgerInput>;
  readonly ledger: ChunkLedger;
  /** What earlier runs of this load committed of an input. */
  coveredOf(input: LoadTarget): Covered;
  /** Inputs (as named) that grew since the load read them, their loaded part unchanged: this run loads what was appended. */
  readonly appended: readonly string[];
  /** The load completed before (every input read to its end, none grew since): this run loads nothing. */
  readonly completed: { readonly at: Date } | undefined;
}

/** Every input readable, a part's shares cut, no file named twice: before anything connects. */
export async function checkLoadInputs(inputs: readonly LoadTarget[], options: LoadOptions): Promise<CheckedInputs> {
  const sizes = await checkInputs(inputs);
  if (options.part) checkPartOptions(inputs, options);
  const shares = options.part ? await partShares(inputs, sizes, options.part) : undefined;
  const part = options.part && shares ? { label: partLabel(options.part), shares } : undefined;
  const identities = await Promise.all(inputs.map((i, n) => (i.file === '-' || sizes[n] === undefined ? undefined : fileIdentity(i.file).then(identityString))));
  refuseSameFileTwice(inputs, identities);
  await refuseSamePipeTwice(inputs, sizes, options.stdin !== undefined);
  return { sizes, identities, part };
}

/**
 * A pipe or device named twice (a named pipe and a link to it, its path twice, `-` and
 * /dev/stdin) would have two readers at once taking turns at its bytes, each cutting
 * records where the other's reads fall: refused whatever the tables, as stdin named twice
 * is. Stat'ed, not opened. `-` is the process's stdin unless the load was handed a stream.
 */
async function refuseSamePipeTwice(inputs: readonly LoadTarget[], sizes: readonly (number | undefined)[], stdinGiven: boolean): Promise<void> {
  const seen = new Map<string, string>();
  for (const [i, input] of inputs.entries()) {
    if (sizes[i] !== undefined || (input.file === '-' && stdinGiven)) continue;
    const st = await fs.stat(input.file === '-' ? '/dev/stdin' : input.file).catch(() => undefined);
    if (st === undefined || st.isFile()) continue;
    const key = `${st.dev}:${st.ino}`;
    const first = seen.get(key);
    if (first !== undefined) {
      throw new LoadError('bad-option', `${input.file} and ${first} are the same pipe or device: two readers would split its bytes between them`, { hint: 'name it once' });
    }
    seen.set(key, input.file);
  }
}

/**
 * On the control connection: the tables ready and their column plans, the load id, the
 * load's lock, the reject paths, the ledger opened on what earlier runs committed.
 */
export async function planLoad(control: pg.Client, inputs: readonly LoadTarget[], options: LoadOptions, checked: CheckedInputs, target: Target, reporter: LoadReporter): Promise<LoadPlan> {
  const withLedger = options.ledger !== false;
  await preflight(control, inputs, options);
  if (withLedger) await ensureLedger(control);
  // With each table ready, its columns are read once: what each input's records fill (the column plan).
  const { tables, planned } = await prepareTables(control, inputs, options);
  const rowTriggers = await findRowTriggers(control, inputs, tables, reporter);
  // A delimited input's `--columns` is compared with the columns COPY fills, in the table's order.
  const copyColumnsOf = new Map<LoadTarget, readonly string[]>();
  for (const input of inputs) {
    if (input.input?.columns !== undefined && DELIMITED_FORMATS.includes(input.format)) copyColumnsOf.set(input, (await tableColumns(control, input.table, input.schema)).map((c) => c.name));
  }
  const rerunInputs = rerunInputsOf(inputs, options, tables, checked.identities, copyColumnsOf);
  const loadId = await chooseLoadId(control, rerunInputs, options);
  // Citus: asked once per load; its tables get session settings and the summary names the cluster.
  const citus = await citusLoad(control, [...new Set([...tables.values()].map((t) => t.oid))], { writer: options.writer ?? copyWriter, ledger: withLedger, settings: options.citusSettings });
  const where = citus ? `${target.description} (${citus.description})` : target.description;
  const workerPrefix = workerNamePrefix(loadId, checked.part?.label);
  if (withLedger) {
    await lockLoad(control, loadId, checked.part?.label);
    await waitForEarlierRun(control, workerPrefix);
  }
  const rejectPaths = await claimRejectPaths(inputs, options, loadId, withLedger);
  const unlogged = withLedger ? await resetUnlogged(control, tables, reporter) : new Map<number, string>();
  const serverStart = withLedger ? (await control.query<{ t: string }>('SELECT pg_postmaster_start_time()::text AS t')).rows[0]!.t : '';
  const opened = await openLedger(control, inputs, options, { checked, rerunInputs, loadId, withLedger });
  return { ...checked, withLedger, loadId, workerPrefix, tables, planned, rowTriggers, citus, where, rejectPaths, unlogged, serverStart, ...opened };
}

/** The count guard's one allowance: a table whose BEFORE INSERT row triggers may keep rows out (by returning NULL). */
async function findRowTriggers(control: pg.Client, inputs: readonly LoadTarget[], tables: ReadonlyMap<LoadTarget, PreparedTable>, reporter: LoadReporter): Promise<Map<string, readonly string[]>> {
  const rowTriggers = new Map<string, readonly string[]>();
  const triggersOfOid = new Map<number, readonly string[]>();
  for (const input of inputs) {
    const t = tables.get(input)!;
    if (!triggersOfOid.has(t.oid)) triggersOfOid.set(t.oid, await beforeInsertRowTriggers(control, t.oid));
    const found = triggersOfOid.get(t.oid)!;
    if (found.length > 0) rowTriggers.set(input.file, found);
  }
  for (const [oid, found] of triggersOfOid) {
    if (found.length === 0) continue;
    const name = [...tables.values()].find((t) => t.oid === oid)!.name;
    reporter.note?.(`${name} has BEFORE INSERT row trigger${found.length === 1 ? '' : 's'} (${found.join(', ')}): rows the server does not store because a trigger returned NULL for them are counted as skipped by the table's trigger`);
  }
  return rowTriggers;
}

/** Each input as the ledger and a rerun see it: its absolute path, table, identity and how it is read. */
function rerunInputsOf(
  inputs: readonly LoadTarget[],
  options: LoadOptions,
  tables: ReadonlyMap<LoadTarget, PreparedTable>,
  identities: readonly (string | undefined)[],
  copyColumnsOf: ReadonlyMap<LoadTarget, readonly string[]>,
): RerunInput[] {
  return inputs.map((input, i) => {
    const t = tables.get(input)!;
    // An upsert applies its files in the order they are named: a resume names them so.
    const place = options.onConflict === 'update' && inputs.length > 1 ? `${i + 1} of ${inputs.length}` : undefined;
    const more = { ...options.writer?.readsBy, 'place among the files': place };
    return { file: input.file === '-' ? '-' : path.resolve(input.file), tableName: t.name, tableOid: t.oid, identity: identities[i], readOptions: readOptionsOf(input, options.onConflict, options.writer?.name === 'delete', copyColumnsOf.get(input), more), target: input };
  });
}

/**
 * `--load-id`, or the default id (from the tables, the files and how they are read). When
 * the default id has no ledger rows, an earlier load of the same files read the same way
 * (begun under an earlier pgsurge's id, or the files grew since) is the one this run goes
 * on with; a file loaded before another way is refused (src/load/load-rerun.ts).
 */
async function chooseLoadId(control: pg.Client, inputs: readonly RerunInput[], options: LoadOptions): Promise<string> {
  if (options.loadId !== undefined) return options.loadId;
  const loadId = defaultLoadId(inputs, options.again === true);
  if (options.ledger === false) return loadId;
  const own = await control.query(`SELECT 1 FROM ${LEDGER_SCHEMA}.load_files WHERE load_id = $1 LIMIT 1`, [loadId]);
  if (own.rowCount! > 0) return loadId;
  return (await earlierLoadToContinue(control, inputs, options.again === true)) ?? loadId;
}

/** Reject files, chosen before the ledger hears of this run: never another load's file, this load's own (a resume rewrites it) or a free one. */
async function claimRejectPaths(inputs: readonly LoadTarget[], options: LoadOptions, loadId: string, withLedger: boolean): Promise<Map<string, string>> {
  const rejectPaths = new Map<string, string>();
  const claimed = new Map<string, string>();
  for (const input of inputs) {
    // Parts on one host must not write one file: each has its own.
    const named = partRejectPath(rejectPathFor(input, options, loadId), options.part);
    let p = claimed.get(named);
    if (p === undefined) claimed.set(named, (p = await claimRejectPath(named, { loadId, withLedger, explicit: options.rejectFile !== undefined })));
    rejectPaths.set(input.file, p);
  }
  return rejectPaths;
}

/** Crash recovery empties an unlogged table but keeps its file: the ledger's rows about it are void, load it all again. Returns the unlogged tables. */
async function resetUnlogged(control: pg.Client, tables: ReadonlyMap<LoadTarget, PreparedTable>, reporter: LoadReporter): Promise<Map<number, string>> {
  const unlogged = new Map<number, string>();
  for (const t of new Set(tables.values())) {
    const lost = await unloggedTableReset(control, t.oid, t.name);
    if (lost > 0) {
      reporter.note?.(`${t.name} is unlogged and is empty, but the ledger says ${lost} rows were loaded into it: crash recovery emptied it (it does that to unlogged tables); loading every row again`);
      await forgetTable(control, t.oid);
    }
    const u = await control.query<{ u: boolean }>("SELECT relpersistence = 'u' AS u FROM pg_class WHERE oid = $1", [t.oid]);
    if (u.rows[0]?.u === true) unlogged.set(t.oid, t.name);
  }
  return unlogged;
}

/** Registers the inputs in the ledger (or finds them from an earlier run): what is covered already, and the ledger the workers write. */
async function openLedger(
  control: pg.Client,
  inputs: readonly LoadTarget[],
  options: LoadOptions,
  load: { checked: CheckedInputs; rerunInputs: readonly RerunInput[]; loadId: string; withLedger: boolean },
): Promise<Pick<LoadPlan, 'ledgerInputs' | 'ledger' | 'coveredOf' | 'appended' | 'completed'>> {
  const { checked, rerunInputs, loadId, withLedger } = load;
  const part = checked.part;
  const ledgerInputs = new Map<string, LedgerInput>();
  inputs.forEach((input, i) => {
    const { target: _, ...entry } = rerunInputs[i]!;
    ledgerInputs.set(input.file, entry);
  });
  // The ledger keys shares by absolute path, as it keys inputs.
  const ledgerPart = part && { label: part.label, shares: new Map([...part.shares].map(([file, r]) => [ledgerInputs.get(file)!.file, r])) };
  // Under the load's lock: files that grew since, and files now read another way (refused if rows of them were committed).
  const rerun = withLedger ? await rerunChanges(control, loadId, rerunInputs) : undefined;
  const covered = withLedger ? await openLoad(control, loadId, [...ledgerInputs.values()], { resume: options.resume === true, ...(ledgerPart ? { part: ledgerPart } : {}), ...(rerun ? { rerun } : {}) }) : new Map<string, Covered>();
  const coveredOf = (input: LoadTarget): Covered => covered.get(ledgerInputs.get(input.file)!.file) ?? NOTHING_COVERED;
  // Completed: every input read to its end by an earlier run, none grown since (a part's run goes on as before).
  const done = inputs.map((input) => coveredOf(input).completedAt);
  const completed = withLedger && !part && done.length > 0 && done.every((at) => at !== undefined) ? { at: new Date(Math.max(...done.map((at) => at!.getTime()))) } : undefined;
  for (const input of inputs) {
    // A JSON array's chunks are cut between elements, not at exact source offsets: no partial resume (a completed load is not resumed).
    if (input.format === 'json' && coveredOf(input).ranges.length > 0 && !completed) {
      throw new LoadError('bad-option', `${input.file}: a JSON array load cannot be resumed part way`, { hint: 'load it again with --truncate (or another --load-id)' });
    }
  }
  const ledger: ChunkLedger = withLedger ? new LedgerWriter(loadId, ledgerInputs, part) : NO_LEDGER;
  const appended = inputs.filter((input) => rerun?.appended.has(ledgerInputs.get(input.file)!.file)).map((input) => input.file);
  return { ledgerInputs, ledger, coveredOf, appended, completed };
}

/** A file's first bytes (decompressed), at least four unless it is shorter. */
async function headOf(input: LoadTarget): Promise<Buffer> {
  const blocks = fileBlocks(input, 64 * 1024);
  let head = Buffer.alloc(0);
  try {
    for await (const block of blocks) {
      head = Buffer.concat([head, block]);
      if (head.length >= 4) break;
    }
  } finally {
    await blocks.return(undefined);
  }
  return head;
}

/** Every input must exist and be readable, in an encoding PostgreSQL reads, before anything is written. */
async function checkInputs(inputs: readonly LoadTarget[]): Promise<(number | undefined)[]> {
  return Promise.all(
    inputs.map(async (input) => {
      if (input.file === '-') return undefined;
      try {
        const st = await fs.stat(input.file);
        if (st.isDirectory()) throw new LoadError('missing-file', `${input.file} is a directory, not a file`, { hint: 'for a folder of .tbl files use `pgsurge dbt3 load <dir>`' });
        await fs.access(input.file, fs.constants.R_OK);
        if (st.isFile() && input.format !== 'parquet') refuseWideEncoding(await headOf(input), input.file);
        return st.isFile() ? st.size : undefined;
      } catch (error) {
        if (error instanceof LoadError) throw error;
        throw cannotRead(input.file, error, 'check the path; nothing was loaded');
      }
    }),
  );
}

export interface PreparedTable {
  readonly oid: number;
  /** Schema-qualified, as the server resolved it. */
  readonly name: string;
}

/**
 * Creates (`--create`) or empties (`--truncate`) the tables and checks each input's first
 * record against its table, all in one transaction: a bad input leaves nothing created or
 * emptied. Emptying a table also empties the ledger's rows about it.
 */
async function prepareTables(
  client: pg.Client,
  inputs: readonly LoadTarget[],
  options: LoadOptions,
): Promise<{ tables: Map<LoadTarget, PreparedTable>; planned: LoadTarget[] }> {
  // --create: one process creates a table, loads started beside it (parts) find it.
  return withTableCreationLocks(client, inputs, options.create, () => prepareTablesLocked(client, inputs, options));
}

async function prepareTablesLocked(
  client: pg.Client,
  inputs: readonly LoadTarget[],
  options: LoadOptions,
): Promise<{ tables: Map<LoadTarget, PreparedTable>; planned: LoadTarget[] }> {
  const out = new Map<LoadTarget, PreparedTable>();
  await client.query('BEGIN');
  try {
    for (const schema of new Set(inputs.map((i) => i.schema))) await requireSchema(client, schema);
    const byName = new Map<string, PreparedTable>();
    for (const input of inputs) {
      const key = `${input.schema ?? ''}.${input.table}`;
      let table = byName.get(key);
      if (!table) {
        await prepareTable(client, input.table, input.schema, { ...options, fromFile: input.described?.createSql });
        const r = await client.query<{ oid: string; name: string }>(
          "SELECT c.oid::int8 AS oid, format('%I.%I', n.nspname, c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass($1)",
          [qualifiedName(input.table, input.schema)],
        );
        const row = r.rows[0];
        if (!row) throw new LoadError('missing-table', `table ${qualifiedName(input.table, input.schema)} does not exist`);
        table = { oid: Number(row.oid), name: row.name };
        byName.set(key, table);
        if (options.truncate) await forgetTable(client, table.oid);
      }
      out.set(input, table);
    }
    // Plans are checked in the same transaction: a wrong column name leaves the tables as they were.
    const columns: TableColumnCache = new Map();
    const planned = await planInputColumns(client, inputs, columns);
    for (const [i, input] of planned.entries()) {
      const table = out.get(inputs[i]!)!;
      await checkColumnCount(client, input, table.name, columns);
    }
    await client.query('COMMIT');
    return { tables: out, planned };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * The same tables, the same files (by identity) read the same way give the same id, so
 * rerunning a command resumes it; stdin has no identity, so a load from it gets a fresh
 * id, and so does `--again` (a new load of files loaded before).
 */
function defaultLoadId(inputs: readonly RerunInput[], again: boolean): string {
  const names = [...new Set(inputs.map((i) => i.tableName))];
  const h = createHash('sha256');
  if (again || inputs.some((i) => i.identity === undefined)) h.update(randomBytes(16));
  // The file's identity (device, inode, content), not its path: the same file named through a symlink or a hard link is the same load.
  const parts = inputs.map((i) => `${i.tableName}\0${i.identity ?? ''}\0${i.readOptions}`).sort();
  h.update(parts.join('\n'));
  const base = inputs[0]?.target.table ?? 'load';
  const label = names.length === 1 ? base : `${base}+${names.length - 1}`;
  return `${label.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 40)}-${h.digest('hex').slice(0, 10)}`;
}

/** One file named twice for one table (two paths, a link) would load its rows twice in one command. */
function refuseSameFileTwice(inputs: readonly LoadTarget[], identities: readonly (string | undefined)[]): void {
  const seen = new Map<string, string>();
  identities.forEach((id, i) => {
    const file = id === undefined ? undefined : fileKeyOf(id);
    if (file === undefined) return;
    const key = `${inputs[i]!.schema ?? ''}\0${inputs[i]!.table}\0${file}`;
    const first = seen.get(key);
    if (first !== undefined) {
      throw new LoadError('bad-option', `${inputs[i]!.file} and ${first} are the same file (a link or the same path twice): it would be loaded twice`, { hint: 'name each file once' });
    }
    seen.set(key, inputs[i]!.file);
  });
}
