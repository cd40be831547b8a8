import { LoadError } from '../db/load-error.js';

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

/** One clear line (plus a hint) for the user; the stack only with --verbose. */
export function printError(error: unknown, verbose: boolean, stream: NodeJS.WritableStream = process.stderr): number {
  if (error instanceof LoadError) {
    stream.write(`pgsurge: ${error.message}\n`);
    if (error.details.server?.detail) stream.write(`  detail: ${error.details.server.detail}\n`);
    if (error.details.hint) stream.write(`  hint: ${error.details.hint}\n`);
    if (verbose && error.details.cause instanceof Error) stream.write(`${error.details.cause.stack}\n`);
    return error.code === 'bad-option' ? EXIT.usage : EXIT.failed;
  }
  const e = error as Error;
  stream.write(`pgsurge: ${e?.message ?? String(error)}\n`);
  if (verbose && e?.stack) stream.write(`${e.stack}\n`);
  return EXIT.failed;
}
