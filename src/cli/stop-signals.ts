import { EXIT } from './errors.js';

/** Signals that stop a load the way Ctrl-C does. */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export interface StopHandler {
  /** Aborted by the first Ctrl-C, SIGTERM or SIGHUP. */
  readonly signal: AbortSignal;
  /** Stops listening (the command is done). */
  off(): void;
}

/**
 * Ctrl-C, SIGTERM, SIGHUP: the first says so on stderr and aborts `signal` (the command
 * stops reading, rolls back `what` and prints its resume command); a second exits at once.
 */
export function onStopSignals(what: string): StopHandler {
  const abort = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    if (abort.signal.aborted) process.exit(EXIT.interrupted);
    process.stderr.write(`\npgsurge: interrupted (${signal}); rolling back ${what} (Ctrl-C again to quit at once)\n`);
    abort.abort();
  };
  for (const s of STOP_SIGNALS) process.on(s, onSignal);
  return {
    signal: abort.signal,
    off: () => {
      for (const s of STOP_SIGNALS) process.off(s, onSignal);
    },
  };
}
