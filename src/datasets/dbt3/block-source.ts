/**
 * The blocks of a table (or a group of tables) for a range of driving rows, in order:
 * from worker threads running a bounded distance ahead, or made on the calling thread.
 */
import { groupBlockUnits, writeGroupBlock, type Block, type TableGroup } from './block.js';
import type { GenContext } from './context.js';
import type { BlockWorkers } from './worker-pool.js';

/** Blocks in flight per worker: enough to keep them busy while the writer waits on I/O. */
const AHEAD_PER_WORKER = 2;

export type BlockMaker = { readonly workers: BlockWorkers } | { readonly context: () => GenContext };

/** Yields one block per table of the group for each range of driving rows. */
export async function* groupBlocks(maker: BlockMaker, group: TableGroup, start: number, end: number): AsyncGenerator<Block[]> {
  const unit = groupBlockUnits(group);
  if ('context' in maker) {
    const ctx = maker.context();
    for (let s = start; s < end; s += unit) yield writeGroupBlock(ctx, group, s, Math.min(end, s + unit));
    return;
  }
  const { workers } = maker;
  const window: Promise<Block[]>[] = [];
  const ahead = workers.size * AHEAD_PER_WORKER;
  let next = start;
  const fill = (): void => {
    while (window.length < ahead && next < end) {
      const blockEnd = Math.min(end, next + unit);
      const promise = workers.request(group, next, blockEnd);
      promise.catch(() => undefined); // rejections surface when awaited in order
      window.push(promise);
      next = blockEnd;
    }
  };
  fill();
  while (window.length > 0) {
    const blocks = await window.shift()!;
    fill();
    yield blocks;
  }
}
