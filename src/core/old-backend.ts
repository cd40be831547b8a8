import type pg from 'pg';
import { LoadError } from './load-error.js';

/** A connection's backend on the server: its pid, and the application_name that tells it from a later process with the same pid. */
export interface Backend {
  readonly pid: number;
  readonly applicationName: string;
}

/** The backend of a connected client (node-postgres reads the pid from the server's BackendKeyData at connect). */
export function backendOf(client: pg.Client): Backend | undefined {
  const c = client as unknown as { processID?: number | null; connectionParameters?: { application_name?: string } };
  const pid = c.processID;
  const applicationName = c.connectionParameters?.application_name;
  return typeof pid === 'number' && pid > 0 && applicationName !== undefined ? { pid, applicationName: asServerKeeps(applicationName) } : undefined;
}

/**
 * An application_name as pg_stat_activity shows it: the server keeps its first 63 bytes
 * (NAMEDATALEN - 1), cut at a character's start, so a long load id or part tag still matches.
 */
export function asServerKeeps(name: string): string {
  const bytes = Buffer.from(name, 'utf8');
  if (bytes.length <= 63) return name;
  let end = 63;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}

/** How long an old backend may take to end once told to (it ends at its next interrupt check). */
const GONE_WITHIN_MS = 10_000;

/**
 * After a lost connection, its backend may still be alive (the network went, not the
 * server) and finish a COMMIT later: a ledger read before that would miss the chunk and
 * load it again. So it is ended (by pid, if it still has its application_name) and seen
 * gone from pg_stat_activity before anything asks the ledger.
 */
export async function endOldBackend(client: pg.Client, old: Backend): Promise<void> {
  const alive = async (): Promise<boolean> =>
    (await client.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND application_name = $2', [old.pid, old.applicationName])).rowCount! > 0;
  if (!(await alive())) return;
  await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND application_name = $2', [old.pid, old.applicationName]);
  for (const t0 = Date.now(); await alive(); ) {
    if (Date.now() - t0 > GONE_WITHIN_MS) {
      throw new LoadError('server-error', `the server backend (pid ${old.pid}) of a lost connection did not end within ${GONE_WITHIN_MS / 1000} s: loading on could load its chunk twice`, {
        hint: `end it (SELECT pg_terminate_backend(${old.pid}) as a superuser), then resume`,
      });
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
