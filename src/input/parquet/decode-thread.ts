import { once } from 'node:events';
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../../core/start-worker.js';
import type { FlatColumn, FlatDecode } from './flat-decoder.js';

/*
 * A reader's decoding thread. A Parquet load's one event loop also writes every chunk's
 * tuples to every connection; a row group decoded there (~0.5 µs a row: the file read,
 * snappy, the flat decoder) holds the loop for tens of milliseconds at a time, while the
 * backends, whose sockets hold a couple of milliseconds of tuples, wait. Decoded in a
 * thread of its own, the row group arrives as arrays (transferred, not copied) and the
 * loop only writes tuples.
 */

/** The thread itself failed (did not start, died, exited): not the input's fault, so not a row group that "does not decode". */
export class DecodeThreadFailed extends Error {
  override readonly name = 'DecodeThreadFailed';
}

export interface DecodeSetup {
  readonly path: string;
  /** Whether the thread decodes with the WebAssembly kernels (where WebAssembly runs). */
  readonly wasm: boolean;
}
export interface DecodeRequest {
  readonly id: number;
  readonly rowGroup: number;
  readonly fields: readonly string[];
}
/** Arrays of decoded columns the load is done with, handed back (transferred) to be decoded into again. */
export interface RecycleRequest {
  readonly recycle: readonly ArrayBuffer[];
}
export type DecodeReply = { readonly id: number; readonly columns: readonly (FlatColumn | undefined)[] } | { readonly id: number; readonly error: { readonly message: string; readonly stack: string | undefined } };

interface Pending {
  resolve(columns: (FlatColumn | undefined)[]): void;
  reject(error: Error): void;
}

/** One thread decoding one file's flat column chunks on request (`FlatDecode`), started at the first. */
export class DecodeThread {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private failure: Error | undefined;

  /** `wasm`: false decodes without the WebAssembly kernels. */
  constructor(
    private readonly path: string,
    private readonly wasm = true,
  ) {}

  readonly decode: FlatDecode = (rowGroup, fields) => {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    let worker: Worker;
    try {
      worker = this.started();
    } catch (error) {
      // Not a pending decode left to reject later, unheard: this one fails, and every one after it.
      this.failure ??= new DecodeThreadFailed(`the Parquet decoding thread did not start: ${(error as Error).message}`);
      return Promise.reject(this.failure);
    }
    const id = this.nextId++;
    const promise = new Promise<(FlatColumn | undefined)[]>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    const request: DecodeRequest = { id, rowGroup, fields };
    // Held while a decode is pending (the load may await nothing else), let go when idle (a stopped load still exits).
    if (this.pending.size === 1) worker.ref();
    worker.postMessage(request);
    return promise;
  };

  /** Gives the thread back arrays it decoded into, once nothing here reads them (they are moved: views of them here read nothing after). */
  recycle(buffers: ArrayBuffer[]): void {
    if (this.worker === undefined || this.failure !== undefined || buffers.length === 0) return;
    const request: RecycleRequest = { recycle: buffers };
    this.worker.postMessage(request, buffers);
  }

  /** Ends the thread (its pending decodes fail): it closes its file and exits, or is terminated after a second. */
  async close(): Promise<void> {
    this.fail(new Error('internal: the Parquet decoding thread was closed'));
    const w = this.worker;
    this.worker = undefined;
    if (w === undefined) return;
    const exited = once(w, 'exit').then(() => true, () => true);
    w.postMessage('close');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 1000)));
    const done = await Promise.race([exited, late]);
    clearTimeout(timer);
    if (!done) await w.terminate();
  }

  private started(): Worker {
    if (this.worker !== undefined) return this.worker;
    const setup: DecodeSetup = { path: this.path, wasm: this.wasm };
    const worker = startWorker(new URL('./decode-worker.js', import.meta.url), { workerData: setup });
    // An idle thread never keeps the process alive (a load stopped before its reader's end still exits).
    worker.unref();
    worker.on('message', (reply: DecodeReply) => {
      const p = this.pending.get(reply.id);
      if (p === undefined) return;
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      if ('error' in reply) {
        const error = new Error(reply.error.message);
        if (reply.error.stack !== undefined) error.stack = reply.error.stack;
        p.reject(error);
      } else p.resolve([...reply.columns]);
    });
    worker.on('error', (error) => this.fail(new DecodeThreadFailed(`the Parquet decoding thread failed: ${error.message}`, { cause: error })));
    worker.on('exit', (code) => {
      if (code !== 0) this.fail(new DecodeThreadFailed(`the Parquet decoding thread exited with code ${code}`));
    });
    this.worker = worker;
    return worker;
  }

  private fail(error: Error): void {
    this.failure ??= error;
    this.worker?.unref();
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }
}
