// Kept over pgpass (skips a line under 11 characters such as *:*:*:*:pw, misreads \\ before a ':', no socket-as-localhost, no passfile=, reads process.env, writes stderr) and it has no service file.
import { readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LoadError } from './load-error.js';
import type { Conninfo } from './conninfo.js';

/**
 * The two files libpq reads for psql: the connection service file (`pg_service.conf`) and
 * the password file (`.pgpass`), found where libpq looks for them.
 */

/** Per-user service file, then the system one: PGSERVICEFILE or ~/.pg_service.conf; PGSYSCONFDIR/pg_service.conf. */
export function serviceFiles(env: NodeJS.ProcessEnv): string[] {
  const home = env.HOME || os.homedir();
  const user = env.PGSERVICEFILE || path.join(home, '.pg_service.conf');
  // libpq's compiled-in sysconfdir varies (Debian: /etc/postgresql-common); PGSYSCONFDIR overrides it.
  const system = env.PGSYSCONFDIR ? [path.join(env.PGSYSCONFDIR, 'pg_service.conf')] : ['/etc/postgresql-common/pg_service.conf', '/etc/pg_service.conf'];
  return [user, ...system];
}

/** The `[name]` section of an INI-style service file, or undefined when the file has none. */
export function parseServiceFile(text: string, name: string, file: string): Conninfo | undefined {
  let inSection = false;
  let found: Conninfo | undefined;
  const lines = text.split(/\r?\n/);
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('[')) {
      if (found !== undefined) break;
      inSection = line.slice(1, line.indexOf(']') < 0 ? undefined : line.indexOf(']')) === name;
      if (inSection) found = {};
      continue;
    }
    if (!inSection) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) throw new LoadError('bad-option', `syntax error in service file ${file}, line ${n + 1}: expected key=value`);
    const key = line.slice(0, eq).trim();
    if (key === 'service') throw new LoadError('bad-option', `nested "service" in service file ${file}, line ${n + 1}`);
    found![key] = line.slice(eq + 1).trim();
  }
  return found;
}

/** The service's settings from the first file that defines it; an unknown service is an error, as in psql. */
export function lookupService(name: string, env: NodeJS.ProcessEnv): { params: Conninfo; file: string } {
  const files = serviceFiles(env);
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    const params = parseServiceFile(text, name, file);
    if (params !== undefined) return { params, file };
  }
  throw new LoadError('bad-option', `definition of service "${name}" not found`, { hint: `looked in ${files.join(', ')} (set PGSERVICEFILE to name another file)` });
}

/** One `.pgpass` line's five fields, `\:` and `\\` unescaped. */
function pgpassFields(line: string): string[] {
  const fields: string[] = [];
  let cur = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === '\\' && i + 1 < line.length) cur += line[++i];
    else if (c === ':') {
      fields.push(cur);
      cur = '';
    } else cur += c;
  }
  fields.push(cur);
  return fields;
}

export interface PgpassQuery {
  readonly host: string;
  readonly port: string;
  readonly database: string;
  readonly user: string;
}

/**
 * The password of the first matching `hostname:port:database:username:password` line
 * (`*` matches anything). A Unix-socket host matches `localhost`, as in libpq.
 */
export function matchPgpass(text: string, q: PgpassQuery): string | undefined {
  const host = q.host.startsWith('/') ? 'localhost' : q.host;
  for (const raw of text.split(/\r?\n/)) {
    if (raw.trim() === '' || raw.startsWith('#')) continue;
    const f = pgpassFields(raw);
    if (f.length < 5) continue;
    const [h, p, d, u] = f;
    const ok = (pattern: string, value: string): boolean => pattern === '*' || pattern === value;
    if (ok(h!, host) && ok(p!, q.port) && ok(d!, q.database) && ok(u!, q.user)) return f.slice(4).join(':');
  }
  return undefined;
}

/**
 * The password from the password file (passfile, PGPASSFILE or ~/.pgpass). As libpq does,
 * a file that others can read is ignored, with a warning, so a leaked password is not used.
 */
export function passwordFromPgpass(q: PgpassQuery, file: string | undefined, env: NodeJS.ProcessEnv, warn: (line: string) => void): string | undefined {
  const where = file || env.PGPASSFILE || path.join(env.HOME || os.homedir(), '.pgpass');
  let text: string;
  try {
    const st = statSync(where);
    if (!st.isFile()) return undefined;
    if ((st.mode & 0o077) !== 0) {
      warn(`password file "${where}" has group or world access; permissions should be u=rw (0600) or less: not used`);
      return undefined;
    }
    text = readFileSync(where, 'utf8');
  } catch {
    return undefined;
  }
  return matchPgpass(text, q);
}
