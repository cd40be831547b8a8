import { LoadError } from '../core/load-error.js';
import type { LoadSummary } from '../metrics/load-counters.js';

/**
 * A load that started and then stopped (an error, too many rejects, the server gone,
 * Ctrl-C): what it committed stays, the summary says how much, and the same load can be
 * resumed by its id.
 */
export class LoadStopped extends LoadError {
  constructor(
    error: LoadError,
    readonly summary: LoadSummary,
    /** Undefined for a load without the ledger (`--no-ledger`): it cannot be resumed. */
    readonly loadId: string | undefined,
  ) {
    super(error.code, error.message, error.details);
    this.name = 'LoadStopped';
  }

  get interrupted(): boolean {
    return this.code === 'interrupted';
  }
}
