import type { ShardCopy } from '../writer/citus/routed-chunk.js';
import { createHash, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import type { Readable } from 'node:stream';
import { inputBytesOf, type Chunk, type LoadTarget } from '../core/chunk.js';
import { ChunkQueue, type ChunkSource } from '../input/chunk-queue.js';
import { TableProgress } from '../input/table-progress.js';
import { checkColumnCount } from '../input/column-check.js';
import { qualifiedName } from '../core/identifiers.js';
import { connect, type Target } from '../cluster/target.js';
import { connectionFailure, copyColumnFromWhere, copyLineFromWhere, isServerError, LoadError } from '../core/load-error.js';
import { planInputColumns } from '../input/plan-input-columns.js';
import { asServerKeeps } from '../core/old-backend.js';
import { prepareTable, withTableCreationLocks, requireSchema } from './table-check.js';
import { preflight } from './preflight.js';
import { beforeInsertRowTriggers } from '../core/row-triggers.js';
import { brokenChunk } from '../writer/count-guard.js';
import { LoadStopped } from './load-stopped.js';
import { DEFAULT_RETRY_FOR_MS, serverTrouble, withTimeout } from '../core/retry.js';
import { fileIdentity, fileKeyOf, identityString } from '../writer/ledger/file-identity.js';
import { earlierLoadOf, ensureLedger, forgetTable, ledgerTotals, unloggedTableReset, LedgerWriter, NO_LEDGER, NOTHING_COVERED, openLoad, otherLoadsOfFile, type ChunkLedger, type Covered, type LedgerInput, type RejectedRow } from '../writer/ledger/ledger.js';
import { LoadWorker } from './load-worker.js';
import { sharedFlusher } from '../writer/wal-flusher.js';
import { partLabel, type LoadPart } from '../input/load-part.js';
import { checkPartOptions, lockLoad, partRejectPath, partShares } from './part-load.js';
import { LoadCounters, type LoadReporter, type LoadSummary } from '../metrics/load-counters.js';
import { DEFAULT_MAX_REJECTS, RejectBudget } from '../writer/rejects/reject-budget.js';
import { claimRejectPath, RejectFile, rejectPathFor } from '../writer/rejects/reject-file.js';
import { LineIndex } from '../input/line-index.js';
import { lineByte } from '../input/text/line-ends.js';
import { openInput, type ParquetSettings } from '../input/open-input.js';
import { ChunkBuffers } from '../input/chunk-buffers.js';
import type { ChunkResult, ChunkWriter } from '../writer/chunk-writer.js';
import { copyWriter } from '../writer/copy-writer.js';
import { citusLoad, type CitusSettings } from '../writer/citus/citus-load.js';
import type { CitusFaults } from '../writer/citus/citus-faults.js';
import { planRouting, type CitusRoute, type RoutingPlan } from '../writer/citus/plan-routing.js';
import type { TableWire } from '../wire/wire-report.js';
import { formatCount } from '../core/format-count.js';

export interface LoadOptions {
  readonly workers: number;
  readonly chunkBytes: number;
  readonly create: boolean;
  readonly truncate: boolean;
  readonly stdin?: Readable;
  /** How a chunk reaches the server; COPY unless told otherwise. */
  readonly writer?: ChunkWriter;
  /** Citus: whether pgsurge routes a hash-distributed table's rows to its shards' nodes itself (`--citus-route`; default auto). */
  readonly citusRoute?: CitusRoute;
  /** How rows routed to a Citus shard are sent (`COPY … FROM STDIN`); handed in by tests only (fault injection). */
  readonly shardCopy?: ShardCopy;
  /** The ledger's id for this load; default: derived from the tables and the files' identities, so rerunning the same command resumes. */
  readonly loadId?: string;
  /** Require an earlier run of this load to resume. */
  readonly resume?: boolean;
  /** Keep the ledger (default). Without it rejects still work, but nothing can be resumed and exactly-once is lost. */
  readonly ledger?: boolean;
  /** Rows a load may reject in all before it stops (default 1000). */
  readonly maxRejects?: number;
  readonly rejectFile?: string;
  readonly rejectDir?: string;
  /** How long to keep retrying a chunk whose connection or server went away (default 30 s). */
  readonly retryForMs?: number;
  /** Aborting stops the load: no more reading, in-flight chunks rolled back. */
  readonly signal?: AbortSignal;
  /** `--part K/N`: load only the K-th of N shares of every input, under the load id all N parts share. */
  readonly part?: LoadPart;
  /**
   * Lets the caller take workers back while the load runs (`dbt3 load` gives their slots to
   * key builds once a table is in): each worker asks `take()` before its next chunk and, on
   * true, ends once its chunks are counted, then `released()` is called. The last worker never leaves.
   */
  readonly shrink?: { take(): boolean; released(): void };
  /**
   * false: commits that did not wait for their WAL flush are left to the walwriter, without the
   * load's own flusher (for measuring; a crash test's window). Default true.
   */
  readonly walFlusher?: boolean;
  /** Citus: the session settings of the load's connections (default: pgsurge's, `CITUS_SESSION_SETTINGS`). */
  readonly citusSettings?: CitusSettings;
  /** How Parquet inputs are decoded (for measuring); default: the rule, with the WebAssembly kernels. */
  readonly parquet?: ParquetSettings;
  /** Faults a test makes in a routed Citus load; handed in by tests only. */
  readonly faults?: CitusFaults;
}


/**
 * The whole flow, top to bottom: check the inputs and tables, open the ledger, open the
 * readers on what it does not cover, start the workers on a bounded queue, wait, first
 * error wins, summary.
 */
export async function load(inputs: readonly LoadTarget[], options: LoadOptions, target: Target, reporter: LoadReporter = {}): Promise<LoadSummary> {
  checkLedgerOptions(options);
  const withLedger = options.ledger !== false;
  const sizes = await checkInputs(inputs);
  if (options.part) checkPartOptions(inputs, options);
  const shares = options.part ? await partShares(inputs, sizes, options.part) : undefined;
  const part = options.part && shares ? { label: partLabel(options.part), shares } : undefined;
  const identities = await Promise.all(inputs.map((i, n) => (i.file === '-' || sizes[n] === undefined ? undefined : fileIdentity(i.file).then(identityString))));
  refuseSameFileTwice(inputs, identities);

  // The control connection holds the load's lock for the whole load: two runs of one load id at once would double rows.
  const control = await connect(target.config).catch((error: unknown) => {
    throw connectionFailure(error, target.description);
  });
  // Citus: lets shard moves go on again, however the load ends (src/writer/citus/shard-move-guard.ts).
  let releaseShards = async (): Promise<void> => undefined;
  try {
    await preflight(control, inputs, options);
    if (withLedger) await ensureLedger(control);
    // With each table ready, its columns are read once: what each input's records fill (the column plan).
    const { tables, planned } = await prepareTables(control, inputs, options);
    // The count guard's one allowance: a table whose BEFORE INSERT row triggers may keep rows out (by returning NULL).
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
    let loadId = options.loadId ?? defaultLoadId(inputs, tables, identities);
    if (withLedger && options.loadId === undefined) {
      // A load begun under another default id (by an earlier pgsurge, whose ids came from
      // the path) is the same load: resumed, not begun again.
      const files = inputs.map((input, i) => ({ file: path.resolve(input.file), tableOid: tables.get(input)!.oid, identity: identities[i] }));
      loadId = (await earlierLoadOf(control, loadId, files)) ?? loadId;
    }
    // Citus: asked once per load; its tables get session settings and the summary names the cluster.
    const citus = await citusLoad(control, [...new Set([...tables.values()].map((t) => t.oid))], { writer: options.writer ?? copyWriter, ledger: withLedger, settings: options.citusSettings });
    const where = citus ? `${target.description} (${citus.description})` : target.description;
    if (withLedger) {
      await lockLoad(control, loadId, part?.label);
      await waitForEarlierRun(control, workerNamePrefix(loadId, part?.label));
    }
    // Reject files, chosen before the ledger hears of this run: never another load's file, this load's own (a resume rewrites it) or a free one.
    const rejectPaths = new Map<string, string>();
    const claimed = new Map<string, string>();
    for (const input of inputs) {
      // Parts on one host must not write one file: each has its own.
      const named = partRejectPath(rejectPathFor(input, options, loadId), options.part);
      let p = claimed.get(named);
      if (p === undefined) claimed.set(named, (p = await claimRejectPath(named, { loadId, withLedger, explicit: options.rejectFile !== undefined })));
      rejectPaths.set(input.file, p);
    }
    // Crash recovery empties an unlogged table but keeps its file: the ledger's rows about it are void, load it all again.
    const unlogged = new Map<number, string>();
    if (withLedger) {
      for (const t of new Set(tables.values())) {
        const lost = await unloggedTableReset(control, t.oid, t.name);
        if (lost > 0) {
          reporter.note?.(`${t.name} is unlogged and is empty, but the ledger says ${lost} rows were loaded into it: crash recovery emptied it (it does that to unlogged tables); loading every row again`);
          await forgetTable(control, t.oid);
        }
        const u = await control.query<{ u: boolean }>("SELECT relpersistence = 'u' AS u FROM pg_class WHERE oid = $1", [t.oid]);
        if (u.rows[0]?.u === true) unlogged.set(t.oid, t.name);
      }
    }
    const serverStart = withLedger ? (await control.query<{ t: string }>('SELECT pg_postmaster_start_time()::text AS t')).rows[0]!.t : '';
    const ledgerInputs = new Map<string, LedgerInput>();
    inputs.forEach((input, i) => {
      const t = tables.get(input)!;
      ledgerInputs.set(input.file, { file: input.file === '-' ? '-' : path.resolve(input.file), tableName: t.name, tableOid: t.oid, identity: identities[i] });
    });
    // The ledger keys shares by absolute path, as it keys inputs.
    const ledgerPart = part && { label: part.label, shares: new Map([...part.shares].map(([file, r]) => [ledgerInputs.get(file)!.file, r])) };
    const covered = withLedger ? await openLoad(control, loadId, [...ledgerInputs.values()], { resume: options.resume === true, ...(ledgerPart ? { part: ledgerPart } : {}) }) : new Map<string, Covered>();
    const coveredOf = (input: LoadTarget): Covered => covered.get(ledgerInputs.get(input.file)!.file) ?? NOTHING_COVERED;
    for (const input of inputs) {
      // A JSON array's chunks are cut between elements, not at exact source offsets: no partial resume.
      if (input.format === 'json' && coveredOf(input).ranges.length > 0) {
        throw new LoadError('bad-option', `${input.file}: a JSON array load cannot be resumed part way`, { hint: 'load it again with --truncate (or another --load-id)' });
      }
    }
    const ledger: ChunkLedger = withLedger ? new LedgerWriter(loadId, ledgerInputs, part) : NO_LEDGER;
    if (withLedger && !options.truncate) {
      for (const input of ledgerInputs.values()) {
        if (input.file === '-' || (covered.get(input.file)?.ranges.length ?? 0) > 0) continue;
        const others = await otherLoadsOfFile(control, loadId, input);
        if (others.length > 0) {
          reporter.warning?.(`${input.file} was loaded into ${input.tableName} before (load ${others.join(', ')}) when it was a different file (size, mtime or content); this is a new load of all its rows, beside the rows already there (--truncate replaces the table's rows instead)`);
        }
      }
    }

    // Reject files: rebuilt from the ledger, so a crash between a chunk's COMMIT and the file write loses nothing.
    const rejectFiles = new Map<string, RejectFile>();
    const rejectFileOf = new Map<string, RejectFile>();
    for (const input of inputs) {
      const p = rejectPaths.get(input.file)!;
      if (!rejectFiles.has(p)) rejectFiles.set(p, new RejectFile(p, loadId));
      rejectFileOf.set(input.file, rejectFiles.get(p)!);
    }
    const earlierRejects = await writeRejectFiles(control, ledger, inputs, rejectFiles, rejectFileOf);

    // Biggest input first, so the long pole starts early and the small ones fill in.
    const order = planned.map((input, i) => ({ input, size: sizes[i] })).sort((a, b) => (b.size ?? Infinity) - (a.size ?? Infinity));
    const sources: ChunkSource[] = [];
    const progress = new TableProgress((table) => reporter.tableLoaded?.(table));
    // Every reader lends and borrows the same chunk buffers: at most (3 × workers + 1) chunks are alive at once
    // (read ahead, in flight, held until their commit is flushed, being read).
    const buffers = new ChunkBuffers(options.chunkBytes, 2 * (3 * options.workers + 1));
    for (const { input } of order) progress.expect(input.table);
    for (const { input } of order) {
      const share = part?.shares.get(input.file);
      const opened = await openInput(input, { workers: options.workers, chunkBytes: options.chunkBytes, stdin: options.stdin, covered: coveredOf(input).ranges, buffers, ...(share ? { share } : {}), parquet: options.parquet });
      sources.push(...opened.sources.map((source) => progress.track(input.table, source)));
    }
    progress.opened();
    const totalBytes = part
      ? [...part.shares.values()].reduce((a, r) => a + (r.end - r.start), 0)
      : sizes.every((s) => s !== undefined)
        ? sizes.reduce<number>((a, s) => a + (s ?? 0), 0)
        : undefined;

    const counters = new LoadCounters();
    for (const input of inputs) {
      counters.expect(input.table, input.file);
      counters.earlier(input.table, input.file, coveredOf(input));
      const found = rowTriggers.get(input.file);
      if (found) counters.rowTriggers(input.table, found);
    }
    const resumed = inputs.some((i) => coveredOf(i).ranges.length > 0);
    const queue = new ChunkQueue(sources, options.workers);
    // The first chunks are read while the sessions open (and Citus's routing is planned), not after.
    queue.start();
    const appName = (n: number): string => `${workerNamePrefix(loadId, part?.label)}${n}`;
    // Citus: which tables' rows pgsurge routes to their shards' nodes itself, checked before any row moves.
    let nodeConnections = 0;
    const routing: RoutingPlan | undefined = citus
      ? await planRouting(control, planned, {
          route: options.citusRoute ?? 'auto',
          writer: options.writer ?? copyWriter,
          loadId: withLedger ? loadId : undefined,
          inputs: ledgerInputs,
          citusTables: citus.tables,
          // The coordinator holding shards (group 0) is reached as the load reaches it: its pg_dist_node name is often localhost.
          connect: (node) => connect(node.groupId === 0 ? target.config : { ...target.config, host: node.host, port: node.port }, `${appName(0)}n${nodeConnections++}`),
          waitForEarlierRun: (c) => waitForEarlierRun(c, workerNamePrefix(loadId, part?.label)),
          guardSession: () => connect(target.config, `${appName(0)}g`),
          ...(options.shardCopy ? { shardCopy: options.shardCopy } : {}),
          ...(options.faults ? { faults: options.faults } : {}),
        }).catch(async (error: unknown) => {
          await queue.close();
          throw error;
        })
      : undefined;
    if (routing) releaseShards = () => routing.release();
    for (const r of routing?.routes ?? []) reporter.note?.(`${r.table}: ${r.route === 'client' ? 'rows routed to the shards by pgsurge' : 'rows through the coordinator'} (${r.why})`);
    const clients = await openClients(target, options.workers, appName).catch(async (error: unknown) => {
      await queue.close();
      throw error;
    });
    try {
      await reporter.start?.({ inputs, totalBytes, workers: clients.length, target: where, loadId, resumed, workerPrefix: workerNamePrefix(loadId, part?.label) });
    } catch (error) {
      await queue.close();
      await Promise.allSettled(clients.map((c) => c.end()));
      throw error;
    }

    const writer = citus ? citus.writer(options.writer ?? copyWriter) : (options.writer ?? copyWriter);
    const lineIndex = new LineIndex();
    const budget = new RejectBudget(options.maxRejects ?? DEFAULT_MAX_REJECTS, earlierRejects, withLedger);
    const signal = options.signal ?? new AbortController().signal;
    let firstError: unknown;
    const stopping = (): boolean => firstError !== undefined || signal.aborted;
    const summary = (): LoadSummary =>
      counters.summary(clients.length, where, {
        ...(withLedger ? { loadId } : {}),
        rejectFiles: [...rejectFiles.values()].filter((f) => f.written > 0).map((f) => ({ path: f.path, rows: f.written })),
        ...wireOf(writer, inputs),
      });

    let nextWorker = clients.length;
    // Commits may return before their WAL flush (the ledger says what a crash took back); not routed Citus loads'.
    const deferFlush = withLedger && citus === undefined;
    // Flushes the WAL of commits that did not wait, on a session of its own: `pgsurge <load id> flush`, not under the
    // workers' prefix, so the wait sampler does not count its idle backend as one waiting for pgsurge.
    // `walFlusher: false` leaves the flushes to the walwriter (for measuring).
    // One per process and server (`sharedFlusher`: dbt3 load's tables share it).
    const flusherName = `${workerNamePrefix(loadId, part?.label).slice(0, -1)}flush`;
    const { host, port, database, user } = target.config;
    const flusherUse = deferFlush && options.walFlusher !== false ? sharedFlusher(JSON.stringify([host, port, database, user]), () => connect(target.config, flusherName)) : undefined;
    const flusher = flusherUse?.flusher;
    // Workers not (yet) given back by `shrink`.
    let staying = clients.length;
    const workers = clients.map(
      (client) =>
        new LoadWorker(client, {
          queue,
          ledger,
          transaction: {
            writer,
            ledger,
            budget,
            // A JSON array's chunks have element numbers, not lines.
            firstLineOf: async (chunk) => (chunk.location.file === '-' || chunk.location.firstRecord !== undefined ? undefined : lineIndex.lineAt(chunk.location.file, chunk.location.byteOffset, lineByte(chunk.target.lineEnd)).catch(() => undefined)),
            triggers: (chunk) => rowTriggers.get(chunk.target.file),
          },
          connect: () => connect(target.config, appName(nextWorker++)),
          // The server restarted under the load: if it crashed, recovery emptied the unlogged tables, rows the ledger counts included.
          reconnected: unlogged.size === 0 ? undefined : (c) => checkUnloggedKept(c, serverStart, unlogged),
          retryForMs: options.retryForMs ?? DEFAULT_RETRY_FOR_MS,
          signal,
          stopping,
          leave: () => staying > 1 && options.shrink?.take() === true && staying-- > 0,
          now: () => counters.now(),
          retrying: (chunk, error, attempt, waitMs) => reporter.retrying?.({ chunk, error, attempt, waitMs }),
          deferFlush,
          ...(flusher ? { deferredCommit: () => flusher.request() } : {}),
          ...(routing?.router ? { router: routing.router } : {}),
          reloading: (chunk) =>
            reporter.note?.(`${chunk.location.file} at byte ${chunk.location.byteOffset}: a chunk whose WAL had not reached disk yet was lost with the server; loading it again`),
          async committed(chunk, outcome, startedAt, endedAt) {
            const rejected = outcome.rejects.length;
            // Read = loaded + rejected + skipped, chunk by chunk: a chunk that does not add up stops the load, named.
            if (outcome.loaded + rejected + outcome.skipped !== chunk.records) {
              throw brokenChunk(chunk, chunk.location.firstLine, `it came to ${outcome.loaded} loaded + ${rejected} rejected + ${outcome.skipped} skipped, not the ${chunk.records} records read${outcome.fromLedger ? ' (as the ledger holds it)' : ''}`, 'committed');
            }
            counters.add(chunk.target.table, chunk.target.file, outcome.loaded, inputBytesOf(chunk.location), startedAt, endedAt, {
              read: chunk.records,
              rejected,
              skipped: outcome.skipped,
              triggerSkipped: outcome.triggerSkipped ?? 0,
            });
            if (chunk.location.firstLine !== undefined && chunk.location.file !== '-') {
              lineIndex.remember(chunk.location.file, chunk.location.byteOffset + chunk.location.byteLength, chunk.location.firstLine + chunk.lines);
            }
            await rejectFileOf.get(chunk.target.file)!.append(outcome.rejects);
            reporter.chunkLoaded?.({ chunk, rows: outcome.loaded, result: { loaded: outcome.loaded, skipped: outcome.skipped }, seconds: (endedAt - startedAt) / 1000, counters });
            progress.counted(chunk.target.table);
          },
        }),
    );

    const onAbort = (): void => {
      void queue.close();
      for (const w of workers) w.interrupt();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await Promise.all(
        workers.map((w) =>
          w.run().then(
            () => {
              if (w.left) options.shrink?.released();
            },
            async (error: unknown) => {
              if (!signal.aborted) firstError ??= error;
              await queue.close();
            },
          ),
        ),
      );
    } finally {
      signal.removeEventListener('abort', onAbort);
      await queue.close();
      await flusherUse?.release();
      await Promise.allSettled([...rejectFiles.values()].map((f) => f.close()));
      // Workers append rejects as their chunks commit, in no particular order: rewrite each file from the ledger, in input order.
      if (withLedger) await withLiveClient(control, target, (c) => writeRejectFiles(c, ledger, inputs, rejectFiles, rejectFileOf)).catch(() => undefined);
    }
    // A stopped load's summary says what the ledger holds: this run's counters miss chunks whose commit it could not confirm.
    const stopped = async (error: LoadError): Promise<LoadStopped> => {
      const ledgerHolds = withLedger ? await withTimeout(withLiveClient(control, target, (c) => ledgerTotals(c, loadId)), 5000).catch(() => null) : undefined;
      return new LoadStopped(error, { ...summary(), ...(ledgerHolds !== undefined ? { ledger: ledgerHolds } : {}) }, withLedger ? loadId : undefined);
    };
    const incomplete = [...rejectFiles.values()].find((f) => f.failed !== undefined);
    if (incomplete) throw await stopped(rejectFileFailed(incomplete, withLedger, summary().total.loaded));
    if (signal.aborted) {
      throw await stopped(new LoadError('interrupted', 'interrupted: the chunks in flight were rolled back; the chunks committed before stay in the table'));
    }
    if (firstError !== undefined) {
      const error = firstError instanceof LoadError ? firstError : await describeFailure(firstError);
      throw await stopped(error.code === 'too-many-rejects' ? whereRejectsAre(error, [...rejectFiles.values()], firstError, withLedger) : error);
    }
    // Rows sent straight to shards that moved meanwhile may be lost or doubled: said, not summed up as a success.
    if (routing) await withLiveClient(control, target, (c) => routing.checkUnmoved(c)).catch(async (error: unknown) => {
      throw await stopped(error instanceof LoadError ? error : await describeFailure(error));
    });
    return { ...summary(), ...(routing && routing.routes.length > 0 ? { citusRoutes: routing.routes } : {}) };
  } finally {
    // Shard moves may go on (a load that stopped before its end check); ending the session releases the load's advisory lock.
    await releaseShards();
    await control.end().catch(() => undefined);
  }
}

/** The binary wire's account of this load's tables, when the writer has one. */
function wireOf(writer: ChunkWriter, inputs: readonly LoadTarget[]): { wire?: readonly TableWire[] } {
  const tables = new Set(inputs.map((i) => i.table));
  const wire = writer.wireReport?.().filter((w) => tables.has(w.table));
  return wire === undefined || wire.length === 0 ? {} : { wire };
}

/**
 * Options that cannot work with (or without) the ledger, refused before anything is
 * changed; callers that wrap the writer or prepare tables first (the durability presets)
 * call it themselves before they do.
 */
export function checkLedgerOptions(options: Pick<LoadOptions, 'ledger' | 'writer' | 'resume' | 'loadId'>): void {
  const withLedger = options.ledger !== false;
  if (withLedger && options.writer?.ownsTransactions) {
    throw new LoadError('bad-option', '--commit-every splits a chunk into several transactions, which the ledger cannot account for exactly once', {
      hint: 'add --no-ledger (the load then cannot be resumed, and a bad row stops it), or drop --commit-every',
    });
  }
  if (!withLedger && (options.resume || options.loadId !== undefined)) {
    throw new LoadError('bad-option', '--resume and --load-id need the ledger', { hint: 'drop --no-ledger' });
  }
}

/**
 * Workers are `pgsurge <load id> w<n>` in pg_stat_activity (application_name holds 63
 * bytes), a part's `pgsurge <load id> p<K/N> w<n>`: a part waits for its own earlier
 * run's connections, never for its sibling parts'.
 */
export function workerNamePrefix(loadId: string, part?: string): string {
  const tag = part === undefined ? '' : ` p${part}`;
  return `pgsurge ${loadId}`.slice(0, 56 - tag.length) + tag + ' w';
}

/**
 * A killed run's backends may still be finishing a COMMIT when the same load starts
 * again; reading the ledger before they end could load a chunk twice. Wait for them
 * (they end as soon as they see their client gone), then end any that linger.
 */
async function waitForEarlierRun(client: pg.Client, namePrefix: string): Promise<void> {
  // A long load id or part tag: the server keeps an application_name's first 63 bytes.
  const prefix = asServerKeeps(namePrefix);
  const alive = async (): Promise<number> =>
    (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE left(application_name, length($1)) = $1 AND pid <> pg_backend_pid()', [prefix])).rows[0]?.n ?? 0;
  for (let waited = 0; (await alive()) > 0; waited += 100) {
    if (waited >= 5000) {
      await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE left(application_name, length($1)) = $1 AND pid <> pg_backend_pid()', [prefix]);
    }
    if (waited >= 15_000) throw new LoadError('bad-option', 'connections of an earlier run of this load are still open on the server and would not end', { hint: 'end them (pg_terminate_backend) or use another --load-id' });
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Writes each reject file afresh from the ledger's rejected rows, in input order; returns how many there are. */
async function writeRejectFiles(
  client: pg.Client,
  ledger: ChunkLedger,
  inputs: readonly LoadTarget[],
  files: ReadonlyMap<string, RejectFile>,
  fileOf: ReadonlyMap<string, RejectFile>,
): Promise<number> {
  // Read everything first: if the server is gone, the files written so far stay as they are.
  const rows: RejectedRow[][] = [];
  for (const input of inputs) rows.push((await ledger.earlierRejects(client, input.file)).map((r) => ({ ...r, file: input.file })));
  for (const f of files.values()) await f.clear();
  inputs.forEach((input, i) => void fileOf.get(input.file)!.append(rows[i]!));
  await Promise.all([...files.values()].map((f) => f.close()));
  return rows.reduce((n, r) => n + r.length, 0);
}

/** After a reconnect: an unlogged table this load writes to must not have been emptied by a crash recovery since the load began. */
async function checkUnloggedKept(client: pg.Client, serverStart: string, unlogged: ReadonlyMap<number, string>): Promise<void> {
  const now = (await client.query<{ t: string }>('SELECT pg_postmaster_start_time()::text AS t')).rows[0]!.t;
  if (now === serverStart) return;
  for (const [oid, name] of unlogged) {
    const lost = await unloggedTableReset(client, oid, name);
    if (lost > 0) {
      throw new LoadError('server-lost', `the server restarted and its crash recovery emptied the unlogged table ${name}: the ${lost} rows committed to it are gone`, {
        hint: 'run the same command again: pgsurge sees the table emptied and loads every row again (an unlogged table keeps nothing through a crash)',
      });
    }
  }
}

/**
 * `--max-rejects` stopped the load: the chunk that went over was rolled back, so its rejected
 * rows are nowhere yet; say that, and where the rows rejected before it are (or that none are).
 */
function whereRejectsAre(error: LoadError, files: readonly RejectFile[], cause: unknown, withLedger: boolean): LoadError {
  const location = (cause as { pgsurgeLocation?: Chunk['location'] }).pgsurgeLocation;
  const chunk = location ? `the chunk at ${location.file} bytes ${location.byteOffset}–${location.byteOffset + location.byteLength}` : 'the chunk that went over the limit';
  const written = files.filter((f) => f.written > 0);
  const where =
    written.length > 0
      ? `the ${written.reduce((n, f) => n + f.written, 0)} rows rejected by chunks that committed are in ${written.map((f) => f.path).join(', ')} (why: .log beside it)`
      : 'no reject file was written: no chunk with rejected rows committed before it';
  const again = withLedger ? 'a resume finds them again' : 'without the ledger nothing keeps them: loading the input again finds them';
  return new LoadError(error.code, `${error.message}; ${chunk} was rolled back, so its rejected rows are not in any reject file (${again}); ${where}`, { ...error.details });
}

/** A reject file that could not be written in full (a full disk): the load fails, and says what is where. */
function rejectFileFailed(file: RejectFile, withLedger: boolean, loaded: number): LoadError {
  const why = file.failed!.message;
  const rows = (n: number): string => `${formatCount(n)} row${n === 1 ? '' : 's'}`;
  const holds = `it holds ${file.written} of the ${rows(file.wanted)} rejected${file.endsCut ? ', then part of the next' : ''}${file.logged < file.written ? `; its .log gives the reason for ${file.logged} of them` : ''}`;
  return new LoadError(
    'chunk-failed',
    `could not write the reject file ${file.path}: ${why}; the reject file is INCOMPLETE (${holds}); the load stopped there: the ${rows(loaded)} loaded by committed chunks stay in the table, the chunks in flight were rolled back`,
    {
      hint: withLedger
        ? 'free space there (or give --reject-file elsewhere), then resume: every rejected row is kept in the ledger (pgsurge.rejects) and the reject file is written again in full'
        : `without the ledger the ${rows(file.wanted - file.written)} missing from the file are kept nowhere, and the load cannot be resumed: free space there, then load the input again with --truncate (without it the rows loaded would go in twice)`,
      cause: file.failed,
    },
  );
}

/** Runs `fn` on the control connection, or on a fresh one if the server restarted under it. */
async function withLiveClient<T>(control: pg.Client, target: Target, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  try {
    return await fn(control);
  } catch {
    const fresh = await connect(target.config);
    try {
      return await fn(fresh);
    } finally {
      await fresh.end().catch(() => undefined);
    }
  }
}

/** Every input must exist and be readable before anything is written. */
async function checkInputs(inputs: readonly LoadTarget[]): Promise<(number | undefined)[]> {
  return Promise.all(
    inputs.map(async (input) => {
      if (input.file === '-') return undefined;
      try {
        const st = await fs.stat(input.file);
        if (st.isDirectory()) throw new LoadError('missing-file', `${input.file} is a directory, not a file`, { hint: 'for a folder of .tbl files use `pgsurge dbt3 load <dir>`' });
        await fs.access(input.file, fs.constants.R_OK);
        return st.isFile() ? st.size : undefined;
      } catch (error) {
        if (error instanceof LoadError) throw error;
        const code = (error as NodeJS.ErrnoException).code;
        const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (error as Error).message;
        throw new LoadError('missing-file', `cannot read ${input.file}: ${why}`, { hint: 'check the path; nothing was loaded' });
      }
    }),
  );
}

interface PreparedTable {
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
        await prepareTable(client, input.table, input.schema, options);
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
    const planned = await planInputColumns(client, inputs);
    for (const [i, input] of planned.entries()) {
      const table = out.get(inputs[i]!)!;
      await checkColumnCount(client, input, table.oid, table.name);
    }
    await client.query('COMMIT');
    return { tables: out, planned };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * The same tables and the same files (by identity) give the same id, so rerunning a
 * command resumes it; stdin has no identity, so a load from it gets a fresh id.
 */
function defaultLoadId(inputs: readonly LoadTarget[], tables: Map<LoadTarget, PreparedTable>, identities: readonly (string | undefined)[]): string {
  const names = [...new Set(inputs.map((i) => tables.get(i)!.name))];
  const h = createHash('sha256');
  if (identities.some((id) => id === undefined)) h.update(randomBytes(16));
  // The file's identity (device, inode, content), not its path: the same file named through a symlink or a hard link is the same load.
  const parts = inputs.map((input, i) => `${tables.get(input)!.name}\0${identities[i] ?? ''}`).sort();
  h.update(parts.join('\n'));
  const base = inputs[0]?.table ?? 'load';
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

async function openClients(target: Target, n: number, appName: (i: number) => string): Promise<pg.Client[]> {
  const settled = await Promise.allSettled(Array.from({ length: n }, (_, i) => connect(target.config, appName(i))));
  const clients = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await Promise.allSettled(clients.map((c) => c.end()));
    throw connectionFailure(failed.reason, target.description);
  }
  return clients;
}

/** Names the server's message, the file and the place for an error no retry or reject could handle. */
async function describeFailure(error: unknown): Promise<LoadError> {
  const location = (error as { pgsurgeLocation?: Chunk['location'] }).pgsurgeLocation;
  // "loading lineitem.tbl (bytes …)", or "the load" for an error outside any chunk (a decoding thread that would not start)
  const where = !location
    ? 'the load'
    : 'loading ' + (location.rowGroup !== undefined
      ? `${location.file} (row group ${location.rowGroup}, rows ${location.byteOffset + 1}–${location.byteOffset + location.byteLength})`
      : `${location.file} (bytes ${location.byteOffset}–${location.byteOffset + location.byteLength})`);
  if (!isServerError(error)) {
    return new LoadError('chunk-failed', `${where} failed: ${(error as Error).message}`, { cause: error });
  }
  const trouble = serverTrouble(error.code);
  const columnName = error.column ?? copyColumnFromWhere(error.where);
  const column = columnName ? ` (column ${columnName})` : '';
  const line = copyLineFromWhere(error.where);
  return new LoadError(trouble ? 'server-error' : 'chunk-failed', `${trouble ? `${trouble}: ` : ''}${where}${line ? ` (record ${line} of the chunk)` : ''}: ${error.message}${column} [SQLSTATE ${error.code}]`, {
    server: error,
    hint: error.hint ?? (trouble ? 'fix the server, then resume: nothing of the failed chunk was committed' : 'the chunks committed before the error stay; resume loads the rest'),
    cause: error,
  });
}
