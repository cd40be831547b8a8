import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { LoadTarget } from '../../core/chunk.js';
import { createOnce } from '../../core/create-once.js';
import { LoadError } from '../../core/load-error.js';
import { copyColumns, readTableColumns, type TableColumnCache } from '../../core/table-columns.js';
import { LEDGER_SCHEMA, type LedgerInput } from '../ledger/ledger.js';
import type { ChunkWriter } from '../chunk-writer.js';
import { wireFormat } from '../../wire/wire-format.js';
import type { ChunkRouter } from '../chunk-transaction.js';
import { ensureNodeLedger } from './node-ledger.js';
import { mapHashOf, RouterSession, shardMapChanged, type RoutedLoad, type RoutedTable, type ShardCopy } from './routed-chunk.js';
import { isShardMap, readShardMap, shardMapKey, type ShardNode } from './shard-map.js';
import { holdShardMoves, type MoveGuard } from './shard-move-guard.js';
import type { CitusFaults } from './citus-faults.js';

/** `--citus-route`: how a Citus table's rows reach its shards. */
export const CITUS_ROUTES = ['auto', 'client', 'coordinator'] as const;
export type CitusRoute = (typeof CITUS_ROUTES)[number];

/** Which way one table's rows went, and why: for the summary. */
export interface TableRoute {
  readonly table: string;
  readonly route: 'client' | 'coordinator';
  readonly why: string;
}

/** A load's routing: a router per worker when some table is routed, and the check that the shards stayed put. */
export interface RoutingPlan {
  readonly routes: readonly TableRoute[];
  router?(): ChunkRouter;
  /** At the end of the load: every routed table's shard map is still the one the load began with; then shard moves may go on. */
  checkUnmoved(client: pg.Client): Promise<void>;
  /** Lets shard moves go on (the guard's session ended): after checkUnmoved, or when the load stops. Idempotent. */
  release(): Promise<void>;
}

interface PlanOptions {
  readonly route: CitusRoute;
  readonly writer: ChunkWriter;
  readonly loadId: string | undefined;
  /** Input path (as named) → ledger entry; `tableOf` its table. */
  readonly inputs: ReadonlyMap<string, LedgerInput>;
  /** The input's columns in COPY order (the column plan), every column of the table when absent. */
  readonly citusTables: ReadonlySet<number>;
  /** A connection to a node with the user's credentials, named `application name`. */
  connect(node: ShardNode): Promise<pg.Client>;
  /** Ends (waits for) backends of an earlier run of this load on a node (see load.ts waitForEarlierRun). */
  waitForEarlierRun(client: pg.Client): Promise<void>;
  /** A session of its own on the coordinator, for the lock that holds off shard moves (src/writer/citus/shard-move-guard.ts). */
  guardSession(): Promise<pg.Client>;
  /** How routed rows are sent to a shard (`RoutedLoad.shardCopy`). */
  readonly shardCopy?: ShardCopy;
  /** A test's faults (`RoutedLoad.faults`). */
  readonly faults?: CitusFaults;
}

/**
 * The coordinator's record of each routed input of a load: the shard map it began with
 * (compared at every resume and at the end) and its generation, which names the input in
 * its nodes' part rows. The ledger follows a renamed file here as in its other tables, and
 * forgets the row with the file's other rows (--truncate, a table dropped and created
 * again): the next run's new generation leaves the old part rows out.
 */
const ROUTED_FILES_DDL = `CREATE TABLE IF NOT EXISTS ${LEDGER_SCHEMA}.routed_files (
  load_id text NOT NULL,
  file text NOT NULL,
  table_oid oid NOT NULL,
  map_hash text NOT NULL,
  shard_map text NOT NULL,
  generation text NOT NULL,
  spec_hash text,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (load_id, file))`;

/**
 * Creates `routed_files` on first use, or adds the column an earlier pgsurge's lacks, under
 * its creation lock (src/core/create-once.ts): the parts of a load (`--part K/N`) starting at
 * once all come here, and one creates it.
 */
async function ensureRoutedFiles(control: pg.Client): Promise<void> {
  let table = false;
  await createOnce(control, 'routed files', {
    async missing(c) {
      const r = await c.query<{ table: boolean; spec: boolean }>(
        `SELECT to_regclass('${LEDGER_SCHEMA}.routed_files') IS NOT NULL AS table,
                EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('${LEDGER_SCHEMA}.routed_files') AND attname = 'spec_hash' AND NOT attisdropped) AS spec`,
      );
      table = r.rows[0]?.table === true;
      return !table || r.rows[0]?.spec !== true;
    },
    async create(c) {
      await c.query(table ? `ALTER TABLE ${LEDGER_SCHEMA}.routed_files ADD COLUMN spec_hash text` : ROUTED_FILES_DDL);
    },
  });
}

/**
 * Decides, per input whose table Citus holds, whether pgsurge routes its rows to the
 * shards itself: only when asked (`client`) or by default (`auto`), for COPY text input
 * (tbl, text, NDJSON; not CSV, JSON arrays or Parquet yet) into a hash-distributed table
 * with one placement per shard and a distribution column it hashes exactly, present in
 * the input, and no column left to a default (the coordinator evaluates defaults;
 * a node's shard would evaluate its own). `client` refuses (exit 2) a table it cannot
 * route; `auto` sends it through the coordinator and says why.
 */
export async function planRouting(control: pg.Client, targets: readonly LoadTarget[], options: PlanOptions): Promise<RoutingPlan> {
  const routes: TableRoute[] = [];
  const tables = new Map<string, RoutedTable>();
  const nodes = new Map<number, ShardNode>();
  // Several inputs of one table read its columns once.
  const tableColumns: TableColumnCache = new Map();
  const recorded = options.loadId === undefined ? new Map<string, RecordedInput>() : await recordedMaps(control, options.loadId);
  for (const target of targets) {
    const input = options.inputs.get(target.file)!;
    if (!options.citusTables.has(input.tableOid)) continue;
    const why = await whyNotRouted(control, target, input, options, tableColumns);
    if (typeof why === 'string') {
      if (options.route === 'client') throw new LoadError('bad-option', `--citus-route client: ${input.tableName} cannot be routed by pgsurge: ${why}`, { hint: 'use --citus-route auto (or coordinator) to load it through the coordinator' });
      // A load that began routing this input has parts on the nodes that the coordinator's COPY would load again.
      if (recorded.has(input.file)) throw resumeOtherWay(input.tableName, options.loadId);
      if (!routes.some((r) => r.table === input.tableName)) routes.push({ table: input.tableName, route: 'coordinator', why });
      continue;
    }
    tables.set(target.file, why);
    for (const n of why.map.nodes) nodes.set(n.groupId, n);
  }
  if (tables.size === 0) return { routes, checkUnmoved: async () => undefined, release: async () => undefined };

  // Each node: reachable from here, its ledger tables, and no backend of an earlier run of this load still able to
  // commit a part. A node pgsurge cannot reach (a container's host name, pg_hba letting in the coordinator only): under
  // auto an input not routed yet goes through the coordinator; one that began routing, or --citus-route client, stops.
  const unreachable = new Map<number, string>();
  for (const node of nodes.values()) {
    const why = await prepareNode(node, options);
    if (why !== undefined) unreachable.set(node.groupId, why);
  }
  for (const [file, t] of [...tables]) {
    const down = t.map.nodes.find((n) => unreachable.has(n.groupId));
    if (down === undefined) continue;
    const why = `pgsurge cannot use its node ${down.host}:${down.port}: ${unreachable.get(down.groupId)!}`;
    if (options.route === 'client' || recorded.has(t.input.file)) {
      throw new LoadError('bad-option', `${options.route === 'client' ? '--citus-route client' : `load ${options.loadId ?? ''} began routing ${t.tableName}'s rows to its shards`}: ${why}`, {
        hint: options.route === 'client' ? 'the node names in pg_dist_node must reach the nodes from this machine, with these credentials; else load through the coordinator: --citus-route auto or coordinator' : 'make the node reachable from here and resume, or start over with --truncate',
      });
    }
    tables.delete(file);
    if (!routes.some((r) => r.table === t.tableName)) routes.push({ table: t.tableName, route: 'coordinator', why });
  }
  for (const t of tables.values()) {
    if (!routes.some((r) => r.table === t.tableName)) {
      routes.push({ table: t.tableName, route: 'client', why: `hash-distributed by ${t.map.column} (${t.map.type}), ${t.map.shards.length} shards on ${t.map.nodes.length} node${t.map.nodes.length === 1 ? '' : 's'}: each chunk's rows go straight to their shards' nodes` });
    }
  }
  if (tables.size === 0) return { routes, checkUnmoved: async () => undefined, release: async () => undefined };

  // From here to the end check no shard of a routed table moves; the maps are read again under the lock, so the
  // load routes by the map it holds. Where the lock is refused, a move during the load is found at its end only.
  const guard = await holdShardMoves(await options.guardSession(), [...new Set([...tables.values()].flatMap((t) => t.map.shards.map((s) => s.id)))]);
  try {
    return await planHeld(control, tables, nodes, routes, recorded, guard, options);
  } catch (error) {
    await guard.release();
    throw error;
  }
}

/** The rest of planRouting, with shard moves held off (or not, `guard.notHeld` says why). */
async function planHeld(
  control: pg.Client,
  tables: Map<string, RoutedTable>,
  nodes: Map<number, ShardNode>,
  routes: TableRoute[],
  recorded: Map<string, RecordedInput>,
  guard: MoveGuard,
  options: PlanOptions,
): Promise<RoutingPlan> {
  for (const t of tables.values()) {
    if (guard.notHeld === undefined) {
      const now = await readShardMap(control, t.input.tableOid);
      if (!isShardMap(now) || mapHashOf(shardMapKey(now)) !== t.mapHash) throw shardMapChanged(t.tableName, options.loadId, 'as this load began');
    }
    const r = routes.findIndex((x) => x.table === t.tableName && x.route === 'client');
    if (r >= 0) {
      const held = guard.notHeld === undefined ? 'shard moves wait for the load to end' : `shard moves are NOT held off (${guard.notHeld}): one during the load is found only at its end`;
      routes[r] = { ...routes[r]!, why: `${routes[r]!.why}; ${held}` };
    }
  }
  if (options.loadId !== undefined) {
    await ensureRoutedFiles(control);
    for (const t of tables.values()) {
      let was = recorded.get(t.input.file);
      if (was === undefined) {
        // Under the load's advisory lock (and a part's own: --part K/N parts share a file, the first inserts it).
        const generation = randomBytes(8).toString('hex');
        await control.query(
          `INSERT INTO ${LEDGER_SCHEMA}.routed_files (load_id, file, table_oid, map_hash, shard_map, generation, spec_hash) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (load_id, file) DO NOTHING`,
          [options.loadId, t.input.file, t.input.tableOid, t.mapHash, shardMapKey(t.map), generation, t.specHash],
        );
        was = (await recordedMaps(control, options.loadId)).get(t.input.file)!;
        recorded.set(t.input.file, was);
      }
      if (was.mapHash !== t.mapHash) throw shardMapChanged(t.tableName, options.loadId, 'since this load began');
      if (was.specHash !== t.specHash) {
        throw new LoadError('bad-option', `load ${options.loadId} began routing ${t.tableName}'s rows reading the input another way (format, delimiter, null marker or column list): routed as this run reads it, records would go to other nodes than the earlier runs' parts cover, and rows could be lost or doubled`, {
          hint: 'resume with the options the load began with (--columns, --format, --delimiter, --null), or start over with --truncate',
        });
      }
      t.generation = was.generation;
    }
  }
  const load: RoutedLoad = { loadId: options.loadId, tables, nodes, connect: options.connect, ...(options.shardCopy ? { shardCopy: options.shardCopy } : {}), ...(options.faults ? { faults: options.faults } : {}) };
  return {
    routes,
    router: () => new RouterSession(load),
    async checkUnmoved(client) {
      try {
        for (const t of tables.values()) {
          const now = await readShardMap(client, t.input.tableOid);
          if (!isShardMap(now) || mapHashOf(shardMapKey(now)) !== t.mapHash) throw shardMapChanged(t.tableName, options.loadId, 'during the load');
        }
      } finally {
        await guard.release();
      }
    },
    release: () => guard.release(),
  };
}

/** Connects to a node, ends an earlier run's backends there and makes its ledger tables; why not, when that fails. */
async function prepareNode(node: ShardNode, options: PlanOptions): Promise<string | undefined> {
  let client: pg.Client;
  try {
    client = await options.connect(options.faults?.unreachableNodes === true ? { ...node, port: 1 } : node);
  } catch (error) {
    return `connecting failed (${error instanceof Error ? error.message : String(error)})`;
  }
  try {
    await options.waitForEarlierRun(client);
    await ensureNodeLedger(client, `${node.host}:${node.port}`);
    return undefined;
  } catch (error) {
    return `setting up its ledger failed (${error instanceof Error ? error.message : String(error)})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function resumeOtherWay(table: string, loadId: string | undefined): LoadError {
  return new LoadError('bad-option', `load ${loadId ?? ''} began routing ${table}'s rows to its shards; resuming it through the coordinator would load again rows a node already holds`, {
    hint: 'resume it the same way (--citus-route client or auto), or start over with --truncate',
  });
}

interface RecordedInput {
  readonly mapHash: string;
  readonly generation: string;
  /** Null in a row recorded before the spec was: such a load is not resumed routed. */
  readonly specHash: string | null;
}

async function recordedMaps(control: pg.Client, loadId: string): Promise<Map<string, RecordedInput>> {
  const exists = await control.query<{ ok: boolean }>(`SELECT to_regclass('${LEDGER_SCHEMA}.routed_files') IS NOT NULL AS ok`);
  if (exists.rows[0]?.ok !== true) return new Map();
  // (to_jsonb: a routed_files made before spec_hash was has no such column until this run adds it.)
  const r = await control.query<{ file: string; map_hash: string; generation: string; spec_hash: string | null }>(
    `SELECT file, map_hash, generation, to_jsonb(r) ->> 'spec_hash' AS spec_hash FROM ${LEDGER_SCHEMA}.routed_files r WHERE load_id = $1`,
    [loadId],
  );
  return new Map(r.rows.map((row) => [row.file, { mapHash: row.map_hash, generation: row.generation, specHash: row.spec_hash }]));
}

/** The routed table, or why this input's rows go through the coordinator. */
async function whyNotRouted(control: pg.Client, target: LoadTarget, input: LedgerInput, options: PlanOptions, tableColumns: TableColumnCache): Promise<RoutedTable | string> {
  if (options.route === 'coordinator') return '--citus-route coordinator';
  // A routed chunk commits on each node apart: without the ledger's part rows a retried chunk would load its committed parts again.
  if (options.loadId === undefined) return '--no-ledger loads through the coordinator (routing to the shards needs the ledger: each node records its parts)';
  if (options.writer.name !== 'copy' || options.writer.ownsTransactions) return `--mode ${options.writer.name} loads through the coordinator`;
  if (options.writer.wire === 'binary') return '--wire binary goes through the coordinator (routed rows are sent as COPY text)';
  if (target.format === 'json' || target.format === 'parquet') return `${target.format} input is not routed yet`;
  const wire = wireFormat(target);
  if (wire.format !== 'text') return 'CSV input is not routed yet';
  const delimiter = wire.delimiter ?? '\t';
  if (Buffer.byteLength(delimiter) !== 1) return `the delimiter ${JSON.stringify(delimiter)} is not one byte`;
  const map = await readShardMap(control, input.tableOid);
  if (!isShardMap(map)) return map.reason;
  const cols = await readTableColumns(control, target.table, target.schema, tableColumns);
  // Without a column list the input's fields are COPY's columns: generated ones are not among them.
  const columns = target.columns && target.columns.length > 0 ? target.columns : copyColumns(cols).map((c) => c.name);
  const field = columns.indexOf(map.column);
  if (field < 0) return `its distribution column ${map.column} is not in the input`;
  const filled = cols.filter((c) => c.hasDefault || c.identity || c.generated);
  const defaulted = filled.filter((c) => !columns.includes(c.name)).map((c) => c.name);
  if (defaulted.length > 0) return `${defaulted.join(', ')} would be filled by defaults (evaluated by the coordinator, not by a shard)`;
  const nullMarker = wire.null ?? '\\N';
  return {
    map,
    mapHash: mapHashOf(shardMapKey(map)),
    generation: '',
    spec: { map, field, delimiter: Buffer.from(delimiter)[0]!, nullMarker: Buffer.from(nullMarker) },
    specHash: mapHashOf(JSON.stringify({ format: target.format, delimiter, nullMarker, columns, field })),
    tableName: input.tableName,
    input,
  };
}
