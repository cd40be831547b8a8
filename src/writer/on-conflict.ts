import { isServerError, LoadError } from '../core/load-error.js';

/**
 * `--on-conflict`: what a row that violates a unique key (or an exclusion constraint) does
 * to the load. One entry per value; `--help`, docs/load.md and the writers and workers all
 * read it from here.
 */
export const ON_CONFLICT_RULES = {
  error: {
    help: 'the load stops at the first such row, naming it (the chunks committed before stay)',
    /** The first conflict stops the load. */
    stops: true,
    /** Rows are sent as they are (COPY, or INSERT without ON CONFLICT). */
    leavesOut: false,
  },
  reject: {
    help: 'the row goes to the reject file with the server\'s message, like any bad row, and the load goes on (counted against --max-rejects)',
    stops: false,
    leavesOut: false,
  },
  skip: {
    help: 'the row is left out and counted as skipped (INSERT … ON CONFLICT DO NOTHING; COPY through a staging table)',
    stops: false,
    /** The server leaves conflicting rows out itself, and they are counted as skipped. */
    leavesOut: true,
  },
  update: {
    help: 'COPY only: the row replaces the one with its key (--key; columns: --update-columns), the last row of a key in the file wins, at any -w',
    stops: false,
    leavesOut: false,
  },
} as const;

export type OnConflict = keyof typeof ON_CONFLICT_RULES;
export const ON_CONFLICT = Object.keys(ON_CONFLICT_RULES) as readonly OnConflict[];

/** The values that decide one row at a time (not `update`, which needs a key and a staging table): INSERT's, and `compare`'s. */
export const ROW_ON_CONFLICT = ON_CONFLICT.filter((v) => v !== 'update');

/** Duplicates are bad rows like any other: rejected verbatim, and the rest loads. */
export const DEFAULT_ON_CONFLICT: OnConflict = 'reject';

/** `--on-conflict`'s help: each value and what it does. */
export function onConflictHelp(values: readonly OnConflict[] = ON_CONFLICT): string {
  return `a row that violates a unique key: ${values.map((v) => `${v}: ${ON_CONFLICT_RULES[v].help}`).join('; ')}`;
}

/** unique_violation and exclusion_violation: the conflicts ON CONFLICT handles. */
const CONFLICTS = new Set(['23505', '23P01']);

/** The error that stops a load at its first conflict (`--on-conflict error`), naming the row; undefined when `error` is no conflict. */
export function conflictStop(error: unknown, where: string): LoadError | undefined {
  if (!isServerError(error) || !CONFLICTS.has(error.code)) return undefined;
  const detail = error.detail ? ` (${error.detail})` : '';
  return new LoadError('chunk-failed', `${where}: ${error.message}${detail} [SQLSTATE ${error.code}]; --on-conflict error stops the load at the first conflict: the chunk it was in was rolled back, the chunks committed before stay`, {
    server: error,
    hint: 'to load the rest, leaving out the rows already in the table: the same command with --on-conflict skip --again; or --on-conflict reject to have conflicts in the reject file',
    cause: error,
  });
}
