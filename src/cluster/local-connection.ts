import type pg from 'pg';
import { connect } from './target.js';
import { readPostmasterPid, type DataDirInfo } from './data-dir.js';

/**
 * Connects to the server running on a local data directory through its Unix socket (from
 * `postmaster.pid`), trying the database users a local cluster usually has: `--user` when
 * given, else `postgres`, then the data directory's owner (initdb's default superuser).
 */
export async function connectLocal(info: DataDirInfo, user?: string): Promise<pg.Client> {
  const pid = await readPostmasterPid(info.dataDir);
  if (pid === undefined) throw new Error(`no server runs on ${info.dataDir} (no postmaster.pid)`);
  if (pid.socketDir === undefined) throw new Error(`the server on ${info.dataDir} listens on no Unix socket: cannot reach it locally`);
  const users = user !== undefined ? [user] : [...new Set(['postgres', info.ownerName])];
  let lastError: unknown;
  for (const u of users) {
    try {
      return await connect({ host: pid.socketDir, port: pid.port, user: u, database: 'postgres' });
    } catch (error) {
      lastError = error;
    }
  }
  throw new Error(
    `cannot connect to the server on ${info.dataDir} through ${pid.socketDir} as ${users.join(' or ')}: ${(lastError as Error).message} (pass --user, or allow local connections in pg_hba.conf)`,
  );
}
