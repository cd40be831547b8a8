/**
 * `pgsurge dbt3 refresh <dir> --set K`: TPC-H's refresh functions on a database `dbt3 load`
 * loaded. RF1 is pgsurge's own load of `orders.tbl.uK` into orders and `lineitem.tbl.uK`
 * into lineitem (parallel COPY, the ledger, the reporter's decay curve); RF2 deletes the
 * lineitems and orders whose keys `delete.K` lists, in one transaction, from a staged key
 * table (DELETE … USING). Each runs exactly once on an orders table: RF1's chunks are in
 * the ledger under the set's load ids, RF2 writes its ledger row in its own transaction,
 * so a rerun of a set finds both done and changes nothing.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type pg from 'pg';
import type { LoadTarget } from '../core/chunk.js';
import { qualifiedName } from '../core/identifiers.js';
import { connectionFailure, LoadError } from '../core/load-error.js';
import { connect, type Target } from '../cluster/target.js';
import { load } from '../load/load.js';
import type { LoadOptions } from '../load/load-options.js';
import type { LoadReporter, LoadSummary } from '../metrics/load-counters.js';
import { ensureLedger, LEDGER_SCHEMA } from '../writer/ledger/ledger.js';
import { mergeSummaries } from './merge-summaries.js';

export interface RefreshOptions extends Omit<LoadOptions, 'create' | 'truncate' | 'loadId' | 'resume' | 'part'> {
  readonly set: number;
  readonly schema?: string;
}

export interface RefreshResult {
  readonly set: number;
  /** RF1: the load's summary (0 rows when an earlier run loaded the set). */
  readonly rf1: { readonly seconds: number; readonly summary: LoadSummary };
  /** RF2: rows deleted; `earlier`: an earlier run deleted them (nothing done now). */
  readonly rf2: { readonly seconds: number; readonly keys: number; readonly orders: number; readonly lineitem: number; readonly earlier: boolean };
}

/** The files of refresh set `set` in `dir`, as dbgen names them. */
export function refreshFiles(dir: string, set: number): { orders: string; lineitem: string; deletes: string } {
  return { orders: path.join(dir, `orders.tbl.u${set}`), lineitem: path.join(dir, `lineitem.tbl.u${set}`), deletes: path.join(dir, `delete.${set}`) };
}

/**
 * The ledger's load id of a set's function on one orders table (its oid: a database that
 * holds DBT-3 in two schemas, or reloads it with `dbt3 load --replace`, refreshes each anew);
 * RF1's loads add the table: `dbt3-refresh-1-16384-rf1-orders`.
 */
export function refreshLoadId(set: number, ordersOid: number, fn: 'rf1' | 'rf2'): string {
  return `dbt3-refresh-${set}-${ordersOid}-${fn}`;
}

async function requireFile(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch {
    throw new LoadError('missing-file', `${file} is missing`, { hint: 'write the refresh sets with `pgsurge dbt3 gen --scale <sf> --refresh <n> --out <dir>` (or dbgen -U <n>)' });
  }
}

/** `delete.K`'s keys: one a line, dbgen's trailing `|` dropped. */
export async function readDeleteKeys(file: string): Promise<string[]> {
  const keys: string[] = [];
  for (const [i, line] of (await readFile(file, 'latin1')).split('\n').entries()) {
    const key = line.replace(/\|?\r?$/, '');
    if (key === '') continue;
    if (!/^\d+$/.test(key)) throw new LoadError('bad-input', `${file}, line ${i + 1}: expected an order key, got ${JSON.stringify(line)}`);
    keys.push(key);
  }
  return keys;
}

/**
 * RF2: the orders of `delete.K` and their lineitems deleted in one transaction, with the
 * ledger row that says so; nothing when the ledger has that row already. The one place the
 * delete happens, so a `pgsurge delete` of the same keys can take its place.
 */
async function deleteOrders(client: pg.Client, file: string, bytes: number, loadId: string, schema: string | undefined): Promise<RefreshResult['rf2']> {
  const started = performance.now();
  const keys = await readDeleteKeys(file);
  const orders = qualifiedName('orders', schema);
  const lineitem = qualifiedName('lineitem', schema);
  await ensureLedger(client);
  await client.query('BEGIN');
  try {
    // two runs of one set at once: the second waits here, then finds the first one's row
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [loadId]);
    const earlier = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${LEDGER_SCHEMA}.chunks WHERE load_id = $1`, [loadId]);
    if (Number(earlier.rows[0]!.n) > 0) {
      await client.query('ROLLBACK');
      return { seconds: (performance.now() - started) / 1000, keys: keys.length, orders: 0, lineitem: 0, earlier: true };
    }
    await client.query('CREATE TEMPORARY TABLE pgsurge_refresh_keys (orderkey bigint PRIMARY KEY) ON COMMIT DROP');
    await client.query('INSERT INTO pgsurge_refresh_keys SELECT DISTINCT unnest($1::bigint[])', [keys]);
    const l = await client.query(`DELETE FROM ${lineitem} USING pgsurge_refresh_keys k WHERE l_orderkey = k.orderkey`);
    const o = await client.query(`DELETE FROM ${orders} USING pgsurge_refresh_keys k WHERE o_orderkey = k.orderkey`);
    const deleted = o.rowCount ?? 0;
    await client.query(
      `INSERT INTO ${LEDGER_SCHEMA}.chunks (load_id, file, table_name, table_oid, byte_start, byte_end, rows_loaded, rows_rejected, rows_skipped, table_filenode)
       VALUES ($1, $2, $3, $4::regclass, 0, $5, $6, 0, $7, pg_relation_filenode($4::regclass))`,
      [loadId, path.resolve(file), 'orders', orders, bytes, deleted, keys.length - deleted],
    );
    await client.query('COMMIT');
    return { seconds: (performance.now() - started) / 1000, keys: keys.length, orders: deleted, lineitem: l.rowCount ?? 0, earlier: false };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * RF1 then RF2 of one set. RF1 loads orders, then lineitem (a lineitem's foreign key needs
 * its order in first), each a load of its own under one watcher, as `dbt3 load` does.
 */
export async function refreshDbt3(dir: string, options: RefreshOptions, target: Target, reporter: LoadReporter = {}): Promise<RefreshResult> {
  const files = refreshFiles(dir, options.set);
  // One at a time, in the set's order: the first file missing is the one named, every time.
  const sizes: number[] = [];
  for (const file of [files.orders, files.lineitem, files.deletes]) sizes.push(await requireFile(file));
  const { set, schema, ...loadOptions } = options;
  const client = await connect(target.config).catch((error: unknown) => {
    throw connectionFailure(error, target.description);
  });
  try {
    const ordersOid = await tableOid(client, qualifiedName('orders', schema));
    const inputs: LoadTarget[] = (['orders', 'lineitem'] as const).map((table) => ({ file: files[table], table, schema, format: 'tbl' }));
    const rf1Id = refreshLoadId(set, ordersOid, 'rf1');
    await reporter.start?.({ inputs, totalBytes: sizes[0]! + sizes[1]!, workers: options.workers, target: target.description, loadId: rf1Id, resumed: false });
    const each: LoadReporter = {
      start: (info) => {
        if (info.workerPrefix !== undefined) reporter.workersNamed?.(info.workerPrefix);
      },
      chunkLoaded: (info) => reporter.chunkLoaded?.(info),
      note: (m) => reporter.note?.(m),
      warning: (m) => reporter.warning?.(m),
      retrying: (i) => reporter.retrying?.(i),
    };
    const started = performance.now();
    const summaries: LoadSummary[] = [];
    for (const input of inputs) {
      summaries.push(await load([input], { ...loadOptions, create: false, truncate: false, loadId: `${rf1Id}-${input.table}` }, target, each));
    }
    const seconds = (performance.now() - started) / 1000;
    const rf1 = { seconds, summary: mergeSummaries(summaries, options.workers, target.description, seconds) };
    const rf2 = await deleteOrders(client, files.deletes, sizes[2]!, refreshLoadId(set, ordersOid, 'rf2'), schema);
    return { set, rf1, rf2 };
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function tableOid(client: pg.Client, qualified: string): Promise<number> {
  const r = await client.query<{ oid: number | null }>('SELECT to_regclass($1)::oid AS oid', [qualified]);
  const oid = r.rows[0]?.oid;
  if (oid === null || oid === undefined) throw new LoadError('missing-table', `${qualified} does not exist`, { hint: 'load the DBT-3 tables first: pgsurge dbt3 load <dir>' });
  return Number(oid);
}
