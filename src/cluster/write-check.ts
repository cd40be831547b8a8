import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { quoteIdent } from '../core/identifiers.js';
import type { DataDirInfo } from './data-dir.js';
import { connectLocal } from './local-connection.js';
import { runAs } from './run-as.js';

/** A catalog write and a CHECKPOINT; returns the WAL segment being written afterwards. */
export async function writeAndCheckpoint(client: pg.Client): Promise<string> {
  const table = quoteIdent(`pgsurge_wal_check_${process.pid}`);
  await client.query(`CREATE TABLE ${table} (x int)`);
  await client.query(`INSERT INTO ${table} VALUES (1)`);
  await client.query(`DROP TABLE ${table}`);
  await client.query('CHECKPOINT');
  const r = await client.query<{ segment: string }>('SELECT pg_walfile_name(pg_current_wal_lsn()) AS segment');
  return r.rows[0]!.segment;
}

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'write-check-child.js');

/**
 * `writeAndCheckpoint` on the server of a local data directory. As root, a cluster with peer
 * authentication (Debian's default) refuses root's connection as `postgres`; then the check
 * runs again in a child process as the data directory's owner, whom peer authentication maps.
 */
export async function checkLocalWrites(info: DataDirInfo, user: string | undefined, env: NodeJS.ProcessEnv): Promise<string> {
  let client: pg.Client;
  try {
    client = await connectLocal(info, user);
  } catch (error) {
    if (info.account === undefined) throw error;
    const r = await runAs(info.account, process.execPath, [CHILD, JSON.stringify({ info, user: user ?? null })], env);
    if (r.code !== 0) throw new Error(`${(error as Error).message}; and as ${info.account.name}: ${r.stderr.trim() || `exit ${r.code}`}`);
    return (JSON.parse(r.stdout) as { segment: string }).segment;
  }
  try {
    return await writeAndCheckpoint(client);
  } finally {
    await client.end();
  }
}
