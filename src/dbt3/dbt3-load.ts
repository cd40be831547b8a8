import { promises as fs } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import type { LoadTarget } from '../core/chunk.js';
import { dbt3Builds, primaryKeyNotNullStatement, type Dbt3Build, type PhaseTiming } from './build-keys.js';
import { qualifiedName } from '../core/identifiers.js';
import { connectionFailure, isServerError, LoadError } from '../core/load-error.js';
import { connect, type Target } from '../cluster/target.js';
import { planInputColumns } from '../input/plan-input-columns.js';
import { requireSchema } from '../load/table-check.js';
import { createTableSql } from '../datasets/table-ddl.js';
import { DBT3_TABLES, type Dbt3Table } from '../datasets/dbt3-schema.js';
import { distributeDbt3, hasCitus } from '../datasets/dbt3-citus.js';
import { buildsToDo, catalogBuilds } from './build-catalog.js';
import { buildSessionSql, isLocalServer, lastBuildSql, localMachineMemory, readServerBuildSettings, sizeBuildSessions, type BuildSizing } from './build-memory.js';
import { orderTasks, type PlannedTask } from './build-schedule.js';
import { dbt3Tasks } from './dbt3-tasks.js';
import { mergeSummaries } from './merge-summaries.js';
import { runSchedule, type TaskProgress, type TaskRun } from './run-schedule.js';
import { LoadStopped } from '../load/load-stopped.js';
import { load } from '../load/load.js';
import type { LoadOptions } from '../load/load-options.js';
import type { LoadReporter } from '../metrics/load-counters.js';
import type { LoadSummary } from '../metrics/load-counters.js';
import { runWithDurability, unsafeRefused, type DurableTable } from '../writer/durability/durability-session.js';
import { SAFE_DURABILITY, type DurabilityOptions } from '../writer/durability/presets.js';
import { copyWriter } from '../writer/copy-writer.js';
import type { ChunkWriter } from '../writer/chunk-writer.js';

export interface Dbt3LoadOptions extends Omit<LoadOptions, 'create' | 'truncate' | 'loadId'> {
  /** Drop the eight tables (and their keys) and create them bare before loading. */
  readonly replace: boolean;
  /** Build the kit's keys and indexes. */
  readonly keys: boolean;
  readonly analyze: boolean;
  readonly schema?: string;
  /** Durability preset for the loads (with `unsafe` or `--unlogged`, the builds wait until it is undone). */
  readonly durability?: DurabilityOptions;
  /**
   * Each table its own load, its builds as soon as it is loaded (true), or one load of all
   * tables and then the builds (false, the default: measured faster on 2 cores, see docs/dbt3-load.md).
   */
  readonly overlap?: boolean;
  /**
   * Without overlap: each table's builds once it is in, on a worker the load gives back
   * (measured on the shared machine: not faster; see bench/results/dbt3-levers.md), instead of every
   * build after the whole load (the default: the kit's phases, the rows all in soonest).
   */
  readonly buildAsLoaded?: boolean;
  /**
   * Each primary key as its unique index, then ADD PRIMARY KEY USING INDEX, its columns NOT
   * NULL from the start (not on Citus). Off by default: simulated faster, measured slower
   * with more server CPU on the near-quiet machine (bench/results/dbt3-levers.md, third pass).
   */
  readonly twoStepKeys?: boolean;
  /** Every load before any build in the plan's order (default true): builds fill the slots the loads leave free. */
  readonly loadsFirst?: boolean;
  /** The memory all build sessions together may use (default: from the machine or the server's settings). */
  readonly buildMemoryBytes?: number;
}

export interface Dbt3LoadResult {
  readonly summary: LoadSummary;
  /** Per kind of task: from the first start to the last end, and how many ran. */
  readonly phases: readonly PhaseTiming[];
  /** Every table's load and every build, as it ran: the critical path is in it. */
  readonly timeline: readonly TaskRun[];
  /** What the build sessions ran with (undefined: no builds). */
  readonly buildSizing?: BuildSizing;
  /** What a build session's pg_settings said after its SETs: the values the builds really ran with. */
  readonly buildSession?: Readonly<Record<string, string>>;
  /** Builds a resumed load found in place (valid, on the right columns) and left alone. */
  readonly alreadyBuilt: readonly string[];
  /** Invalid indexes found (a build that crashed half way), dropped and built again. */
  readonly rebuilt: readonly string[];
  readonly seconds: number;
}

/** A dbt3 load that stopped: what it loaded and ran until then, and why. */
export class Dbt3LoadStopped extends LoadStopped {
  constructor(
    error: LoadError,
    summary: LoadSummary,
    readonly timeline: readonly TaskRun[],
  ) {
    super(error, summary, undefined);
    this.name = 'Dbt3LoadStopped';
  }
}

/** `region.tbl`, `lineitem.tbl`, `lineitem.tbl.1` … (each may be gzipped: `.tbl.gz`, `.tbl.1.gz`), or `<table>.parquet` (and parts), in a folder, by table. */
export async function findDbt3Files(dir: string): Promise<Map<Dbt3Table, string[]>> {
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch (error) {
    throw new LoadError('missing-file', `cannot read the folder ${dir}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such folder' : (error as Error).message}`);
  }
  const found = new Map<Dbt3Table, string[]>();
  for (const table of DBT3_TABLES) {
    // `.tbl` parts (gzipped or not), or Parquet: `lineitem.parquet`, or parts `lineitem.1.parquet` / `lineitem.parquet.1`.
    const re = new RegExp(`^${table}(\\.tbl(\\.\\d+)?(\\.gz)?|(\\.\\d+)?\\.parquet|\\.parquet\\.\\d+)$`);
    const files = names.filter((n) => re.test(n)).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
    // The same part plain and gzipped would load its rows twice.
    const parts = new Map<string, string>();
    for (const f of files) {
      const part = f.replace(/\.gz$/, '');
      const other = parts.get(part);
      if (other !== undefined) {
        throw new LoadError('bad-option', `${dir} holds both ${other} and ${f}: loading both would load ${part}'s rows twice`, { hint: 'keep one of them in the folder' });
      }
      parts.set(part, f);
    }
    if (files.some((f) => f.includes('.parquet')) && files.some((f) => f.includes('.tbl'))) {
      throw new LoadError('bad-option', `${dir} holds ${table} both as .tbl and as Parquet: loading both would load its rows twice`, { hint: 'keep one of them in the folder' });
    }
    if (files.length > 0) found.set(table, files.map((f) => path.join(dir, f)));
  }
  return found;
}

/** A table's files as load inputs: `.tbl` (and parts) or Parquet, by name. */
function dbt3Inputs(files: ReadonlyMap<Dbt3Table, readonly string[]>, table: string, schema: string | undefined): LoadTarget[] {
  return (files.get(table as Dbt3Table) ?? []).map((file) => ({ file, table, schema, format: file.includes('.parquet') ? ('parquet' as const) : ('tbl' as const) }));
}

/**
 * The DBT-3 kit's load test as one schedule: create the tables bare; then "load table X"
 * and "build Y" tasks on one budget of worker slots, each table's keys and indexes as
 * soon as it is loaded, a foreign key once both sides are there, ANALYZE last per table;
 * every task's start and end on the timeline. A resumed load loads the rest (the ledger)
 * and builds only what the catalog lacks.
 */
export async function loadDbt3(dir: string, options: Dbt3LoadOptions, target: Target, reporter: LoadReporter = {}): Promise<Dbt3LoadResult> {
  const files = await findDbt3Files(dir);
  if (files.size === 0) {
    throw new LoadError('missing-file', `no DBT-3 .tbl files (nor <table>.parquet) in ${dir}`, { hint: 'expected region.tbl … lineitem.tbl (or split files such as lineitem.tbl.1, gzipped or not); make them with `pgsurge dbt3 gen`' });
  }
  if (options.keys && files.size < DBT3_TABLES.length) {
    throw new LoadError('missing-file', `keys need all eight DBT-3 tables; ${dir} has only ${[...files.keys()].join(', ')}`, { hint: 'add --no-keys to load without them' });
  }
  if (options.replace && options.resume) throw new LoadError('bad-option', '--replace and --resume cannot go together: --replace drops what --resume would finish');
  const durability = options.durability ?? SAFE_DURABILITY;
  if (durability.preset === 'unsafe' && target.managed === undefined) throw unsafeRefused(target);
  const started = performance.now();
  const now = (): number => (performance.now() - started) / 1000;

  // The control connection holds this schema's dbt3 lock for the whole load: two dbt3 loads into one schema at once would fight over its tables.
  const control = await connect(target.config).catch((e: unknown) => {
    throw connectionFailure(e, target.description);
  });
  const sessionPrefix = buildSessionPrefix(options.schema);
  const { prepared, todo, sizing } = await prepareDbt3Load(control, files, options, target, sessionPrefix).catch(async (error: unknown) => {
    await control.end().catch(() => undefined);
    throw error;
  });
  const createSeconds = now();
  const sessions = new BuildSessions(target, sizing, sessionPrefix);
  try {
    return await scheduleAndRun({ files, options, target, reporter, durability, now, prepared, todo, sizing, sessions, createSeconds });
  } finally {
    await sessions.close();
    // Ending the session releases the schema's lock.
    await control.end().catch(() => undefined);
  }
}

/** What a dbt3 load found and decided on its control connection, before any row moves. */
interface Dbt3Prepared {
  readonly prepared: Awaited<ReturnType<typeof prepareTables>>;
  readonly todo: { builds: Dbt3Build[]; alreadyBuilt: string[]; rebuilt: string[] };
  readonly sizing: BuildSizing | undefined;
}

/** On the control connection: the schema's dbt3 lock, orphan build sessions ended, the tables prepared, every input checked, the builds still to do and their sessions' sizes. */
async function prepareDbt3Load(control: pg.Client, files: ReadonlyMap<Dbt3Table, readonly string[]>, options: Dbt3LoadOptions, target: Target, sessionPrefix: string): Promise<Dbt3Prepared> {
  await requireSchema(control, options.schema);
  const schemaName = options.schema ?? ((await control.query<{ s: string }>('SELECT current_schema() AS s')).rows[0]?.s ?? 'public');
  const locked = (await control.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtext('pgsurge dbt3'), hashtext($1)) AS ok", [schemaName])).rows[0]?.ok === true;
  if (!locked) throw new LoadError('bad-option', `a dbt3 load into schema ${schemaName} is running in another pgsurge right now`, { hint: 'wait for it to end, or load into another --schema' });
  // Build sessions of a killed earlier run may still be running their statement (a backend notices its client gone only when it writes): end them first.
  await endOrphanSessions(control, sessionPrefix);
  const prepared = await prepareTables(control, files, options);
  // Every Parquet file's fields against its table now, before any table loads: one file
  // that does not match stops the whole load with nothing loaded (exit 2), not after the
  // tables scheduled before it have loaded.
  await planInputColumns(control, [...files.keys()].flatMap((table) => dbt3Inputs(files, table, options.schema)));
  const todo = options.keys ? await buildsStillToDo(control, options.schema) : { builds: [], alreadyBuilt: [], rebuilt: [] };
  let sizing: BuildSizing | undefined;
  if (todo.builds.length > 0 || options.analyze) {
    sizing = sizeBuildSessions({
      server: await readServerBuildSettings(control),
      machine: isLocalServer(target) ? await localMachineMemory() : {},
      buildsAtOnce: options.workers,
      buildMemoryBytes: options.buildMemoryBytes,
    });
  }
  return { prepared, todo, sizing };
}

/** A dbt3 load's schedule run, with what it was prepared with. */
interface Dbt3Run extends Dbt3Prepared {
  readonly files: ReadonlyMap<Dbt3Table, readonly string[]>;
  readonly options: Dbt3LoadOptions;
  readonly target: Target;
  readonly reporter: LoadReporter;
  readonly durability: DurabilityOptions;
  /** Seconds since the load began. */
  now(): number;
  readonly sessions: BuildSessions;
  readonly createSeconds: number;
}

/** The loads and builds as one schedule, under the durability preset; the result with its timeline and phases. */
async function scheduleAndRun(run: Dbt3Run): Promise<Dbt3LoadResult> {
  const { files, options, target, reporter, durability, now, prepared, todo, sizing, sessions, createSeconds } = run;
  const sizes = new Map<Dbt3Table, number>();
  for (const [table, paths] of files) sizes.set(table, (await Promise.all(paths.map((p) => fs.stat(p).then((s) => s.size)))).reduce((a, b) => a + b, 0));
  // With the tables unlogged (or fsync off) until the load ends, an index built before SET LOGGED would be rebuilt by it: build after.
  const overlapSafe = durability.preset !== 'unsafe' && !durability.unlogged;
  const overlap = (options.overlap ?? false) && overlapSafe;
  const plan = orderTasks(
    dbt3Tasks(
      [...sizes].map(([table, bytes]) => ({ table, bytes })),
      todo.builds,
      {
        budget: options.workers,
        chunkBytes: options.chunkBytes,
        overlap,
        buildAsLoaded: options.buildAsLoaded === true,
        analyze: options.analyze,
        schema: options.schema,
        primaryKeyInTwoSteps: options.twoStepKeys === true && !prepared.citus,
      },
    ),
    options.workers,
    { loadsFirst: options.loadsFirst ?? true },
  );
  const loads = plan.filter((t) => t.kind === 'load');
  const builds = plan.filter((t) => t.kind !== 'load');

  const inputsOf = (table: string): LoadTarget[] => dbt3Inputs(files, table, options.schema);
  const allInputs = [...files.keys()].flatMap(inputsOf);
  const totalBytes = [...sizes.values()].reduce((a, b) => a + b, 0);
  const summaries: LoadSummary[] = [];
  const timeline: TaskRun[] = [];
  // The watcher (progress line, sampler) sees one load of all eight tables, not eight starts.
  await reporter.start?.({ inputs: allInputs, totalBytes, workers: options.workers, target: target.description, loadId: 'dbt3', resumed: options.resume === true });
  // Each table's first chunk start and last chunk end, for the timeline of a load of several tables.
  const spans = new Map<string, { start: number; end: number }>();
  const perTable: LoadReporter = {
    // Each load's workers have names of their own (its load id): the watcher's wait sampler looks at them all.
    start: (info) => {
      if (info.workerPrefix !== undefined) reporter.workersNamed?.(info.workerPrefix);
    },
    chunkLoaded(info) {
      const end = now();
      const span = spans.get(info.chunk.target.table) ?? { start: end - info.seconds, end };
      spans.set(info.chunk.target.table, { start: Math.min(span.start, end - info.seconds), end: Math.max(span.end, end) });
      reporter.chunkLoaded?.(info);
    },
    note: (m) => reporter.note?.(m),
    warning: (m) => reporter.warning?.(m),
    retrying: (i) => reporter.retrying?.(i),
  };

  const runTask = (writer: ChunkWriter) => async (task: PlannedTask, slots: number, signal: AbortSignal, progress: TaskProgress, last: boolean): Promise<{ statement: string; parallelWorkers?: number }> => {
    if (task.kind === 'load') {
      const tables = task.tables ?? [task.table];
      const inputs = tables.flatMap((t) => inputsOf(t));
      // A load of several tables: each table in is its milestone (its builds may start), and the schedule may take workers back for them.
      const grouped = (task.milestones?.length ?? 0) > 0;
      const summary = await load(
        inputs,
        // A table holding rows must have an earlier run of this load to resume (else its rows would be loaded twice).
        {
          ...options,
          workers: slots,
          create: false,
          truncate: false,
          writer,
          resume: tables.some((t) => prepared.resuming.has(t as Dbt3Table)),
          signal,
          ...(grouped ? { shrink: { take: progress.takeBack, released: progress.gaveBack } } : {}),
        },
        target,
        grouped ? { ...perTable, tableLoaded: (table) => progress.reached(`load ${table}`) } : perTable,
      );
      summaries.push(summary);
      return { statement: `COPY ${tables.map((t) => qualifiedName(t, options.schema)).join(', ')} FROM STDIN: ${inputs.length} file(s), ${slots} worker(s)` };
    }
    const parallelWorkers = await sessions.run(task, signal, last);
    return { statement: task.statement!, ...(parallelWorkers === undefined ? {} : { parallelWorkers }) };
  };

  const stopped = (error: unknown): never => {
    const cause = error instanceof LoadStopped ? error : error instanceof LoadError ? error : new LoadError('internal', (error as Error).message ?? String(error), { cause: error });
    const summary = mergeSummaries(error instanceof LoadStopped ? [...summaries, error.summary] : summaries, options.workers, target.description, loadSpan(timeline));
    splitGroupLoads(timeline, plan, spans, (t) => `COPY ${qualifiedName(t, options.schema)} FROM STDIN: ${inputsOf(t).length} file(s)`);
    throw new Dbt3LoadStopped(cause, summary, [...timeline].sort((a, b) => a.start - b.start));
  };

  // Builds beside the loads (each table's as soon as it is in), unless the durability preset makes them wait until it is undone.
  const rest = overlapSafe && (overlap || options.buildAsLoaded === true) ? [] : builds;
  if (builds.length > 0) sessions.warm(Math.min(options.workers, builds.length));
  const durable = await runWithDurability(target, durability, prepared.durable, { writer: options.writer ?? copyWriter, workers: options.workers }, async (writer) => {
    const outcome = await runSchedule(rest.length === 0 ? plan : loads, options.workers, { run: runTask(writer), now, signal: options.signal });
    timeline.push(...outcome.runs);
    if (outcome.error !== undefined) throw outcome.error;
    return mergeSummaries(summaries, options.workers, target.description, loadSpan(outcome.runs));
  }).catch(stopped);
  if (rest.length > 0) {
    const outcome = await runSchedule(plan, options.workers, { run: runTask(options.writer ?? copyWriter), now, signal: options.signal, done: new Set(loads.flatMap((l) => [l.id, ...(l.milestones ?? []).map((m) => m.id)])) });
    timeline.push(...outcome.runs);
    if (outcome.error !== undefined) stopped(outcome.error);
  }
  splitGroupLoads(timeline, plan, spans, (t) => `COPY ${qualifiedName(t, options.schema)} FROM STDIN: ${inputsOf(t).length} file(s)`);
  timeline.sort((a, b) => a.start - b.start);
  const summary: LoadSummary = { ...durable.result, durability: durable.durability };
  const phases: PhaseTiming[] = [{ phase: 'create tables', seconds: createSeconds, statements: files.size }, ...phasesOf(timeline)];
  // SET LOGGED, the restarts of --durability unsafe: part of what the load cost.
  for (const step of durable.durability.steps) phases.push({ phase: step.step, seconds: step.seconds, statements: 1 });
  return {
    summary,
    phases,
    timeline,
    ...(sizing ? { buildSizing: sizing } : {}),
    ...(sessions.settings ? { buildSession: sessions.settings } : {}),
    alreadyBuilt: todo.alreadyBuilt,
    rebuilt: todo.rebuilt,
    seconds: now(),
  };
}

/** A load of several tables shows on the timeline as one bar per table, from its first chunk to its last. */
function splitGroupLoads(timeline: TaskRun[], plan: readonly PlannedTask[], spans: ReadonlyMap<string, { start: number; end: number }>, statement: (table: string) => string): void {
  for (const task of plan.filter((t) => t.kind === 'load' && t.tables !== undefined)) {
    const at = timeline.findIndex((r) => r.id === task.id);
    if (at < 0) continue;
    const group = timeline[at]!;
    const bars = task.tables!.map((table): TaskRun => {
      const span = spans.get(table) ?? { start: group.start, end: group.start };
      // The workers the load had when the table's first chunk started (it gives slots back to builds as tables are in).
      const slots = [...(group.resized ?? [])].reverse().find((r) => r.at <= span.start)?.slots ?? group.slots;
      // A slot given back while the table was loading: on its bar (it loaded on fewer workers from then on).
      const resized = (group.resized ?? []).filter((r) => span.start <= r.at && r.at < span.end);
      return { id: `load ${table}`, kind: 'load', table, statement: statement(table), slots, start: span.start, end: span.end, ...(resized.length > 0 ? { resized } : {}) };
    });
    timeline.splice(at, 1, ...bars);
  }
}

/** From the first table's load start to the last one's end. */
function loadSpan(runs: readonly TaskRun[]): number | undefined {
  const loads = runs.filter((r) => r.kind === 'load');
  return loads.length === 0 ? undefined : Math.max(...loads.map((r) => r.end)) - Math.min(...loads.map((r) => r.start));
}

/** Phases as a user of the kit knows them, from the timeline: each kind's first start to its last end. */
export function phasesOf(timeline: readonly TaskRun[]): PhaseTiming[] {
  const names: [TaskRun['kind'], string][] = [
    ['load', 'load'],
    ['primary key', 'primary keys'],
    ['index', 'indexes'],
    ['foreign key', 'foreign keys'],
    ['analyze', 'analyze'],
  ];
  return names.flatMap(([kind, phase]) => {
    const runs = timeline.filter((r) => r.kind === kind);
    if (runs.length === 0) return [];
    return [{ phase, seconds: Math.max(...runs.map((r) => r.end)) - Math.min(...runs.map((r) => r.start)), statements: runs.length }];
  });
}

/**
 * Creates what is missing, replaces with --replace, and checks what a resume finds: a
 * table holding rows is refused unless this is a resume (then the ledger says which of
 * its rows are in, and load() refuses a table no earlier run loaded).
 */
async function prepareTables(client: pg.Client, files: ReadonlyMap<Dbt3Table, readonly string[]>, options: Dbt3LoadOptions): Promise<{ durable: DurableTable[]; resuming: Set<Dbt3Table>; citus: boolean }> {
  const durable: DurableTable[] = [];
  const resuming = new Set<Dbt3Table>();
  for (const table of files.keys()) {
    const name = qualifiedName(table, options.schema);
    const exists = (await client.query('SELECT to_regclass($1) IS NOT NULL AS e', [name])).rows[0]?.e === true;
    if (exists && !options.replace) {
      const nonEmpty = (await client.query(`SELECT EXISTS (SELECT 1 FROM ${name}) AS e`)).rows[0]?.e === true;
      if (nonEmpty && !options.resume) throw new LoadError('bad-option', `table ${name} already holds rows`, { hint: 'add --resume to finish a stopped dbt3 load, or --replace to drop and recreate the DBT-3 tables' });
      if (nonEmpty) resuming.add(table);
      durable.push({ table, schema: options.schema, emptiedByLoad: false });
      continue;
    }
    if (exists) await client.query(`DROP TABLE ${name} CASCADE`);
    await client.query(createTableSql(table, options.schema)!);
    durable.push({ table, schema: options.schema, emptiedByLoad: true });
  }
  // On Citus: the tables created here distributed as docs/citus.md says (src/datasets/dbt3-citus.ts).
  const created = durable.filter((t) => t.emptiedByLoad).map((t) => t.table as Dbt3Table);
  const citus = await hasCitus(client);
  if (created.length > 0 && citus) await distributeDbt3(client, created, options.schema);
  // The keys' columns NOT NULL while the tables are empty (no scan): each key's constraint is then added on its unique index without one (src/dbt3/build-keys.ts).
  if (options.keys && options.twoStepKeys === true && !citus) for (const table of created) await client.query(primaryKeyNotNullStatement(table, options.schema));
  return { durable, resuming, citus };
}

/** The kit's builds the catalog lacks; invalid indexes are dropped here, to be built again. */
async function buildsStillToDo(client: pg.Client, schema: string | undefined): Promise<{ builds: Dbt3Build[]; alreadyBuilt: string[]; rebuilt: string[] }> {
  const all = dbt3Builds(schema);
  const found = buildsToDo(all, await catalogBuilds(client, DBT3_TABLES, schema), schema);
  for (const drop of found.drops) await client.query(drop);
  return { builds: [...found.missing], alreadyBuilt: found.present.map((b) => b.id), rebuilt: found.drops.map((d) => d.replace(/^DROP INDEX /, '')) };
}

/** `pgsurge dbt3 <schema> b<n>` in pg_stat_activity (application_name holds 63 bytes). */
function buildSessionPrefix(schema: string | undefined): string {
  return `pgsurge dbt3 ${schema ?? ''}`.slice(0, 56) + ' b';
}

async function endOrphanSessions(client: pg.Client, prefix: string): Promise<void> {
  const others = "FROM pg_stat_activity WHERE left(application_name, length($1)) = $1 AND pid <> pg_backend_pid()";
  await client.query(`SELECT pg_terminate_backend(pid) ${others}`, [prefix]);
  for (let waited = 0; ((await client.query<{ n: number }>(`SELECT count(*)::int AS n ${others}`, [prefix])).rows[0]?.n ?? 0) > 0; waited += 100) {
    if (waited >= 15_000) throw new LoadError('bad-option', 'build sessions of an earlier dbt3 load are still open on the server and would not end', { hint: 'end them (pg_terminate_backend)' });
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The build sessions: one connection per slot, each set up once with the sized
 * maintenance_work_mem, work_mem and parallel workers. A stopped schedule cancels the
 * statements still running (pg_cancel_backend) rather than waiting for them.
 */
class BuildSessions {
  private readonly idle: pg.Client[] = [];
  private readonly open: pg.Client[] = [];
  /** The first session's settings as the server reports them after the SETs. */
  settings: Record<string, string> | undefined;
  private warming: Promise<void> = Promise.resolve();
  private opened = 0;

  constructor(
    private readonly target: Target,
    private readonly sizing: BuildSizing | undefined,
    private readonly namePrefix: string,
  ) {}

  /**
   * Runs a build's statement; `last` (nothing left to start after it): a sort then runs
   * with the parallel workers of `BuildSizing.lastBuild`, and says how many it was given.
   */
  async run(task: PlannedTask, signal: AbortSignal, last: boolean): Promise<number | undefined> {
    if (signal.aborted) throw new LoadError('interrupted', `${task.id}: not started, the load was stopped`);
    await this.warming;
    const client = this.idle.pop() ?? (await this.connect());
    const cancel = (): void => void this.cancel(client);
    signal.addEventListener('abort', cancel, { once: true });
    const parallel = last && isSort(task) && this.sizing ? lastBuildSql(this.sizing) : undefined;
    let reusable = true;
    try {
      if (parallel) await client.query(parallel.before);
      await client.query(task.statement!);
      if (parallel) await client.query(parallel.after);
      return parallel ? this.sizing!.lastBuild!.maxParallelMaintenanceWorkers : undefined;
    } catch (error) {
      // A session left with the last sort's workers is not handed to another build.
      reusable = parallel === undefined;
      throw buildFailure(task, error, signal.aborted);
    } finally {
      signal.removeEventListener('abort', cancel);
      if (reusable) this.idle.push(client);
    }
  }

  /**
   * Opens and sets up `n` sessions now, while the tables load, so the first builds start
   * the moment the load ends. A failure here is not reported: the build that needs the
   * session connects again and says what went wrong.
   */
  warm(n: number): void {
    this.warming = Promise.allSettled(Array.from({ length: n }, () => this.connect().then((c) => void this.idle.push(c)))).then(() => undefined);
  }

  async close(): Promise<void> {
    await this.warming;
    await Promise.allSettled(this.open.map((c) => c.end()));
  }

  private async connect(): Promise<pg.Client> {
    const client = await connect(this.target.config, `${this.namePrefix}${++this.opened}`).catch((e: unknown) => {
      throw connectionFailure(e, this.target.description);
    });
    this.open.push(client);
    for (const sql of this.sizing ? buildSessionSql(this.sizing) : []) await client.query(sql);
    if (this.settings === undefined) {
      const r = await client.query<{ name: string; value: string }>(
        "SELECT name, current_setting(name) AS value FROM pg_settings WHERE name IN ('maintenance_work_mem', 'work_mem', 'max_parallel_maintenance_workers') ORDER BY name",
      );
      this.settings = Object.fromEntries(r.rows.map((row) => [row.name, row.value]));
    }
    return client;
  }

  private async cancel(client: pg.Client): Promise<void> {
    const pid = (client as unknown as { processID?: number }).processID;
    if (pid === undefined) return;
    const other = await connect(this.target.config).catch(() => undefined);
    if (!other) return;
    try {
      await other.query('SELECT pg_cancel_backend($1)', [pid]);
    } finally {
      await other.end().catch(() => undefined);
    }
  }
}

/** A build that sorts: CREATE INDEX, a primary key's (not the constraint put on its built index, nor a foreign key's check or ANALYZE). */
function isSort(task: PlannedTask): boolean {
  return task.kind === 'index' || (task.kind === 'primary key' && task.instant !== true);
}

/** A build that failed names the table, the key and what the server said (the offending key in its DETAIL). */
export function buildFailure(task: PlannedTask, error: unknown, stopped: boolean): LoadError {
  if (stopped) return new LoadError('interrupted', `${task.id} on ${task.table}: stopped`, { cause: error });
  if (!isServerError(error)) return new LoadError('server-lost', `${task.id} on ${task.table} failed: ${(error as Error).message}`, { cause: error });
  const what =
    error.code === '23505'
      ? 'the data holds a duplicate key'
      : error.code === '23503'
        ? 'a row references a key that is not there'
        : error.code === '23502'
          ? 'a key column holds a NULL'
          : `the server refused it (SQLSTATE ${error.code})`;
  return new LoadError('server-error', `${task.id} on ${task.table} failed: ${what}: ${error.message}`, {
    server: { code: error.code, detail: error.detail, hint: error.hint, table: error.table, constraint: error.constraint },
    hint: `the rows stay loaded; fix or delete the offending rows${error.detail ? ' (see detail)' : ''}, then rerun with --resume to build what is missing`,
    cause: error,
  });
}
