/**
 * A fixed set of block workers. Requests go round-robin; each reply resolves its own
 * promise, so the caller can await blocks in order while the workers run ahead.
 */
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../../core/start-worker.js';
import type { Block, TableGroup } from './block.js';

export interface WorkerSetup {
  readonly scale: number;
  readonly seed: number;
}
export interface BlockRequest {
  readonly id: number;
  readonly group: TableGroup;
  readonly start: number;
  readonly end: number;
}
export interface BlockReply {
  readonly id: number;
  /** One per table of the group; each buffer is transferred, not copied. */
  readonly blocks: readonly { readonly buffer: ArrayBuffer; readonly length: number; readonly rows: number }[];
}

interface Pending {
  resolve(blocks: Block[]): void;
  reject(error: Error): void;
}

export class BlockWorkers {
  private readonly workers: Worker[] = [];
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private failure: Error | undefined;

  constructor(readonly size: number, setup: WorkerSetup) {
    for (let i = 0; i < size; i++) {
      const worker = startWorker(new URL('./block-worker.js', import.meta.url), { workerData: setup });
      worker.on('message', (reply: BlockReply) => {
        const p = this.pending.get(reply.id);
        if (p === undefined) return;
        this.pending.delete(reply.id);
        p.resolve(reply.blocks.map((b) => ({ buf: Buffer.from(b.buffer, 0, b.length), rows: b.rows })));
      });
      worker.on('error', (error) => this.fail(error));
      worker.on('exit', (code) => {
        if (code !== 0) this.fail(new Error(`A generator worker exited with code ${code}`));
      });
      this.workers.push(worker);
    }
  }

  /** Ask the next worker in turn for the blocks of a group of tables. */
  request(group: TableGroup, start: number, end: number): Promise<Block[]> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    const id = this.nextId++;
    const worker = this.workers[id % this.size]!;
    const promise = new Promise<Block[]>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    const request: BlockRequest = { id, group, start, end };
    worker.postMessage(request);
    return promise;
  }

  async close(): Promise<void> {
    this.failure ??= new Error('The generator workers were closed');
    for (const p of this.pending.values()) p.reject(this.failure);
    this.pending.clear();
    await Promise.all(this.workers.map((w) => w.terminate()));
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }
}
