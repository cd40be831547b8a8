import type { Chunk } from '../core/chunk.js';
import type { ChunkSource } from './chunk-queue.js';

/**
 * Knows when each table of a load of several tables has all its rows in: every source of
 * its inputs has ended and every chunk they gave has been counted (committed, and durable
 * where the commit did not wait for the flush). A table none of whose sources gives a
 * chunk, or that has no source at all (a resume found it loaded), is in once its sources
 * have ended, or once every source is opened (`opened`). `dbt3 load` starts a
 * table's keys and indexes then, while the other tables still load.
 */
export class TableProgress {
  private readonly tables = new Map<string, { openSources: number; outstanding: number; announced: boolean }>();

  constructor(private readonly onTableLoaded: (table: string) => void) {}

  /** A table of the load, before its sources are tracked (a resume may open none for it: all its rows are in). */
  expect(table: string): void {
    this.stateOf(table);
  }

  /** Every source is tracked: a table with none open and nothing outstanding is in now. */
  opened(): void {
    for (const table of this.tables.keys()) this.check(table);
  }

  /** A source of `table`'s rows, passed through: its chunks are counted out here and back in by `counted`. */
  track(table: string, source: ChunkSource): ChunkSource {
    const state = this.stateOf(table);
    state.openSources++;
    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      state.openSources--;
      this.check(table);
    };
    return {
      next: async (): Promise<IteratorResult<Chunk>> => {
        const result = await source.next();
        if (result.done === true) end();
        else state.outstanding++;
        return result;
      },
      // A source closed early (the load stopped) has not given all its rows: the table is not announced.
      return: async (value?: unknown): Promise<IteratorResult<Chunk>> => {
        ended = true;
        return (await source.return?.(value)) ?? { done: true, value: undefined };
      },
    };
  }

  /** One of `table`'s chunks is counted. */
  counted(table: string): void {
    const state = this.stateOf(table);
    state.outstanding--;
    this.check(table);
  }

  private stateOf(table: string): { openSources: number; outstanding: number; announced: boolean } {
    let state = this.tables.get(table);
    if (state === undefined) this.tables.set(table, (state = { openSources: 0, outstanding: 0, announced: false }));
    return state;
  }

  private check(table: string): void {
    const state = this.tables.get(table)!;
    if (state.announced || state.openSources > 0 || state.outstanding > 0) return;
    state.announced = true;
    this.onTableLoaded(table);
  }
}
