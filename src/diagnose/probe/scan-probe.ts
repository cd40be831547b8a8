import type pg from 'pg';
import type { ScanFigures } from './probe-store.js';

/** The scan table's name: the backend's own (two probes of one server at once would drop each other's table). */
export const SCAN_TABLE_PREFIX = 'pgsurge_probe_scan_';

/**
 * One backend's scan rate: a generated table of about `bytes` (narrow rows, unlogged so
 * making it writes no WAL), `SELECT count(*)` twice with parallel workers off, the
 * second scan kept. The table was just written, so it is in the page cache: the rate is
 * the backend's CPU reading tuples, as in the seeds' hand-made measurement. Dropped after.
 */
export async function probeScan(client: pg.Client, bytes: number): Promise<ScanFigures> {
  // ~64 bytes a row on disk: 24-byte tuple header + line pointer, bigint, integer, a short text
  const rows = Math.max(1000, Math.round(bytes / 64));
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const SCAN_TABLE = `${SCAN_TABLE_PREFIX}${pid}`;
  await client.query(`DROP TABLE IF EXISTS ${SCAN_TABLE}`);
  try {
    await client.query(`CREATE UNLOGGED TABLE ${SCAN_TABLE} (id bigint, n integer, s text)`);
    await client.query(`INSERT INTO ${SCAN_TABLE} SELECT g, g % 1000, 'pgsurge probe ' || g FROM generate_series(1, $1::bigint) g`, [rows]);
    await client.query(`VACUUM (FREEZE) ${SCAN_TABLE}`); // set hint bits now, so the scans do not write
    const size = Number((await client.query<{ b: string }>(`SELECT pg_relation_size('${SCAN_TABLE}')::text AS b`)).rows[0]?.b ?? 0);
    await client.query('SET max_parallel_workers_per_gather = 0');
    const scan = async (): Promise<number> => {
      const start = performance.now();
      await client.query(`SELECT count(*) FROM ${SCAN_TABLE}`);
      return (performance.now() - start) / 1000;
    };
    await scan();
    const seconds = await scan();
    return {
      tableBytes: size,
      seconds,
      mbPerSecond: size / (1024 * 1024) / seconds,
      note: 'second of two scans, one backend (max_parallel_workers_per_gather = 0), table just written and frozen: in the page cache, so this is the backend\'s CPU',
    };
  } finally {
    await client.query(`DROP TABLE IF EXISTS ${SCAN_TABLE}`).catch(() => undefined);
    await client.query('RESET max_parallel_workers_per_gather').catch(() => undefined);
  }
}
