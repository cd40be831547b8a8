import { formatCount } from '../../core/format-count.js';
import { LoadError } from '../../core/load-error.js';

/** What a rejected row says of why: the server's SQLSTATE and message (none for a record refused before the server saw it). */
export interface RejectCause {
  readonly sqlstate: string | undefined;
  readonly message: string;
}

/**
 * `--max-rejects`: how many rows a load may reject in all (earlier runs of the same load
 * included) before it stops. Workers take from it only when their chunk commits, so the
 * limit holds exactly however many workers reject rows at once. It tallies why this run's
 * rows were rejected, so the stop names the main cause.
 */
export class RejectBudget {
  private used: number;
  private readonly causes = new Map<string, number>();

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

  /** `n` rejects committed; `rows` are those whose causes are known. */
  take(n: number, rows: readonly RejectCause[] = []): void {
    this.used += n;
    for (const row of rows) this.tally(row, 1);
  }

  giveBack(n: number, rows: readonly RejectCause[] = []): void {
    this.used -= n;
    for (const row of rows) this.tally(row, -1);
  }

  private tally(row: RejectCause, by: number): void {
    const cause = rejectCause(row);
    this.causes.set(cause, (this.causes.get(cause) ?? 0) + by);
  }

  /** The stop, naming the main cause among this run's rejects and `pending` (the rejects of the chunk that went over, rolled back). */
  exceeded(pending: readonly RejectCause[] = []): LoadError {
    const causes = new Map(this.causes);
    for (const row of pending) causes.set(rejectCause(row), (causes.get(rejectCause(row)) ?? 0) + 1);
    const total = [...causes.values()].reduce((a, n) => a + n, 0);
    const [cause, count] = [...causes].sort((a, b) => b[1] - a[1])[0] ?? [];
    const why = cause === undefined ? '' : `: ${formatCount(count!)} of ${formatCount(total)}${total === this.used + pending.length ? '' : ' this run'}: ${cause}`;
    return new LoadError('too-many-rejects', `more than ${this.max} rows rejected (--max-rejects ${this.max})${why}; the load stopped; the chunks committed so far stay in the table`, {
      hint: this.resumable
        ? 'look at the reject file and its .log; fix the input or raise --max-rejects, then resume'
        : 'look at the reject file and its .log; without the ledger the load cannot be resumed: fix the input or raise --max-rejects, then load it again with --truncate (without it the rows committed so far would go in twice)',
    });
  }
}

/**
 * A rejected row's cause, short: `duplicate key on people_pkey (23505)`, `invalid input
 * syntax for type integer (22P02)`; the server's message up to its first value or detail.
 */
export function rejectCause(row: RejectCause): string {
  const constraint = /constraint "([^"]+)"/.exec(row.message)?.[1];
  const code = row.sqlstate === undefined ? '' : ` (${row.sqlstate})`;
  const named: Record<string, string> = { '23505': 'duplicate key on', '23503': 'foreign key', '23514': 'check constraint', '23P01': 'exclusion constraint' };
  if (constraint !== undefined && row.sqlstate !== undefined && named[row.sqlstate] !== undefined) return `${named[row.sqlstate]} ${constraint}${code}`;
  const short = row.message.split(/: | \(/)[0]!.trim();
  return `${short.length > 100 ? `${short.slice(0, 99)}…` : short}${code}`;
}

/** 1000: stray bad rows never stop a big load, and an input that is wrong through and through (every row refused, each isolated by itself) stops in seconds, not hours. */
export const DEFAULT_MAX_REJECTS = 1000;
