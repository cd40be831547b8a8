import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { parseConninfo, type Conninfo } from './conninfo.js';
import { lookupService, passwordFromPgpass } from './libpq-files.js';
import { LoadError } from './load-error.js';

/** libpq's environment variables and the keyword each one stands for. */
export const PG_ENV_KEYS: Readonly<Record<string, string>> = {
  PGHOST: 'host',
  PGHOSTADDR: 'hostaddr',
  PGPORT: 'port',
  PGDATABASE: 'dbname',
  PGUSER: 'user',
  PGPASSWORD: 'password',
  PGPASSFILE: 'passfile',
  PGSERVICE: 'service',
  PGSSLMODE: 'sslmode',
  PGSSLROOTCERT: 'sslrootcert',
  PGSSLCERT: 'sslcert',
  PGSSLKEY: 'sslkey',
  PGAPPNAME: 'application_name',
  PGCONNECT_TIMEOUT: 'connect_timeout',
  PGOPTIONS: 'options',
  PGTARGETSESSIONATTRS: 'target_session_attrs',
  PGCLIENTENCODING: 'client_encoding',
};

/** The variables that, set on their own, name a server (so the managed cluster is not the target). */
export const PG_TARGET_ENV = ['PGHOST', 'PGHOSTADDR', 'PGPORT', 'PGUSER', 'PGDATABASE', 'PGPASSWORD', 'PGSERVICE'] as const;

export interface ResolvedConnection {
  readonly config: pg.ClientConfig;
  /** The server as psql names it, never the password: `host "db1", port 5432, database "prod", user "me"`. */
  readonly description: string;
  /** Where the settings came from, for `--verbose` and the docs: e.g. `--db, service "prod" (~/.pg_service.conf), PG* environment`. */
  readonly sources: readonly string[];
}

/** Where libpq looks for a server's socket when no host is named (Debian's, then the upstream default). */
const SOCKET_DIRS = ['/var/run/postgresql', '/tmp'];

/**
 * `--db` (URL or key=value), then the service it names (or PGSERVICE), then the PG*
 * environment, then libpq's defaults — each filling only what the earlier ones left unset,
 * as libpq does. The password, when none of them gives one, comes from the password file.
 */
export function resolveConnection(db: string | undefined, env: NodeJS.ProcessEnv, warn: (line: string) => void = () => {}): ResolvedConnection {
  const sources: string[] = [];
  const params: Conninfo = {};
  /** Which source gave each keyword, so a bad value's message says where to fix it. */
  const origin: Record<string, string> = {};
  const fill = (from: Conninfo, where: (key: string) => string): boolean => {
    let any = false;
    for (const [k, v] of Object.entries(from)) {
      if (params[k] === undefined && v !== '') {
        params[k] = v;
        origin[k] = where(k);
        any = true;
      }
    }
    return any;
  };
  if (db !== undefined) {
    fill(parseConninfo(db), () => '--db');
    sources.push('--db');
  }
  const service = params.service ?? nonEmpty(env.PGSERVICE);
  if (service !== undefined) {
    const found = lookupService(service, env);
    fill(found.params, () => `service "${service}" in ${found.file}`);
    sources.push(`service "${service}" (${found.file})`);
  }
  const fromEnv: Conninfo = {};
  const envName: Record<string, string> = {};
  for (const [name, key] of Object.entries(PG_ENV_KEYS)) {
    const v = nonEmpty(env[name]);
    if (v !== undefined) {
      fromEnv[key] = v;
      envName[key] = name;
    }
  }
  if (fill(fromEnv, (key) => envName[key] ?? 'PG* environment')) sources.push('PG* environment');

  const hosts = (params.host ?? '').split(',').filter((h) => h !== '');
  const ports = (params.port ?? '').split(',').filter((p) => p !== '');
  if (hosts.length > 1 || ports.length > 1) {
    throw new LoadError('bad-option', `several hosts (${hosts.join(', ')}) are not supported: pgsurge loads into one server`, { hint: 'name one host in --db' });
  }
  const port = ports[0] ?? '5432';
  checkPort(port, origin.port ?? 'the default');
  const user = params.user ?? osUser(env);
  const database = params.dbname ?? user;
  const host = hosts[0] ?? defaultHost(port);
  const password = params.password ?? passwordFromPgpass({ host, port, database, user }, params.passfile, env, warn);
  const config: pg.ClientConfig = {
    host: params.hostaddr ?? host,
    port: Number(port),
    user,
    database,
    ...(password !== undefined ? { password } : {}),
    ...(params.application_name ?? params.fallback_application_name ? { application_name: params.application_name ?? params.fallback_application_name } : {}),
    ...(params.connect_timeout !== undefined ? { connectionTimeoutMillis: connectTimeout(params.connect_timeout) } : {}),
    ...(params.options !== undefined ? { options: params.options } : {}),
    ...(params.client_encoding !== undefined ? { client_encoding: params.client_encoding } : {}),
    ...(params.keepalives === '0' ? { keepAlive: false } : { keepAlive: true }),
    ...(params.keepalives_idle !== undefined ? { keepAliveInitialDelayMillis: Number(params.keepalives_idle) * 1000 } : {}),
    ssl: sslConfig(params, host),
  };
  return { config, description: describeServer(host, Number(port), database, user), sources };
}

/** psql's words for a server: `server on socket "/tmp/.s.PGSQL.5432"` or `server at "db1", port 5432`, with the database and user. */
export function describeServer(host: string, port: number, database: string, user: string): string {
  const where = host.startsWith('/') ? `server on socket "${path.join(host, `.s.PGSQL.${port}`)}"` : `server at "${host}", port ${port}`;
  return `${where}, database "${database}", user "${user}"`;
}

/**
 * libpq's check of a port (parse_int_param, then 1 to 65535), wherever it was given: a
 * port out of range would otherwise reach the socket (65536 throws inside node-postgres,
 * 0 connects to 5432).
 */
export function checkPort(port: string, where: string): void {
  const n = /^\d+$/.test(port) ? Number(port) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new LoadError('bad-option', `invalid port number "${port}" (from ${where}): a port is a whole number from 1 to 65535`);
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}

function osUser(env: NodeJS.ProcessEnv): string {
  try {
    return os.userInfo().username;
  } catch {
    return env.USER ?? 'postgres';
  }
}

function defaultHost(port: string): string {
  for (const dir of SOCKET_DIRS) if (existsSync(path.join(dir, `.s.PGSQL.${port}`))) return dir;
  return 'localhost';
}

function connectTimeout(v: string): number {
  const s = Number(v);
  if (!Number.isInteger(s) || s < 0) throw new LoadError('bad-option', `connect_timeout must be whole seconds, got "${v}"`);
  // libpq: 0 waits forever, and less than 2 seconds is taken as 2.
  return s === 0 ? 0 : Math.max(2, s) * 1000;
}

/**
 * libpq's sslmode in node-postgres's terms. node-postgres cannot try TLS and fall back,
 * so `prefer` and `allow` (libpq's default is prefer) connect without TLS; `require`
 * encrypts without checking the certificate; `verify-ca` checks it against sslrootcert;
 * `verify-full` also checks the host name.
 */
function sslConfig(params: Conninfo, host: string): pg.ClientConfig['ssl'] {
  const mode = params.sslmode ?? 'prefer';
  const read = (file: string | undefined): string | undefined => (file === undefined ? undefined : readFileSync(file, 'utf8'));
  const files = { ...(params.sslcert ? { cert: read(params.sslcert) } : {}), ...(params.sslkey ? { key: read(params.sslkey) } : {}) };
  switch (mode) {
    case 'disable':
    case 'allow':
    case 'prefer':
      return false;
    case 'require':
      return { rejectUnauthorized: false, ...files };
    case 'verify-ca':
      return { rejectUnauthorized: true, ca: read(params.sslrootcert ?? defaultRootCert()), checkServerIdentity: () => undefined, ...files };
    case 'verify-full':
      return { rejectUnauthorized: true, ca: read(params.sslrootcert ?? defaultRootCert()), servername: host, ...files };
    default:
      throw new LoadError('bad-option', `invalid sslmode "${mode}"`, { hint: 'one of disable, allow, prefer, require, verify-ca, verify-full' });
  }
}

function defaultRootCert(): string {
  return path.join(os.homedir(), '.postgresql', 'root.crt');
}
