import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { binariesForDataDir, inspectDataDir, readPostmasterPid } from './data-dir.js';
import { directorySize, filesystemInfo, type FilesystemInfo } from './filesystem-info.js';
import { connectLocal } from './local-connection.js';
import { runAs } from './run-as.js';

/** The settings that decide what the WAL costs and what a crash can lose. */
export const WAL_SETTINGS = ['wal_level', 'synchronous_commit', 'fsync', 'full_page_writes', 'max_wal_size', 'wal_compression'] as const;

export interface WalWhere {
  /** The data directory, when known (local, or `SHOW data_directory` on the server). */
  readonly dataDir: string | undefined;
  /** Where the WAL really is (pg_wal with its symlink followed), when it can be seen from here. */
  readonly walDir: string | undefined;
  /** `pg_wal` is a symlink (the WAL was put elsewhere). */
  readonly walIsSymlink: boolean | undefined;
  readonly walFilesystem: FilesystemInfo | undefined;
  readonly dataFilesystem: FilesystemInfo | undefined;
  /** WAL and data on different filesystems (`stat().dev` differs). */
  readonly separate: boolean | undefined;
  readonly walBytes: number | undefined;
  readonly walFiles: number | undefined;
  /** Setting → value; empty when they could not be read. */
  readonly settings: Readonly<Record<string, string>>;
  /** Where the settings came from: the running server, or the configuration files. */
  readonly settingsSource: string;
  /** What could not be seen, and why. */
  readonly notes: readonly string[];
}

/** From a local data directory: the files, and the settings from the running server or, stopped, from `postgres -C`. */
/** `options.env`: the environment `postgres -C` runs in (the CLI's). */
export async function walWhereForDataDir(dataDir: string, options: { pgBin?: string; user?: string; env: NodeJS.ProcessEnv }): Promise<WalWhere> {
  const info = await inspectDataDir(dataDir);
  const notes: string[] = [];
  const local = await localFacts(info.dataDir);
  let settings: Record<string, string> = {};
  let settingsSource = 'not read';
  const pid = await readPostmasterPid(info.dataDir);
  if (pid !== undefined) {
    try {
      const client = await connectLocal(info, options.user);
      try {
        settings = await showSettings(client);
        settingsSource = 'the running server';
      } finally {
        await client.end();
      }
    } catch (error) {
      notes.push(`settings not read from the server: ${(error as Error).message}`);
    }
  }
  if (settingsSource === 'not read') {
    try {
      const bin = await binariesForDataDir(info, options.pgBin);
      for (const name of WAL_SETTINGS) {
        const r = await runAs(info.account, bin.postgres, ['-D', info.dataDir, '-C', name], options.env);
        if (r.code === 0) settings[name] = r.stdout.trim();
      }
      settingsSource = 'the configuration files (postgres -C; the server is not running, or could not be asked)';
    } catch (error) {
      notes.push(`settings not read: ${(error as Error).message}`);
    }
  }
  return { ...local, dataDir: info.dataDir, settings, settingsSource, notes: [...local.notes, ...notes] };
}

/**
 * From a connection: `SHOW data_directory` and the size from `pg_ls_waldir()`; the disk only
 * when the data directory is on this machine and belongs to that very server.
 */
export async function walWhereForServer(client: pg.Client): Promise<WalWhere> {
  const notes: string[] = [];
  const settings = await showSettings(client);
  let dataDir: string | undefined;
  try {
    dataDir = (await client.query<{ d: string }>("SELECT current_setting('data_directory') AS d")).rows[0]?.d;
  } catch (error) {
    notes.push(`data directory not shown (${(error as Error).message}): needs superuser or pg_read_all_settings`);
  }
  let walBytes: number | undefined;
  let walFiles: number | undefined;
  try {
    const r = await client.query<{ bytes: string | null; files: string }>('SELECT sum(size)::text AS bytes, count(*)::text AS files FROM pg_ls_waldir()');
    walBytes = Number(r.rows[0]?.bytes ?? 0);
    walFiles = Number(r.rows[0]?.files ?? 0);
  } catch (error) {
    notes.push(`WAL size not shown (${(error as Error).message}): pg_ls_waldir() needs superuser or pg_monitor`);
  }
  const empty = { dataDir, walDir: undefined, walIsSymlink: undefined, walFilesystem: undefined, dataFilesystem: undefined, separate: undefined, walBytes, walFiles };
  if (dataDir === undefined || !(await isSameServer(client, dataDir))) {
    if (dataDir !== undefined) notes.push(`the server's data directory ${dataDir} is not readable on this machine (a remote server, or not yours): where its WAL is on disk cannot be seen from here; run \`pgsurge wal where --data-dir\` on the server`);
    return { ...empty, settings, settingsSource: 'the server', notes };
  }
  const local = await localFacts(dataDir);
  return { ...local, dataDir, walBytes, walFiles, settings, settingsSource: 'the server', notes: [...notes, ...local.notes] };
}

/** The data directory on this machine is the one the connected server runs on: same port and start time in postmaster.pid. */
async function isSameServer(client: pg.Client, dataDir: string): Promise<boolean> {
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) return false;
  const pid = await readPostmasterPid(dataDir).catch(() => undefined);
  if (pid === undefined) return false;
  const r = await client.query<{ port: string; started: string }>(
    "SELECT current_setting('port') AS port, extract(epoch FROM date_trunc('second', pg_postmaster_start_time()))::bigint::text AS started",
  );
  const row = r.rows[0];
  return row !== undefined && Number(row.port) === pid.port && Math.abs(Number(row.started) - pid.startedAt) <= 1;
}

async function localFacts(dataDir: string): Promise<Omit<WalWhere, 'settings' | 'settingsSource' | 'dataDir'>> {
  const walLink = path.join(dataDir, 'pg_wal');
  const st = await fs.lstat(walLink).catch(() => undefined);
  if (st === undefined) {
    return { walDir: undefined, walIsSymlink: undefined, walFilesystem: undefined, dataFilesystem: undefined, separate: undefined, walBytes: undefined, walFiles: undefined, notes: [`${dataDir} has no pg_wal (PostgreSQL 9.6 or older calls it pg_xlog)`] };
  }
  const walFilesystem = await filesystemInfo(walLink);
  const dataFilesystem = await filesystemInfo(dataDir);
  const size = await directorySize(walFilesystem.realPath);
  return {
    walDir: walFilesystem.realPath,
    walIsSymlink: st.isSymbolicLink(),
    walFilesystem,
    dataFilesystem,
    separate: walFilesystem.dev !== dataFilesystem.dev,
    walBytes: size.bytes,
    walFiles: size.files,
    notes: [],
  };
}

async function showSettings(client: pg.Client): Promise<Record<string, string>> {
  const r = await client.query<{ name: string; setting: string }>(
    'SELECT name, current_setting(name) AS setting FROM unnest($1::text[]) AS name',
    [WAL_SETTINGS as unknown as string[]],
  );
  return Object.fromEntries(r.rows.map((row) => [row.name, row.setting]));
}
