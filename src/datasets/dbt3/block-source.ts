/**
 * The blocks of one table for a range of driving rows, in order: from worker threads
 * running a bounded distance ahead, or generated on the calling thread.
 */
import type { Dbt3Table } from '../dbt3-schema.js';
import { BLOCK_UNITS, writeBlock, type Block } from './block.js';
import type { GenContext } from './context.js';
import type { BlockWorkers } from './worker-pool.js';

/** Blocks in flight per worker: enough to keep them busy while the writer waits on I/O. */
const AHEAD_PER_WORKER = 2;

export type BlockMaker = { readonly workers: BlockWorkers } | { readonly context: () => GenContext };

export async function* tableBlocks(maker: BlockMaker, table: Dbt3Table, start: number, end: number): AsyncGenerator<Block> {
  const unit = BLOCK_UNITS[table];
  if ('context' in maker) {
    const ctx = maker.context();
    for (let s = start; s < end; s += unit) yield writeBlock(ctx, table, s, Math.min(end, s + unit));
    return;
  }
  const { workers } = maker;
  const window: Promise<Block>[] = [];
  const ahead = workers.size * AHEAD_PER_WORKER;
  let next = start;
  const fill = (): void => {
    while (window.length < ahead && next < end) {
      const blockEnd = Math.min(end, next + unit);
      const promise = workers.request(table, next, blockEnd);
      promise.catch(() => undefined); // rejections surface when awaited in order
      window.push(promise);
      next = blockEnd;
    }
  };
  fill();
  while (window.length > 0) {
    const block = await window.shift()!;
    fill();
    yield block;
  }
}
