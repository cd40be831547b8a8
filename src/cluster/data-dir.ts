import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { resolveBinaries, systemBinDirs, type PgBinaries } from './binaries.js';
import { currentUid, runAs } from './run-as.js';
import type { ServerAccount } from './default-home.js';

/**
 * Any local PostgreSQL data directory (the managed cluster or one the user runs), seen from
 * the files in it: its version, its owner, whether a server runs on it and how it was started.
 */
export interface DataDirInfo {
  readonly dataDir: string;
  /** Major version from `PG_VERSION`. */
  readonly version: number;
  /** The account owning the data directory; the server runs as it. Undefined when that is us. */
  readonly account: ServerAccount | undefined;
  readonly ownerUid: number;
  readonly ownerGid: number;
  readonly ownerName: string;
}

export async function inspectDataDir(dir: string): Promise<DataDirInfo> {
  const dataDir = path.resolve(dir);
  let versionText: string;
  try {
    versionText = await fs.readFile(path.join(dataDir, 'PG_VERSION'), 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new Error(`${dataDir} is not a PostgreSQL data directory (no PG_VERSION file)`);
    throw new Error(`cannot read ${dataDir}/PG_VERSION: ${(error as Error).message}`);
  }
  const version = Number(versionText.trim());
  const st = await fs.stat(dataDir);
  const me = currentUid();
  if (me !== 0 && st.uid !== me) {
    throw new Error(`${dataDir} belongs to uid ${st.uid}, not to you: run pgsurge as that user (or as root)`);
  }
  const ownerName = userName(st.uid);
  const account = st.uid === me ? undefined : { uid: st.uid, gid: st.gid, name: ownerName };
  return { dataDir, version, account, ownerUid: st.uid, ownerGid: st.gid, ownerName };
}

function userName(uid: number): string {
  try {
    return execFileSync('id', ['-nu', String(uid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return String(uid);
  }
}

/** `--pg-bin`, else the installation (embedded or the machine's) whose major version matches `PG_VERSION`. */
export async function binariesForDataDir(info: DataDirInfo, choice?: string): Promise<PgBinaries> {
  if (choice !== undefined) {
    const bin = await resolveBinaries(choice);
    if (bin.majorVersion !== info.version) {
      throw new Error(`${info.dataDir} holds a PostgreSQL ${info.version} cluster but --pg-bin ${choice} is ${bin.version}: name the binaries of version ${info.version}`);
    }
    return bin;
  }
  const tried: string[] = [];
  for (const candidate of ['embedded', ...systemBinDirs()]) {
    try {
      const bin = await resolveBinaries(candidate);
      if (bin.majorVersion === info.version) return bin;
      tried.push(`${bin.version} (${bin.source})`);
    } catch {
      // not installed: try the next
    }
  }
  throw new Error(
    `no PostgreSQL ${info.version} binaries found for ${info.dataDir} (found: ${tried.join(', ') || 'none'}): pass --pg-bin <the bin directory of version ${info.version}>`,
  );
}

/** What `postmaster.pid` says about a running server: where to reach it. */
export interface PostmasterPid {
  readonly pid: number;
  readonly port: number;
  /** The first Unix socket directory, if any. */
  readonly socketDir: string | undefined;
  /** Start time, seconds since the epoch. */
  readonly startedAt: number;
}

export async function readPostmasterPid(dataDir: string): Promise<PostmasterPid | undefined> {
  let text: string;
  try {
    text = await fs.readFile(path.join(dataDir, 'postmaster.pid'), 'utf8');
  } catch {
    return undefined;
  }
  const lines = text.split('\n');
  const socketDir = lines[4]?.trim();
  return { pid: Number(lines[0]), startedAt: Number(lines[2]), port: Number(lines[3]), socketDir: socketDir ? socketDir : undefined };
}

/**
 * The server's command line from its last start (`postmaster.opts`, written by the server):
 * the arguments after the program, `-D <dir>` left out. pg_ctl's own `restart` reuses them;
 * so do we, so that a cluster configured on its command line (Debian's `-c config_file=…`,
 * the test runner's `-c fsync=off`) comes back as it was.
 */
export async function readPostmasterOpts(dataDir: string): Promise<string[] | undefined> {
  let text: string;
  try {
    text = await fs.readFile(path.join(dataDir, 'postmaster.opts'), 'utf8');
  } catch {
    return undefined;
  }
  const args = [...text.matchAll(/"([^"]*)"/g)].map((m) => m[1]!);
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '-D') i++;
    else if (!args[i]!.startsWith('-D')) out.push(args[i]!);
  }
  return out;
}

/** The `-c name=value` settings in a server command line, later ones winning. */
export function settingsFromArgs(args: readonly string[]): Record<string, string> {
  const settings: Record<string, string> = {};
  const put = (kv: string): void => {
    const eq = kv.indexOf('=');
    if (eq > 0) settings[kv.slice(0, eq).replace(/-/g, '_')] = kv.slice(eq + 1);
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-c' && i + 1 < args.length) put(args[++i]!);
    else if (a.startsWith('-c') && a.length > 2) put(a.slice(2));
    else if (a.startsWith('--') && a.includes('=')) put(a.slice(2));
  }
  return settings;
}

export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:=,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** pg_ctl on any data directory, as its owner. */
export class ServerControl {
  constructor(
    readonly info: DataDirInfo,
    readonly binaries: PgBinaries,
    /** The environment pg_ctl runs in (`runAs`): the CLI's. */
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  get logFile(): string {
    return path.join(this.info.dataDir, 'server.log');
  }

  async isRunning(): Promise<boolean> {
    const r = await runAs(this.info.account, this.binaries.pgCtl, ['status', '-D', this.info.dataDir], this.env);
    return r.code === 0;
  }

  /** Clean shutdown: sessions rolled back, a shutdown checkpoint written. */
  async stop(): Promise<void> {
    const r = await runAs(this.info.account, this.binaries.pgCtl, ['stop', '-D', this.info.dataDir, '-m', 'fast', '-w', '-t', '120'], this.env);
    if (r.code !== 0) throw new Error(`pg_ctl stop failed: ${(r.stderr || r.stdout).trim()}`);
  }

  /** Starts the server with the given command-line arguments (as `postmaster.opts` holds them). */
  async start(args: readonly string[]): Promise<void> {
    const r = await runAs(this.info.account, this.binaries.pgCtl, [
      'start',
      '-D',
      this.info.dataDir,
      '-l',
      this.logFile,
      '-w',
      '-t',
      '120',
      ...(args.length > 0 ? ['-o', args.map(shellQuote).join(' ')] : []),
      ],
      this.env,
    );
    if (r.code !== 0) {
      const log = await fs.readFile(this.logFile, 'utf8').catch(() => '');
      const tail = log.trim().split('\n').slice(-4).join('\n');
      throw new Error(`the server on ${this.info.dataDir} did not start: ${(r.stderr || r.stdout).trim()}${tail ? `\n${tail}` : ''}`);
    }
  }
}
