import { existsSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The account the server runs as: PostgreSQL refuses to run as root, so root hands over to `postgres`. */
export interface ServerAccount {
  readonly uid: number;
  readonly gid: number;
  readonly name: string;
}

/**
 * Where pgsurge keeps what it makes for itself (the managed cluster, the demo's data) when
 * no `--data-dir` says otherwise:
 *
 * - `$PGSURGE_HOME` when set;
 * - run from a git checkout (a developer, the tests, the benches): `.pgsurge` in the
 *   current folder, as always — unless, as root, the `postgres` account the server runs
 *   as cannot reach that folder (a parent is 0700, e.g. under /root): then root's place;
 * - installed (npm install -g): root → `/var/lib/pgsurge` (root's home is 0700, the
 *   server's account could not reach it); anyone else → `$XDG_DATA_HOME/pgsurge`
 *   (`~/.local/share/pgsurge`), their own server runs as them.
 */
export const ROOT_HOME = '/var/lib/pgsurge';

export interface HomeFacts {
  readonly env: NodeJS.ProcessEnv;
  readonly uid: number;
  readonly cwd: string;
  /** True when pgsurge runs from a git checkout rather than an installed package. */
  readonly checkout: boolean;
  /** Whether the server's account can reach (search every parent of) a directory. */
  readonly reachable: (dir: string) => boolean;
}

export function pgsurgeHome(f: HomeFacts): string {
  if (f.env.PGSURGE_HOME) return path.resolve(f.cwd, f.env.PGSURGE_HOME);
  if (f.checkout) {
    const here = path.join(f.cwd, '.pgsurge');
    return f.uid !== 0 || f.reachable(f.cwd) ? here : ROOT_HOME;
  }
  if (f.uid === 0) return ROOT_HOME;
  const data = f.env.XDG_DATA_HOME ? f.env.XDG_DATA_HOME : path.join(f.env.HOME ?? os.homedir(), '.local', 'share');
  return path.join(data, 'pgsurge');
}

/** The managed cluster's data directory when no `--data-dir` is given (`env`: the CLI's environment, for XDG_DATA_HOME and HOME). */
export function defaultDataDir(env: NodeJS.ProcessEnv): string {
  return path.join(pgsurgeHome(currentFacts(env)), 'cluster');
}

function currentFacts(env: NodeJS.ProcessEnv): HomeFacts {
  return { env, uid: process.getuid?.() ?? -1, cwd: process.cwd(), checkout: runsFromCheckout(), reachable: (dir) => blockingParent(dir, POSTGRES_LIKE) === undefined };
}

/** Any account other than root: "can it search this directory" as a stranger would. */
const POSTGRES_LIKE: ServerAccount = { uid: -2, gid: -2, name: 'postgres' };

let checkoutCache: boolean | undefined;
/** The package's own folder holds `.git` (a clone or worktree): not an installed package. */
export function runsFromCheckout(): boolean {
  if (checkoutCache !== undefined) return checkoutCache;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const pkg = path.join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'pgsurge') return (checkoutCache = existsSync(path.join(dir, '.git')));
      } catch {
        // not ours: keep looking
      }
    }
    dir = path.dirname(dir);
  }
  return (checkoutCache = false);
}

/**
 * The first existing directory on the way to `target` that `account` cannot search
 * (no x bit for it as owner, group or other), or undefined when every one is open to it.
 */
export function blockingParent(target: string, account: ServerAccount): { dir: string; mode: number; uid: number } | undefined {
  const parts = path.resolve(target).split(path.sep).filter((p) => p !== '');
  let dir: string = path.sep;
  for (let i = 0; i <= parts.length; i++) {
    let st;
    try {
      st = statSync(dir);
    } catch {
      return undefined; // the rest will be created by us, open to it
    }
    const bit = st.uid === account.uid ? 0o100 : st.gid === account.gid ? 0o010 : 0o001;
    if ((st.mode & bit) === 0) return { dir, mode: st.mode & 0o777, uid: st.uid };
    if (i < parts.length) dir = path.join(dir, parts[i]!);
  }
  return undefined;
}
