import type { ChunkLocation } from './chunk.js';

/** The fields PostgreSQL sends with an error, as node-postgres exposes them. */
export interface ServerErrorFields {
  readonly code?: string;
  readonly detail?: string;
  readonly hint?: string;
  readonly where?: string;
  readonly column?: string;
  readonly table?: string;
  readonly constraint?: string;
}

export const LOAD_ERROR_CODES = [
  'bad-input',
  'bad-option',
  'missing-file',
  'missing-table',
  'server-unreachable',
  'chunk-failed',
  'too-many-rejects',
  'server-lost',
  'server-error',
  'interrupted',
  'internal',
] as const;
export type LoadErrorCode = (typeof LOAD_ERROR_CODES)[number];

/** Errors are data: what went wrong, where in the input, what the server said, what to do. */
export class LoadError extends Error {
  constructor(
    readonly code: LoadErrorCode,
    message: string,
    readonly details: {
      readonly hint?: string;
      readonly location?: ChunkLocation & { readonly line?: number };
      readonly server?: ServerErrorFields;
      readonly cause?: unknown;
      /**
       * The load stopped on input it cannot go past, part way (a framing error): fixed, the
       * input is another file, so only loading it again from the start (`--truncate`) ends exact.
       */
      readonly startOver?: boolean;
    } = {},
  ) {
    super(message);
    this.name = 'LoadError';
  }
}

/** The hint of a `startOver` error; the CLI prints the command after it. */
export const START_OVER_HINT =
  'fix the input, then load it again from the start with --truncate (the command below; it empties the table): the chunks committed before the error stay in the table, and loading the changed file without --truncate would load them twice';

/** An input file that cannot be opened (missing, not readable): `cannot read <file>: no such file`. */
export function cannotRead(file: string, error: unknown, hint: string): LoadError {
  const code = (error as NodeJS.ErrnoException).code;
  const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (error as Error).message;
  return new LoadError('missing-file', `cannot read ${file}: ${why}`, { hint });
}

export function isServerError(error: unknown): error is Error & ServerErrorFields & { code: string } {
  const code = (error as { code?: unknown } | undefined)?.code;
  return error instanceof Error && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}

/** The record number in `COPY t, line N[, column c]`. */
export function copyLineFromWhere(where: string | undefined): number | undefined {
  const m = where === undefined ? null : /COPY [^,]+, line (\d+)/.exec(where);
  return m ? Number(m[1]) : undefined;
}

/** The column in `COPY t, line N, column c: …`. */
export function copyColumnFromWhere(where: string | undefined): string | undefined {
  const m = where === undefined ? null : /COPY [^,]+, line \d+, column ([^:]+)/.exec(where);
  return m ? m[1] : undefined;
}

/** The ledger's schema and tables, as a "permission denied" error names them. */
const LEDGER_DENIED = /^permission denied for (?:schema pgsurge|table (?:chunks|rejects|load_files|load_parts|routed_files|node_parts|node_rejects))$/;

/**
 * A server's "permission denied" (42501) on the load ledger (schema pgsurge), made by
 * another user, as a message that says what fixes it: the owner's GRANT, or --no-ledger.
 * Undefined for any other error.
 */
export function ledgerAccessDenied(error: unknown): LoadError | undefined {
  const e = error instanceof LoadError ? (error.details.cause ?? error) : error;
  if (!isServerError(e) || e.code !== '42501' || !LEDGER_DENIED.test(e.message)) return undefined;
  return new LoadError('server-error', `this user may not use the load ledger (schema pgsurge) in the target database: ${e.message}`, {
    hint:
      'have the owner of schema pgsurge run GRANT USAGE ON SCHEMA pgsurge TO <this user>; GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA pgsurge TO <this user>; ' +
      'or load with --no-ledger (rejects still work, but a stopped load cannot be resumed)',
    cause: e,
  });
}

/** A message for a failed connection attempt that says what to do. */
export function connectionFailure(error: unknown, description: string): LoadError {
  const e = error as NodeJS.ErrnoException & ServerErrorFields;
  let hint = 'check --db, the PG* environment variables, and that the server is running';
  if (e.code === '28P01' || e.code === '28000' || /no password supplied/.test(e.message ?? '')) hint = 'check the user name and password (in --db, the service file, PGPASSWORD or ~/.pgpass)';
  if (e.code === '3D000') hint = 'create the database first, or name another in --db';
  return new LoadError('server-unreachable', `cannot connect to ${description}: ${e.message}`, { hint, cause: error, server: e });
}
