import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { binariesForDataDir, inspectDataDir, readPostmasterOpts, ServerControl, type DataDirInfo } from './data-dir.js';
import { checkLocalWrites } from './write-check.js';

/** Steps a test can make fail, to see the roll-back (`PGSURGE_TEST_INJECT_FAILURE=wal-move:<step>`). */
export const WAL_MOVE_FAILURE_POINTS = ['copy', 'start'] as const;
export type WalMoveFailurePoint = (typeof WAL_MOVE_FAILURE_POINTS)[number];

export interface WalMoveOptions {
  readonly dataDir: string;
  /** The new WAL directory: must not exist yet, or be empty. */
  readonly to: string;
  /** `embedded`, `system` or a bin directory; default: the binaries matching `PG_VERSION`. */
  readonly pgBin?: string;
  /** Stop a running server cleanly, move, start it again. Without it a running server is refused. */
  readonly restart: boolean;
  /** Database user for the check after the move (default: postgres, then the data directory's owner). */
  readonly user?: string;
  /** Progress lines (the CLI prints them). */
  readonly log?: (line: string) => void;
  /** Tests only. */
  readonly injectFailure?: WalMoveFailurePoint;
  /** The environment the server's programs run in (`runAs`): the CLI's. */
  readonly env: NodeJS.ProcessEnv;
}

export interface WalMoveResult {
  readonly dataDir: string;
  readonly from: string;
  readonly to: string;
  readonly bytes: number;
  readonly files: number;
  /** The target shares a filesystem with the data directory: the move gains nothing. */
  readonly sameFilesystem: boolean;
  readonly wasRunning: boolean;
  /** The WAL segment the server wrote to after the move, found in the new directory. */
  readonly checkedSegment: string;
  readonly seconds: number;
}

/** A failed move; `rolledBack` says whether everything was put back as it was. */
export class WalMoveError extends Error {
  constructor(
    message: string,
    readonly rolledBack: boolean,
  ) {
    super(message);
    this.name = 'WalMoveError';
  }
}

/**
 * Moves a cluster's WAL (`pg_wal`) to another directory and leaves a symlink in its place,
 * the way a DBA does it by hand, with a check and a way back: stop the server (only with
 * `restart`), copy and fsync the WAL, swap in the symlink (a temp name renamed over), start,
 * write a row and CHECKPOINT, check the segment written is in the new place. Any failure
 * puts the old directory back (with whatever WAL the server wrote meanwhile) and the server
 * in the state it was found in.
 */
export async function moveWal(options: WalMoveOptions): Promise<WalMoveResult> {
  const started = performance.now();
  const log = options.log ?? (() => {});
  const info = await inspectDataDir(options.dataDir);
  if (info.version < 10) {
    throw new WalMoveError(`${info.dataDir} is PostgreSQL ${info.version}: its WAL is in pg_xlog, and wal move handles PostgreSQL 10 and later`, true);
  }
  const binaries = await binariesForDataDir(info, options.pgBin);
  const ctl = new ServerControl(info, binaries, options.env);
  const walLink = path.join(info.dataDir, 'pg_wal');
  const walStat = await fs.lstat(walLink).catch(() => undefined);
  if (walStat === undefined) throw new WalMoveError(`${info.dataDir} has no pg_wal`, true);
  const wasSymlink = walStat.isSymbolicLink();
  const from = await fs.realpath(walLink);
  const to = path.resolve(options.to);

  await checkTarget(info, from, to);

  const wasRunning = await ctl.isRunning();
  if (wasRunning && !options.restart) {
    throw new WalMoveError(`a server is running on ${info.dataDir}: add --restart to stop it cleanly, move the WAL and start it again`, true);
  }
  const sameFilesystem = (await fs.stat(existsSync(to) ? to : path.dirname(to))).dev === (await fs.stat(info.dataDir)).dev;
  if (sameFilesystem) log(`warning: ${to} is on the same filesystem as ${info.dataDir}: WAL and data still share the disk(s), so the move gains nothing`);
  const opts = (await readPostmasterOpts(info.dataDir)) ?? [];

  const oldDirName = path.join(info.dataDir, `pg_wal.pgsurge-old-${process.pid}`);
  const tempLink = path.join(info.dataDir, `pg_wal.pgsurge-new-${process.pid}`);
  /** Where the old WAL is while the move is in flight. */
  let oldNow = from;
  const undo: (() => Promise<void>)[] = [];
  let startAttempted = false;
  let copied = { bytes: 0, files: 0 };
  let checkedSegment = '';
  try {
    if (wasRunning) {
      log(`stopping the server on ${info.dataDir} (fast shutdown, with a checkpoint)`);
      await ctl.stop();
    }

    const created = !existsSync(to);
    if (created) await fs.mkdir(to, { mode: 0o700 });
    undo.push(async () => {
      await emptyDir(to);
      if (created) await fs.rmdir(to);
    });
    await fs.chmod(to, 0o700);
    if (info.account) await fs.chown(to, info.ownerUid, info.ownerGid);

    log(`copying ${from} to ${to}`);
    copied = await copyTree(from, to, info, options.injectFailure === 'copy');
    await fsyncTree(to);
    await fsyncDir(path.dirname(to));

    if (!wasSymlink) {
      await fs.rename(walLink, oldDirName);
      oldNow = oldDirName;
      undo.push(async () => {
        await fs.rm(walLink, { force: true });
        await fs.rename(oldDirName, walLink);
      });
    } else {
      undo.push(async () => {
        await fs.rm(tempLink, { force: true });
        await fs.symlink(from, tempLink);
        if (info.account) await fs.lchown(tempLink, info.ownerUid, info.ownerGid);
        await fs.rename(tempLink, walLink);
      });
    }
    await fs.rm(tempLink, { force: true });
    await fs.symlink(to, tempLink);
    if (info.account) await fs.lchown(tempLink, info.ownerUid, info.ownerGid);
    await fs.rename(tempLink, walLink);
    await fsyncDir(info.dataDir);

    log('starting the server on the new WAL directory');
    startAttempted = true;
    // An invalid setting makes the postmaster refuse to start: a real failed start, for the tests.
    await ctl.start(options.injectFailure === 'start' ? [...opts, '-c', 'shared_buffers=0'] : opts);
    checkedSegment = await checkWrites(info, to, options.user, options.env);
    log(`checked: a write and a CHECKPOINT went to ${path.join(to, checkedSegment)}`);
    if (!wasRunning) {
      log('stopping the server again (it was stopped before the move)');
      await ctl.stop();
    }
  } catch (error) {
    const why = (error as Error).message;
    try {
      log(`failed (${why.split('\n')[0]}); putting everything back`);
      if (await ctl.isRunning()) await ctl.stop();
      // The server may have written WAL in the new place (even a failed start can): that is
      // now the WAL the control file expects, so it goes back with the old directory.
      if (startAttempted) {
        await emptyDir(oldNow);
        await copyTree(to, oldNow, info, false);
        await fsyncTree(oldNow);
      }
      for (const step of undo.reverse()) await step();
      await fsyncDir(info.dataDir);
      if (wasRunning) await ctl.start(opts);
    } catch (rollbackError) {
      throw new WalMoveError(
        `moving the WAL failed (${why}) and putting it back failed too (${(rollbackError as Error).message}): pg_wal in ${info.dataDir} may point to ${to}; the old WAL is in ${oldNow}. Fix by hand before starting the server.`,
        false,
      );
    }
    throw new WalMoveError(`moving the WAL of ${info.dataDir} to ${to} failed: ${why}\neverything was put back: the WAL is in ${from} again${wasRunning ? ' and the server runs again' : ''}`, true);
  }

  // Only now is the old copy garbage.
  if (!wasSymlink) await fs.rm(oldDirName, { recursive: true, force: true });
  else {
    await emptyDir(from);
    // An empty directory left behind is clutter; one that is not empty (or a mount point) stays.
    await fs.rmdir(from).catch(() => undefined);
  }
  return { dataDir: info.dataDir, from, to, bytes: copied.bytes, files: copied.files, sameFilesystem, wasRunning, checkedSegment, seconds: (performance.now() - started) / 1000 };
}

/** Refuses a target that is not empty, is (inside) the data directory or the WAL, or that the server's account cannot reach. */
async function checkTarget(info: DataDirInfo, from: string, to: string): Promise<void> {
  const inside = (a: string, b: string): boolean => a === b || a.startsWith(`${b}${path.sep}`);
  if (inside(to, from) || inside(from, to)) throw new WalMoveError(`--to ${to} is the WAL directory itself (or holds it): name a new, empty directory`, true);
  if (inside(to, info.dataDir)) throw new WalMoveError(`--to ${to} is inside the data directory: name a directory elsewhere (on another disk, to gain anything)`, true);
  const st = await fs.lstat(to).catch(() => undefined);
  if (st !== undefined) {
    if (!st.isDirectory()) throw new WalMoveError(`--to ${to} exists and is not a directory`, true);
    const entries = await fs.readdir(to);
    if (entries.length > 0) throw new WalMoveError(`--to ${to} is not empty (${entries.length} entries): name an empty or new directory`, true);
  } else {
    const parent = await fs.stat(path.dirname(to)).catch(() => undefined);
    if (!parent?.isDirectory()) throw new WalMoveError(`--to ${to}: its parent directory ${path.dirname(to)} does not exist`, true);
  }
  if (info.account) {
    // The server runs as the data directory's owner: every directory above the target must let it through.
    for (let dir = path.dirname(to); ; dir = path.dirname(dir)) {
      const d = await fs.stat(dir);
      const bit = d.uid === info.ownerUid ? 0o100 : d.gid === info.ownerGid ? 0o010 : 0o001;
      if ((d.mode & bit) === 0) {
        throw new WalMoveError(`the server's account (${info.ownerName}) cannot reach ${to}: ${dir} is not searchable by it (chmod o+x ${dir}, or choose another place)`, true);
      }
      if (dir === path.dirname(dir)) break;
    }
  }
}

/**
 * Copies a directory's contents (files and subdirectories such as archive_status), with
 * modes, owned by the server's account. `failAfterFirstFile` (tests) throws once one file is
 * copied, so the roll-back has a half-written target to clean up.
 */
async function copyTree(src: string, dst: string, info: DataDirInfo, failAfterFirstFile: boolean): Promise<{ bytes: number; files: number }> {
  let bytes = 0;
  let files = 0;
  for (const entry of await fs.readdir(src, { withFileTypes: true })) {
    const s = path.join(src, entry.name);
    const d = path.join(dst, entry.name);
    const st = await fs.stat(s);
    if (entry.isDirectory()) {
      await fs.mkdir(d, { recursive: true, mode: st.mode & 0o777 });
      const sub = await copyTree(s, d, info, failAfterFirstFile);
      bytes += sub.bytes;
      files += sub.files;
    } else if (entry.isFile()) {
      await fs.copyFile(s, d);
      if (failAfterFirstFile) {
        throw Object.assign(new Error(`EACCES: permission denied, copyfile '${s}' -> '${d}' (injected by PGSURGE_TEST_INJECT_FAILURE)`), { code: 'EACCES' });
      }
      bytes += st.size;
      files += 1;
    } else continue;
    await fs.chmod(d, st.mode & 0o777);
    if (info.account) await fs.chown(d, info.ownerUid, info.ownerGid);
  }
  return { bytes, files };
}

async function fsyncTree(dir: string): Promise<void> {
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) await fsyncTree(p);
    else if (entry.isFile()) {
      const fh = await fs.open(p, 'r+');
      try {
        await fh.sync();
      } finally {
        await fh.close();
      }
    }
  }
  await fsyncDir(dir);
}

/** A directory's entries reach the disk only when the directory itself is fsynced. */
async function fsyncDir(dir: string): Promise<void> {
  const fh = await fs.open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

async function emptyDir(dir: string): Promise<void> {
  for (const name of await fs.readdir(dir).catch(() => [] as string[])) await fs.rm(path.join(dir, name), { recursive: true, force: true });
}

/** A write and a CHECKPOINT on the moved cluster; returns the segment it wrote, which must be in the new directory. */
async function checkWrites(info: DataDirInfo, walDir: string, user: string | undefined, env: NodeJS.ProcessEnv): Promise<string> {
  const segment = await checkLocalWrites(info, user, env);
  if (!existsSync(path.join(walDir, segment))) throw new Error(`the server wrote WAL segment ${segment}, but it is not in ${walDir}`);
  return segment;
}
