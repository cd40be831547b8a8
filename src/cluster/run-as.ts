import { execFileSync, spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { blockingParent, ROOT_HOME, type ServerAccount } from './default-home.js';

export function currentUid(): number {
  return process.getuid?.() ?? -1;
}

/** The account to run the server as; as root, the `postgres` user, created if missing. */
export function serverAccount(): ServerAccount | undefined {
  if (currentUid() !== 0) return undefined;
  let ids = lookup('postgres');
  if (ids === undefined) {
    try {
      execFileSync('useradd', ['--system', '--user-group', '--no-create-home', 'postgres'], { stdio: 'ignore' });
    } catch (error) {
      throw new Error(`running as root and there is no \`postgres\` user to run PostgreSQL as, and creating one failed (${(error as Error).message}): create it, or run pgsurge as a normal user`);
    }
    ids = lookup('postgres');
    if (ids === undefined) throw new Error('created the `postgres` user but cannot find its uid');
  }
  return { ...ids, name: 'postgres' };
}

function lookup(name: string): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    return { uid, gid };
  } catch {
    return undefined;
  }
}

/**
 * Makes `dir` (created if missing) belong to the server's account. Parents it creates are
 * 0755 (a recursive mkdir would make them 0700 and root's, shutting the server out), and
 * a parent the server's account cannot search is refused in one line that says what to do.
 */
export async function ownDir(dir: string, account: ServerAccount | undefined, mode = 0o700): Promise<void> {
  await fs.mkdir(path.dirname(dir), { recursive: true, mode: 0o755 });
  if (account) {
    const blocked = blockingParent(path.dirname(dir), account);
    if (blocked) {
      throw new Error(
        `the ${account.name} user (PostgreSQL runs as it, not as root) cannot reach ${dir}: ${blocked.dir} is mode ${blocked.mode.toString(8).padStart(4, '0')} of uid ${blocked.uid}; use a directory it can reach (e.g. --data-dir ${ROOT_HOME}/cluster), or chmod o+x ${blocked.dir}`,
      );
    }
  }
  await fs.mkdir(dir, { recursive: true, mode });
  await fs.chmod(dir, mode);
  if (account) await fs.chown(dir, account.uid, account.gid);
}

export interface RunResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a server binary as the server's account and collects its output. `env`: the
 * environment it runs in (the CLI's: initdb takes the time zone from TZ, for one), here
 * with the C locale, whose messages are read.
 */
export function runAs(account: ServerAccount | undefined, file: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      ...(account ? { uid: account.uid, gid: account.gid } : {}),
      cwd: '/',
      env: { ...env, LC_ALL: 'C', LANG: 'C' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EACCES' && account) {
        reject(new Error(`the ${account.name} user cannot run ${file}: every directory above it must be readable and searchable by that user (or install pgsurge outside /root)`));
      } else reject(error);
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
