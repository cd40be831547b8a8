import { createHash } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { resolveBinaries, type PgBinaries } from './binaries.js';
import { ownDir, runAs, serverAccount } from './run-as.js';
import type { ServerAccount } from './default-home.js';
import { readListen, scramVerifier, type ListenState } from './cluster-listen.js';
import pg from 'pg';

const PORT = 5432;
/** Unix socket paths are limited to ~107 bytes; leave room for `/.s.PGSQL.5432`. */
const MAX_SOCKET_DIR = 90;

export interface ManagedClusterOptions {
  /** The data directory (the CLI's `--data-dir`, by default `defaultDataDir`). */
  readonly dataDir: string;
  /** The environment the server's programs run in (`runAs`): the CLI's. */
  readonly env: NodeJS.ProcessEnv;
  /** `embedded`, `system`, or a directory of server binaries. */
  readonly pgBin?: string;
  /** Put the WAL in this directory when the cluster is created (`initdb --waldir`). */
  readonly walDir?: string;
  /**
   * The port, part of the socket's name (default 5432): several managed clusters that
   * reach each other through their socket directories (a Citus coordinator and its
   * workers in the tests) each need their own.
   */
  readonly port?: number;
}

/** Connection settings for node-postgres. */
export interface ConnectionSettings {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly database: string;
}

/**
 * A PostgreSQL cluster pgsurge creates and runs itself: `initdb` with trust authentication
 * on a private Unix socket, run as the `postgres` user when pgsurge runs as root. No TCP,
 * unless `cluster start --listen` asked for it (kept in the data directory: every start
 * then listens there too, with the password).
 */
export class ManagedCluster {
  private constructor(
    readonly dataDir: string,
    readonly binaries: PgBinaries,
    private readonly account: ServerAccount | undefined,
    private readonly walDir: string | undefined,
    readonly port: number,
    private readonly env: NodeJS.ProcessEnv,
    /** TCP as `cluster start --listen` set it: its address and port (the server's one port), and the password. */
    readonly listen: ListenState | undefined,
  ) {}

  static async open(options: ManagedClusterOptions): Promise<ManagedCluster> {
    const dataDir = path.resolve(options.dataDir);
    const binaries = await resolveBinaries(options.pgBin);
    // a port given (a Citus test's nodes) is that port, on the socket only
    const listen = options.port === undefined ? await readListen(dataDir) : undefined;
    return new ManagedCluster(dataDir, binaries, serverAccount(), options.walDir ? path.resolve(options.walDir) : undefined, options.port ?? listen?.port ?? PORT, options.env, listen);
  }

  get socketDir(): string {
    const inside = path.join(this.dataDir, 'socket');
    if (inside.length <= MAX_SOCKET_DIR) return inside;
    const hash = createHash('sha1').update(this.dataDir).digest('hex').slice(0, 12);
    return path.join('/tmp', `pgsurge-${hash}`);
  }

  get logFile(): string {
    return path.join(this.dataDir, 'server.log');
  }

  connection(database = 'postgres'): ConnectionSettings {
    return { host: this.socketDir, port: this.port, user: 'postgres', database };
  }

  /** A libpq URL for psql and friends: `psql "$(pgsurge cluster url)"`. */
  url(database = 'postgres'): string {
    return `postgresql://postgres@/${encodeURIComponent(database)}?host=${encodeURIComponent(this.socketDir)}&port=${this.port}`;
  }

  isInitialized(): boolean {
    return existsSync(path.join(this.dataDir, 'PG_VERSION'));
  }

  async dataVersion(): Promise<number | undefined> {
    try {
      return Number((await fs.readFile(path.join(this.dataDir, 'PG_VERSION'), 'utf8')).trim());
    } catch {
      return undefined;
    }
  }

  async isRunning(): Promise<boolean> {
    if (!this.isInitialized()) return false;
    const r = await runAs(this.account, this.binaries.pgCtl, ['status', '-D', this.dataDir], this.env);
    return r.code === 0;
  }

  /** `initdb`: UTF-8, C locale, trust on the private socket only, WAL where asked. */
  async init(): Promise<void> {
    if (this.isInitialized()) return;
    const existing = await fs.readdir(this.dataDir).catch(() => [] as string[]);
    if (existing.length > 0) {
      throw new Error(`${this.dataDir} exists and is not empty, but is not a PostgreSQL data directory: choose another --data-dir`);
    }
    await ownDir(this.dataDir, this.account);
    const args = ['-D', this.dataDir, '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--auth-local=trust', '--auth-host=reject', '--no-instructions'];
    if (this.walDir) {
      const walEntries = await fs.readdir(this.walDir).catch(() => [] as string[]);
      if (walEntries.length > 0) throw new Error(`--wal-dir ${this.walDir} is not empty: name an empty or new directory`);
      await ownDir(this.walDir, this.account);
      args.push('--waldir', this.walDir);
    }
    const r = await runAs(this.account, this.binaries.initdb, args, this.env);
    if (r.code !== 0) throw new Error(`initdb failed (${this.binaries.initdb}):\n${r.stderr.trim() || r.stdout.trim()}`);
    await fs.appendFile(
      path.join(this.dataDir, 'postgresql.conf'),
      `\n# pgsurge managed cluster: reachable only through its private Unix socket\nlisten_addresses = ''\nport = ${this.port}\n`,
    );
  }

  /**
   * Starts the server (creating the cluster first if needed) with extra `-c` settings.
   * Returns false when it was already running.
   */
  async start(settings: Readonly<Record<string, string>> = {}): Promise<boolean> {
    await this.init();
    const dataVersion = await this.dataVersion();
    if (dataVersion !== undefined && dataVersion !== this.binaries.majorVersion) {
      throw new Error(
        `${this.dataDir} holds a PostgreSQL ${dataVersion} cluster but the binaries are ${this.binaries.version} (${this.binaries.source}): use --pg-bin for version ${dataVersion}, or another --data-dir`,
      );
    }
    if (await this.isRunning()) return false;
    await ownDir(this.socketDir, this.account);
    const all = this.listen ? { ...settings, listen_addresses: this.listen.host, port: String(this.port) } : settings;
    const options = [`-k ${shellQuote(this.socketDir)}`, ...Object.entries(all).map(([k, v]) => `-c ${k}=${shellQuote(v)}`)].join(' ');
    const r = await runAs(this.account, this.binaries.pgCtl, ['start', '-D', this.dataDir, '-l', this.logFile, '-w', '-t', '120', '-o', options], this.env);
    if (r.code !== 0) {
      const log = await fs.readFile(this.logFile, 'utf8').catch(() => '');
      const tail = log.trim().split('\n').slice(-5).join('\n');
      throw new Error(`the managed PostgreSQL in ${this.dataDir} did not start:\n${(r.stderr || r.stdout).trim()}\n${tail}`);
    }
    return true;
  }

  /**
   * Gives the `postgres` role the listen password, as its SCRAM verifier (the password
   * itself never reaches the server), through the socket.
   */
  async setListenPassword(): Promise<void> {
    if (!this.listen) return;
    const client = new pg.Client({ ...this.connection(), application_name: 'pgsurge cluster' });
    await client.connect();
    try {
      // a verifier is base64, digits, `$` and `:`: nothing to escape, and ALTER ROLE takes no parameters
      await client.query(`ALTER ROLE postgres PASSWORD '${scramVerifier(this.listen.password).replace(/'/g, "''")}'`);
    } finally {
      await client.end();
    }
  }

  /** Stops the server cleanly (`-m fast`: sessions rolled back, a shutdown checkpoint). */
  async stop(): Promise<boolean> {
    if (!(await this.isRunning())) return false;
    const r = await runAs(this.account, this.binaries.pgCtl, ['stop', '-D', this.dataDir, '-m', 'fast', '-w', '-t', '120'], this.env);
    if (r.code !== 0) throw new Error(`pg_ctl stop failed: ${(r.stderr || r.stdout).trim()}`);
    return true;
  }

  /** `pg_ctl restart`, e.g. `-m immediate` to simulate a crash. */
  async restart(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    const r = await runAs(this.account, this.binaries.pgCtl, ['restart', '-D', this.dataDir, '-m', mode, '-w', '-t', '120', '-l', this.logFile], this.env);
    if (r.code !== 0) throw new Error(`pg_ctl restart failed: ${(r.stderr || r.stdout).trim()}`);
  }
}

function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:=-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
