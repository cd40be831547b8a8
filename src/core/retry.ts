/**
 * Which failures a retry can fix, and how long to wait between tries. A chunk is one
 * transaction, so retrying it after a lost connection is safe: the server rolled it back,
 * or (if only the COMMIT's reply was lost) the ledger says it is in.
 */

/** 30 s: a server restart (crash recovery of a busy server included) usually fits; a server that is gone stops the load soon. */
export const DEFAULT_RETRY_FOR_MS = 30_000;

/** SQLSTATEs that mean the connection or the server went away, or the server asked us to try again. */
const RETRYABLE_SQLSTATES = new Set([
  '57P01', // admin_shutdown: pg_terminate_backend, a fast or immediate shutdown
  '57P02', // crash_shutdown: another backend crashed, the server restarts
  '57P03', // cannot_connect_now: the server is starting up or shutting down
  '08000', '08001', '08003', '08004', '08006', // connection exceptions
  '53300', // too_many_connections: a restarting server may briefly refuse
  '40001', // serialization_failure
  '40P01', // deadlock_detected
]);

const RETRYABLE_ERRNOS = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ENOENT', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED', 'EAI_AGAIN']);

const RETRYABLE_MESSAGES = [/Connection terminated/i, /not queryable/i, /Client was closed/i, /the database system is (starting up|shutting down|in recovery mode|not yet accepting connections)/i, /server closed the connection/i];

export function isRetryable(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | undefined;
  if (e === undefined || e === null) return false;
  if (typeof e.code === 'string' && (RETRYABLE_SQLSTATES.has(e.code) || RETRYABLE_ERRNOS.has(e.code))) return true;
  const message = typeof e.message === 'string' ? e.message : '';
  return RETRYABLE_MESSAGES.some((re) => re.test(message));
}

/** Exponential backoff with jitter: 100 ms, 200 ms, 400 ms … up to 2 s. */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(2000, 100 * 2 ** Math.min(attempt, 10));
  return Math.round(base * (0.5 + random() / 2));
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** `p`, or a rejection after `ms` (a server that hangs must not hang a stopping load). */
export function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error('timed out')), ms)))]).finally(() => clearTimeout(timer));
}

/** Server errors that no retry fixes but that deserve words of their own. */
export function serverTrouble(code: string | undefined): string | undefined {
  switch (code) {
    case '53100':
      return 'the server is out of disk space';
    case '53200':
      return 'the server is out of memory';
    case '53400':
      return 'the server hit a configured limit';
    case '25006':
      return 'the server is read-only (a standby, or default_transaction_read_only)';
    default:
      return undefined;
  }
}
