import { LoadError } from '../../core/load-error.js';

/**
 * `--max-rejects`: how many rows a load may reject in all (earlier runs of the same load
 * included) before it stops. Workers take from it only when their chunk commits, so the
 * limit holds exactly however many workers reject rows at once.
 */
export class RejectBudget {
  private used: number;

  constructor(
    readonly max: number,
    earlier: number,
    /** False without the ledger (`--no-ledger`): there is no resume to point to. */
    private readonly resumable = true,
  ) {
    this.used = earlier;
  }

  /** Whether `pending` more rejects stay within the limit. */
  fits(pending: number): boolean {
    return this.used + pending <= this.max;
  }

  take(n: number): void {
    this.used += n;
  }

  giveBack(n: number): void {
    this.used -= n;
  }

  exceeded(): LoadError {
    return new LoadError('too-many-rejects', `more than ${this.max} rows rejected (--max-rejects ${this.max}): the load stopped; the chunks committed so far stay in the table`, {
      hint: this.resumable
        ? 'look at the reject file and its .log; fix the input or raise --max-rejects, then resume'
        : 'look at the reject file and its .log; without the ledger the load cannot be resumed: fix the input or raise --max-rejects, then load it again with --truncate (without it the rows committed so far would go in twice)',
    });
  }
}

/** 1000: stray bad rows never stop a big load, and an input that is wrong through and through (every row refused, each isolated by itself) stops in seconds, not hours. */
export const DEFAULT_MAX_REJECTS = 1000;
