import { laneRoutingOf } from '../keyed/keyed-writer.js';
import type pg from 'pg';
import type { Chunk } from '../../core/chunk.js';
import type { ChunkWriter } from '../chunk-writer.js';
import { copyRows } from '../copy-writer.js';
import { qualifiedName } from '../../core/identifiers.js';
import { connectionFailure, LoadError } from '../../core/load-error.js';
import { isRetryable } from '../../core/retry.js';
import { connect, type Target } from '../../cluster/target.js';
import { readPostmasterOpts, settingsFromArgs } from '../../cluster/data-dir.js';
import type { ManagedCluster } from '../../cluster/managed-cluster.js';
import { followRewrite } from '../ledger/ledger.js';
import { clearUnsafe, markUnsafe } from './unsafe-marker.js';
import {
  crashCanLose,
  DURABILITY_SETTINGS,
  SESSION_SETTINGS,
  UNSAFE_SERVER_SETTINGS,
  type DurabilityOptions,
  type DurabilityPreset,
} from './presets.js';

/** A table a load writes to, and whether this load emptied it (created it, or truncated it). */
export interface DurableTable {
  readonly table: string;
  readonly schema: string | undefined;
  readonly emptiedByLoad: boolean;
}

export interface DurabilityStep {
  readonly step: string;
  readonly seconds: number;
}

/** What a load traded for speed, as data: the summary prints it, a report records it. */
export interface DurabilityReport {
  readonly preset: DurabilityPreset;
  readonly unlogged: boolean;
  /** The settings the load's sessions ran with, read back from the server (not assumed). */
  readonly settingsInEffect: Readonly<Record<string, string>>;
  /** The server's settings after the load (for `unsafe`: after restoring them). */
  readonly settingsAfter: Readonly<Record<string, string>>;
  /** Tables whose first chunk went through `COPY … FREEZE` (in the transaction that truncated them), and those rows. */
  readonly frozenTables: readonly string[];
  readonly frozenRows: number;
  /** Tables loaded unlogged and made logged at the end. */
  readonly unloggedTables: readonly string[];
  /** Timed steps around the load: restarts, SET LOGGED, CHECKPOINT. */
  readonly steps: readonly DurabilityStep[];
  /** `pg_current_wal_lsn()` difference from just before the load to after SET LOGGED. */
  readonly walBytes: number;
  readonly crashCanLose: string;
  /** Things the user should know (e.g. why FREEZE was not used). */
  readonly notes: readonly string[];
}

/** A durability preset applied to a server around one load. */
export interface DurabilitySession {
  /**
   * Wraps the load's writer: session settings per connection; with one worker, FREEZE on the
   * first chunk of each table this load emptied.
   */
  wrapWriter(inner: ChunkWriter, workers: number): ChunkWriter;
  /** SET LOGGED, restore the server's settings, CHECKPOINT: always call it, also after a failed load. */
  finish(): Promise<DurabilityReport>;
}

/**
 * Applies a preset: refuses `unsafe` off the managed cluster, restarts the managed cluster
 * with the unsafe settings, makes the tables unlogged. The load then runs with
 * `wrapWriter(writer)`; `finish()` undoes what is to be undone and says what was traded.
 */
export async function startDurability(target: Target, options: DurabilityOptions, tables: readonly DurableTable[]): Promise<DurabilitySession> {
  const { preset } = options;
  if (preset === 'unsafe' && target.managed === undefined) throw unsafeRefused(target);
  const steps: DurabilityStep[] = [];
  const notes: string[] = [];
  const timed = async <T>(step: string, fn: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    const out = await fn();
    steps.push({ step, seconds: (performance.now() - t0) / 1000 });
    return out;
  };

  const open = (): Promise<pg.Client> =>
    connect(target.config).catch((e: unknown) => {
      throw connectionFailure(e, target.description);
    });

  // Which tables to make unlogged, all checked before any is changed.
  const toUnlog = options.unlogged ? await tablesToUnlog(await open(), tables, notes) : [];
  const restoreSettings = preset === 'unsafe' ? await restartUnsafe(target.managed!, timed) : undefined;
  const undoServer = async (): Promise<void> => {
    if (restoreSettings === undefined) return;
    const cluster = target.managed!;
    await timed('restore settings (restart)', async () => {
      await cluster.stop();
      await cluster.start(restoreSettings);
      await clearUnsafe(cluster);
    });
  };
  const beginning = beginDurability(open, toUnlog, preset, restoreSettings === undefined);
  // With a table to unlog or a restart, the load starts once they are done. Without (the
  // `safe` default), the session that reads the settings and the WAL position opens beside
  // the load's own start instead of before it; the load's sessions wait for it before their
  // first row (`wrapWriter`'s prepare), and `finish` for its answers.
  const begun =
    toUnlog.length > 0 || restoreSettings !== undefined
      ? Promise.resolve(
          await beginning.catch(async (error: unknown) => {
            await undoServer();
            throw error;
          }),
        )
      : beginning;
  // Its failure is the load's at the first row (or at `finish`), not an unhandled rejection meanwhile.
  begun.catch(() => undefined);
  const ready = (): Promise<void> =>
    begun.then(
      () => undefined,
      (error: unknown) => {
        // Not a lost connection the worker would retry on a fresh one: this session is not the worker's.
        throw isRetryable(error) ? new LoadError('server-lost', `--durability ${preset}: reading the settings and the WAL position before the load failed: ${(error as Error).message}`, { cause: error }) : error;
      },
    );

  const emptied = new Set(tables.filter((t) => t.emptiedByLoad).map((t) => qualifiedName(t.table, t.schema)));
  const frozen: Frozen = { on: preset !== 'safe', gates: new Map(), rows: 0, tables: [] };
  if (frozen.on && emptied.size === 0) notes.push('COPY FREEZE not used: no table was created or truncated by this load (FREEZE needs that, in the same transaction)');
  // the server refuses COPY FREEZE into a partitioned table (and the rows go to its partitions, which this load did not truncate by name)
  if (frozen.on && emptied.size > 0) {
    for (const name of await partitionedAmong(await open(), [...emptied])) {
      emptied.delete(name);
      notes.push(`COPY FREEZE not used for ${name}: it is partitioned, and the server takes no FREEZE into a partitioned table`);
    }
  }
  const finishing: Finishing = { target, options, begun, restarted: restoreSettings !== undefined, undoServer, timed, frozen, steps, notes };
  return {
    wrapWriter: (inner, workers) => durableWriter(inner, workers, { preset, emptied, frozen, notes, ready }),
    finish: () => finishDurability(finishing),
  };
}

/** The tables `--unlogged` makes unlogged (those still logged), each checked empty first; `client` is ended. */
async function tablesToUnlog(client: pg.Client, tables: readonly DurableTable[], notes: string[]): Promise<string[]> {
  const toUnlog: string[] = [];
  try {
    for (const t of tables) {
      const table = qualifiedName(t.table, t.schema);
      // a partitioned table has no storage to unlog (PostgreSQL 18 refuses it, earlier ones do nothing): its partitions, at every level, do
      const r = await client.query<{ name: string; self: boolean; persistence: string; rows: boolean }>(
        `SELECT format('%I.%I', n.nspname, c.relname) AS name, c.oid = t.oid AS self, c.relpersistence AS persistence, EXISTS (SELECT 1 FROM ${table}) AS rows
           FROM (SELECT $1::regclass AS oid) t LEFT JOIN LATERAL pg_partition_tree(t.oid) p ON true
           JOIN pg_class c ON c.oid = coalesce(p.relid, t.oid) JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE coalesce(p.isleaf, true) ORDER BY p.level, 1`,
        [table],
      );
      if (r.rows[0]?.rows === true && r.rows.some((row) => row.persistence === 'p')) {
        throw new LoadError('bad-option', `--unlogged would put the rows ${table} already holds at risk: a crash before SET LOGGED empties the whole table`, {
          hint: 'add --truncate, or load into an empty table',
        });
      }
      for (const row of r.rows) {
        const name = row.self ? table : row.name;
        if (row.persistence === 'u') notes.push(`${name} was already unlogged: left unlogged after the load`);
        if (row.persistence === 'p') toUnlog.push(name);
      }
    }
  } finally {
    await client.end();
  }
  return toUnlog;
}

/** The partitioned tables among `names`; `client` is ended. */
async function partitionedAmong(client: pg.Client, names: readonly string[]): Promise<string[]> {
  try {
    const r = await client.query<{ k: string }>("SELECT c.relkind::text AS k FROM unnest($1::regclass[]) WITH ORDINALITY AS t(oid, i) JOIN pg_class c ON c.oid = t.oid ORDER BY t.i", [names]);
    return names.filter((_, i) => r.rows[i]?.k === 'p');
  } finally {
    await client.end();
  }
}

/** `unsafe`: restarts the managed cluster with the unsafe settings; returns the settings to restore. */
async function restartUnsafe(cluster: ManagedCluster, timed: <T>(step: string, fn: () => Promise<T>) => Promise<T>): Promise<Record<string, string>> {
  const restoreSettings = await startedSettings(cluster);
  const unsafe = { ...restoreSettings, ...UNSAFE_SERVER_SETTINGS };
  // Written first: a pgsurge killed from here on leaves it, and the next command restores the settings.
  await markUnsafe(cluster, restoreSettings);
  await timed('restart with unsafe settings', async () => {
    await cluster.stop();
    try {
      await cluster.start(unsafe);
    } catch (error) {
      await cluster.start(restoreSettings);
      await clearUnsafe(cluster);
      throw error;
    }
  });
  return restoreSettings;
}

/** What the preset changed as the load began, for `finish`. */
interface Begun {
  readonly unloggedTables: string[];
  readonly settingsInEffect: Record<string, string>;
  readonly walStart: string;
  /**
   * The session that read the settings and the WAL position, kept for `finish` when no restart comes between
   * (a connection is a backend forked and authenticated, at the end of every load); undefined otherwise. Taken once.
   */
  takeHeld(): pg.Client | undefined;
}

/** Makes the tables unlogged, applies the preset's session settings and reads them back, with the WAL position. */
async function beginDurability(open: () => Promise<pg.Client>, toUnlog: readonly string[], preset: DurabilityPreset, keep: boolean): Promise<Begun> {
  const unloggedTables: string[] = [];
  let held: pg.Client | undefined;
  const client = await open();
  try {
    for (const name of toUnlog) {
      await setLogged(client, name, false);
      unloggedTables.push(name);
    }
    await applySessionSettings(client, SESSION_SETTINGS[preset]);
    const settingsInEffect = await readSettings(client);
    const walStart = (await client.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]!.lsn;
    if (keep) held = client;
    const takeHeld = (): pg.Client | undefined => {
      const c = held;
      held = undefined;
      return c;
    };
    return { unloggedTables, settingsInEffect, walStart, takeHeld };
  } catch (error) {
    for (const name of unloggedTables) await setLogged(client, name, true).catch(() => undefined);
    throw error;
  } finally {
    if (held === undefined) await client.end();
  }
}

/** COPY FREEZE's bookkeeping: whether the preset uses it, each emptied table's first-chunk gate, what was frozen. */
interface Frozen {
  readonly on: boolean;
  readonly gates: Map<string, Promise<void>>;
  rows: number;
  readonly tables: string[];
}

/** The load's writer wrapped: the preset's session settings per connection; with one worker, FREEZE on the first chunk of a table the load emptied. */
function durableWriter(inner: ChunkWriter, workers: number, how: { preset: DurabilityPreset; emptied: ReadonlySet<string>; frozen: Frozen; notes: string[]; ready: () => Promise<void> }): ChunkWriter {
  const { preset, emptied, frozen, notes, ready } = how;
  const gates = frozen.gates;
  const session = SESSION_SETTINGS[preset];
  // FREEZE needs the COPY in the transaction that emptied the table, and a table is
  // emptied once: only its first chunk can have it. With several workers that chunk
  // would hold up every other chunk of the table until it commits, for ~one chunk of
  // frozen rows, so FREEZE is used only when it costs nothing: one worker.
  const freeze = frozen.on && emptied.size > 0 && inner.name === 'copy' && workers === 1;
  if (frozen.on && emptied.size > 0 && inner.name !== 'copy') notes.push(`COPY FREEZE not used: the ${inner.name} writer does not COPY`);
  else if (frozen.on && emptied.size > 0 && workers > 1) {
    notes.push(
      `COPY FREEZE not used: it applies only to the chunk whose transaction emptied the table, and with ${workers} workers the other chunks would wait for it; with -w 1 the first chunk of each table is frozen (all of it with --chunk-size above the file's size)`,
    );
  }
  return {
    name: inner.name,
    async prepare(c: pg.Client) {
      // The WAL position is read before the first row.
      await ready();
      await applySessionSettings(c, session);
      await inner.prepare?.(c);
    },
    // The load refuses a writer that commits on its own with the ledger: that must show through the wrapper.
    ...(inner.ownsTransactions ? { ownsTransactions: true } : {}),
    ...(inner.failedRecord ? { failedRecord: inner.failedRecord.bind(inner) } : {}),
    ...(inner.refusedWriter ? { refusedWriter: inner.refusedWriter } : {}),
    ...(inner.wireReport ? { wireReport: inner.wireReport.bind(inner) } : {}),
    ...(inner.planLoad ? { planLoad: inner.planLoad.bind(inner) } : {}),
    ...(inner.endLoad ? { endLoad: inner.endLoad.bind(inner) } : {}),
    ...(inner.readsBy ? { readsBy: inner.readsBy } : {}),
    // An upsert's key lanes (src/writer/keyed/keyed-writer.ts), chosen by its planLoad.
    ...('laneRouting' in inner ? { laneRouting: () => laneRoutingOf(inner) } : {}),
    // A Citus load routes rows to the shards only when not asked for the binary wire (plan-routing.ts).
    ...(inner.wire ? { wire: inner.wire } : {}),
    // A frozen first chunk sends TRUNCATE first, so its BEGIN goes on its own.
    ...(inner.beginAndWriteRows && !freeze ? { beginAndWriteRows: inner.beginAndWriteRows.bind(inner) } : {}),
    async writeRows(c: pg.Client, chunk: Chunk) {
      const name = qualifiedName(chunk.target.table, chunk.target.schema);
      if (freeze && emptied.has(name)) {
        const gate = gates.get(name);
        if (gate === undefined) {
          // The first chunk of a table this load emptied truncates it again in the chunk's
          // transaction, which is what lets the server take FREEZE; the table's other
          // chunks wait for it to commit, so the TRUNCATE never removes loaded rows. If
          // that chunk is refused, its parts are retried without FREEZE (the gate is set).
          let open!: () => void;
          gates.set(name, new Promise<void>((resolve) => (open = resolve)));
          try {
            await c.query(`TRUNCATE ${name}`);
            const rows = await copyRows(c, chunk, { freeze: true });
            frozen.rows += rows;
            frozen.tables.push(name);
            return { loaded: rows, skipped: 0 };
          } finally {
            open();
          }
        }
        await gate;
      }
      return inner.writeRows(c, chunk);
    },
  };
}

interface Finishing {
  readonly target: Target;
  readonly options: DurabilityOptions;
  readonly begun: Promise<Begun>;
  /** The server was restarted with other settings (`unsafe`). */
  readonly restarted: boolean;
  undoServer(): Promise<void>;
  timed<T>(step: string, fn: () => Promise<T>): Promise<T>;
  readonly frozen: Frozen;
  readonly steps: DurabilityStep[];
  readonly notes: string[];
}

/** SET LOGGED, the server's settings restored, CHECKPOINT; what was traded. */
async function finishDurability(finishing: Finishing): Promise<DurabilityReport> {
  const { target, options, restarted, undoServer, timed, frozen, steps, notes } = finishing;
  const begun = await finishing.begun;
  const { preset } = options;
  /** The held session with its settings back to the server's (RESET ALL: what a fresh one would read), else a fresh one (it was lost: a server restart under the load). */
  const sessionForFinish = async (): Promise<pg.Client> => {
    const c = begun.takeHeld();
    if (c !== undefined) {
      try {
        await c.query('RESET ALL');
        return c;
      } catch {
        await c.end().catch(() => undefined);
      }
    }
    return connect(target.config);
  };
  // The usual end (nothing to set logged, no restart): on the held session, its settings reset, the WAL position
  // and the settings read in one round trip; if that session is gone, the steps below on a fresh one.
  const held = begun.unloggedTables.length === 0 && !restarted ? begun.takeHeld() : undefined;
  let read: { walBytes: number; settingsAfter: Record<string, string> | undefined } | undefined = held && (await readWalAndSettings(held, begun.walStart).catch(() => undefined));
  await held?.end().catch(() => undefined);
  if (read === undefined) {
    const c = await sessionForFinish();
    try {
      for (const name of begun.unloggedTables) await timed(`SET LOGGED ${name}`, () => setLogged(c, name, true));
      const walBytes = Number((await c.query<{ b: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::text AS b', [begun.walStart])).rows[0]!.b);
      // No server settings to put back (no restart): the settings after are this connection's to read, not a new one's
      // (a connection is a backend forked and authenticated, at the end of every load).
      read = { walBytes, settingsAfter: restarted ? undefined : await readSettings(c) };
    } finally {
      await c.end();
    }
  }
  const { walBytes } = read;
  let { settingsAfter } = read;
  if (settingsAfter === undefined) {
    await undoServer();
    const after = await connect(target.config);
    try {
      await timed('CHECKPOINT', () => after.query('CHECKPOINT'));
      settingsAfter = await readSettings(after);
    } finally {
      await after.end();
    }
  }
  return {
    preset,
    unlogged: options.unlogged,
    settingsInEffect: begun.settingsInEffect,
    settingsAfter,
    frozenTables: frozen.tables,
    frozenRows: frozen.rows,
    unloggedTables: begun.unloggedTables,
    steps,
    walBytes,
    crashCanLose: crashCanLose(options),
    notes,
  };
}

/**
 * Runs `body` (a load) inside a durability preset and always finishes it, also when the body
 * fails (then the body's error wins, with the finishing error added to it).
 */
export async function runWithDurability<T>(
  target: Target,
  options: DurabilityOptions,
  tables: readonly DurableTable[],
  load: { readonly writer: ChunkWriter; readonly workers: number },
  body: (writer: ChunkWriter) => Promise<T>,
): Promise<{ result: T; durability: DurabilityReport }> {
  const session = await startDurability(target, options, tables);
  let result: T;
  try {
    result = await body(session.wrapWriter(load.writer, load.workers));
  } catch (error) {
    await session.finish().catch((finishError: unknown) => {
      // (a session that could not begin fails the load and its finish alike: said once)
      const said = error instanceof Error && (error === finishError || error.cause === finishError || error.message.includes((finishError as Error).message));
      if (error instanceof Error && !said) error.message += `; then undoing --durability ${options.preset} failed too: ${(finishError as Error).message}`;
    });
    throw error;
  }
  return { result, durability: await session.finish() };
}

export function unsafeRefused(target: Target): LoadError {
  return new LoadError('bad-option', `--durability unsafe works only on pgsurge's managed cluster, and the target is ${target.description}`, {
    hint: 'fsync=off can corrupt a whole cluster, so pgsurge sets it only on a cluster it owns: drop --db (and the PG* variables) to use the managed cluster, or use --durability fast',
  });
}

/** The `-c` settings the managed cluster was started with, so they come back after `unsafe`. */
async function startedSettings(cluster: ManagedCluster): Promise<Record<string, string>> {
  const args = await readPostmasterOpts(cluster.dataDir);
  return args === undefined ? {} : settingsFromArgs(args);
}

/** `RESET ALL`, then the WAL written since `walStart` and the settings a fresh session reads: one simple query. */
async function readWalAndSettings(client: pg.Client, walStart: string): Promise<{ walBytes: number; settingsAfter: Record<string, string> }> {
  const names = DURABILITY_SETTINGS.map((n) => client.escapeLiteral(n)).join(', ');
  const replies = (await client.query(
    `RESET ALL; SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), ${client.escapeLiteral(walStart)}::pg_lsn)::text AS b,
       (SELECT json_object_agg(name, current_setting(name)) FROM unnest(ARRAY[${names}]) AS name) AS s`,
  )) as unknown as pg.QueryResult<{ b: string; s: Record<string, string> }>[];
  const row = replies.at(-1)!.rows[0]!;
  return { walBytes: Number(row.b), settingsAfter: row.s };
}

async function readSettings(client: pg.Client): Promise<Record<string, string>> {
  const r = await client.query<{ name: string; setting: string }>('SELECT name, current_setting(name) AS setting FROM unnest($1::text[]) AS name', [
    DURABILITY_SETTINGS as unknown as string[],
  ]);
  return Object.fromEntries(r.rows.map((row) => [row.name, row.setting]));
}

async function applySessionSettings(client: pg.Client, settings: Readonly<Record<string, string>>): Promise<void> {
  for (const [name, value] of Object.entries(settings)) await client.query('SELECT set_config($1, $2, false)', [name, value]);
}

/** `ALTER TABLE … SET LOGGED | UNLOGGED` (a rewrite: a new file), with the ledger's chunks of the table following it. */
async function setLogged(client: pg.Client, name: string, logged: boolean): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query(`ALTER TABLE ${name} SET ${logged ? 'LOGGED' : 'UNLOGGED'}`);
    await followRewrite(client, name);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
