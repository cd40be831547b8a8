import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';

/**
 * The managed cluster on TCP (`pgsurge cluster start --listen [host:]port`): for tools that
 * need a host and a port (JDBC, BI tools, a container). It listens on 127.0.0.1 unless a
 * host is given, and its pg_hba.conf lets host connections in only with the password
 * (scram-sha-256), which pgsurge generates and keeps in the data directory.
 */
export interface ListenAddress {
  /** What the server listens on (`listen_addresses`): an address, a name, or `*`. */
  readonly host: string;
  readonly port: number;
}

export interface ListenState extends ListenAddress {
  /** The `postgres` role's password for host connections. */
  readonly password: string;
}

/** The state file in the data directory (mode 0600): address, port and password. */
const LISTEN_FILE = 'pgsurge-listen.json';
/** The service file written beside it: `PGSERVICEFILE=<it> psql service=pgsurge`. */
export const SERVICE_FILE = 'pg_service.conf';
export const SERVICE_NAME = 'pgsurge';

const HBA_BEGIN = '# pgsurge --listen: host connections with the password only (scram-sha-256)';
const HBA_END = '# pgsurge --listen: end';

/** `6543`, `0.0.0.0:6543`, `[::1]:6543` → the address; a message naming what is wrong otherwise. */
export function parseListen(value: string): ListenAddress | string {
  const v = value.trim();
  const m = /^(\d+)$/.exec(v) ?? /^\[([^\]]+)\]:(\d+)$/.exec(v) ?? /^([^:[\]\s]+):(\d+)$/.exec(v);
  if (!m) return '[host:]port, such as 6543, 127.0.0.1:6543, 0.0.0.0:6543 or [::1]:6543';
  const port = Number(m.length === 2 ? m[1] : m[2]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) return 'a port from 1 to 65535';
  return { host: m.length === 2 ? '127.0.0.1' : m[1]!, port };
}

/** Listening only on this machine's loopback: pg_hba lets in 127.0.0.1 and ::1 only. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** A password for the `postgres` role: 24 random bytes, URL-safe base64 (no quoting needed in a URL or a service file). */
export function generatePassword(): string {
  return randomBytes(24).toString('base64url');
}

/**
 * The SCRAM-SHA-256 verifier PostgreSQL stores for a password (RFC 5802, as
 * `pg_authid.rolpassword` holds it): set with ALTER ROLE, the password itself never
 * reaches the server, its log or its statistics.
 */
export function scramVerifier(password: string, salt: Buffer = randomBytes(16), iterations = 4096): string {
  const salted = pbkdf2Sync(password.normalize('NFKC'), salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

/**
 * pg_hba.conf with pgsurge's host lines first (pg_hba is first match: before initdb's
 * `reject` lines), or without them when the cluster no longer listens. Only
 * scram-sha-256; the loopback addresses only unless the server listens beyond them.
 */
export function hbaWithListen(hba: string, host: string | undefined): string {
  const lines = hba.split('\n');
  const begin = lines.indexOf(HBA_BEGIN);
  const end = lines.indexOf(HBA_END);
  const rest = begin >= 0 && end > begin ? [...lines.slice(0, begin), ...lines.slice(end + 1)] : lines;
  if (host === undefined) return rest.join('\n');
  const from = isLoopback(host) ? ['127.0.0.1/32', '::1/128'] : ['all'];
  return [HBA_BEGIN, ...from.map((a) => `host    all             all             ${a.padEnd(24)}scram-sha-256`), HBA_END, ...rest].join('\n');
}

/** The host a client connects to: a wildcard listens on loopback too. */
function connectHost(state: ListenAddress): string {
  return state.host === '*' || state.host === '0.0.0.0' ? '127.0.0.1' : state.host === '::' ? '::1' : state.host;
}

/** `postgresql://postgres:<password>@127.0.0.1:6543/postgres` (the password only when asked). */
export function tcpUrl(state: ListenState, database = 'postgres', withPassword = true): string {
  const host = connectHost(state);
  const h = host.includes(':') ? `[${host}]` : host;
  return `postgresql://postgres${withPassword ? `:${encodeURIComponent(state.password)}` : ''}@${h}:${state.port}/${encodeURIComponent(database)}`;
}

/** The pg_service.conf entry: `psql service=pgsurge`, JDBC-less tools that read libpq's service file. */
export function serviceEntry(state: ListenState, database = 'postgres'): string {
  return `# the managed cluster over TCP (pgsurge cluster start --listen); use: PGSERVICEFILE=<this file> psql service=${SERVICE_NAME}\n[${SERVICE_NAME}]\nhost=${connectHost(state)}\nport=${state.port}\nuser=postgres\ndbname=${database}\npassword=${state.password}\n`;
}

export async function readListen(dataDir: string): Promise<ListenState | undefined> {
  try {
    const parsed = JSON.parse(await fs.readFile(path.join(dataDir, LISTEN_FILE), 'utf8')) as Partial<ListenState>;
    if (typeof parsed.host !== 'string' || typeof parsed.port !== 'number' || typeof parsed.password !== 'string') return undefined;
    return { host: parsed.host, port: parsed.port, password: parsed.password };
  } catch {
    return undefined;
  }
}

/** Writes (or with `undefined` removes) the state file and the service file, readable by their owner only, and pgsurge's pg_hba.conf lines. */
export async function writeListen(dataDir: string, state: ListenState | undefined): Promise<void> {
  const stateFile = path.join(dataDir, LISTEN_FILE);
  const serviceFile = path.join(dataDir, SERVICE_FILE);
  if (state === undefined) {
    await fs.rm(stateFile, { force: true });
    await fs.rm(serviceFile, { force: true });
  } else {
    await fs.writeFile(stateFile, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
    await fs.chmod(stateFile, 0o600);
    await fs.writeFile(serviceFile, serviceEntry(state), { mode: 0o600 });
    await fs.chmod(serviceFile, 0o600);
  }
  const hbaFile = path.join(dataDir, 'pg_hba.conf');
  await fs.writeFile(hbaFile, hbaWithListen(await fs.readFile(hbaFile, 'utf8'), state?.host));
}
