import { isServerError, ledgerAccessDenied, LoadError, type ServerErrorFields } from '../core/load-error.js';

/** Exit codes: what a script calling pgsurge can rely on. */
export const EXIT = {
  ok: 0,
  /** The load (or command) failed: see the message on stderr. */
  failed: 1,
  /** The command line was wrong: nothing was done. */
  usage: 2,
  /** The load finished, but some rows were rejected (they are in the reject file). */
  rejects: 3,
  /** Ctrl-C: the chunks in flight were rolled back; the load can be resumed. */
  interrupted: 130,
} as const;

/**
 * An error one part of a split load (`--part K/N`) met before it stopped without a summary
 * (a missing table, an unreachable server, a refused option, the server's own error): the
 * other parts may be loading, so the message names the part and the command that reruns it.
 */
export class PartFailed extends Error {
  constructor(
    /** `2/3`. */
    readonly part: string,
    readonly error: unknown,
    /** The command line that runs this part again. */
    readonly rerun: string,
  ) {
    super(`part ${part}: ${(error as Error)?.message ?? String(error)}`);
    this.name = 'PartFailed';
  }
}

/** One clear line (plus a hint) for the user; the stack only with --verbose. */
export function printError(raw: unknown, verbose: boolean, stream: NodeJS.WritableStream = process.stderr, prefix = ''): number {
  if (raw instanceof PartFailed) {
    const code = printError(raw.error, verbose, stream, `${prefix}part ${raw.part}: `);
    stream.write(`  rerun this part with: ${raw.rerun}\n`);
    return code;
  }
  // The server's bare "permission denied" on the ledger says nothing of what fixes it.
  const error = ledgerAccessDenied(raw) ?? raw;
  if (error instanceof LoadError) {
    stream.write(`pgsurge: ${prefix}${error.message}\n`);
    const server = error.details.server ?? serverFields(error.details.cause);
    if (server?.detail) stream.write(`  detail: ${server.detail}\n`);
    // The server's own hint too, when pgsurge's says something else.
    if (server?.hint && server.hint !== error.details.hint) stream.write(`  server hint: ${server.hint}\n`);
    if (error.details.hint) stream.write(`  hint: ${error.details.hint}\n`);
    if (verbose && error.details.cause instanceof Error) stream.write(`${error.details.cause.stack}\n`);
    return error.code === 'bad-option' ? EXIT.usage : EXIT.failed;
  }
  const e = error as Error;
  stream.write(`pgsurge: ${prefix}${e?.message ?? String(error)}\n`);
  // A server error that reached here as it came (a TRUNCATE refused, …): its DETAIL and HINT say why and what to do.
  const server = serverFields(error);
  if (server?.detail) stream.write(`  detail: ${server.detail}\n`);
  if (server?.hint) stream.write(`  hint: ${server.hint}\n`);
  if (verbose && e?.stack) stream.write(`${e.stack}\n`);
  return EXIT.failed;
}

function serverFields(error: unknown): ServerErrorFields | undefined {
  return isServerError(error) ? error : undefined;
}
