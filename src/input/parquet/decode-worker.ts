/**
 * A decoding thread of a Parquet load (`decode-thread.ts`): reads and decodes the flat
 * column chunks of the row groups it is asked for, from its own handle on the file, and
 * hands each decoded column's arrays back without a copy (transferred).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openParquet, type ParquetFile } from './parquet-file.js';
import { flatDecodeHere } from './parquet-source.js';
import type { FlatDecode } from './flat-decoder.js';
import type { DecodeReply, DecodeRequest, DecodeSetup, RecycleRequest } from './decode-thread.js';
import { BufferPool, ownedBuffers } from './flat-decoder.js';
import { ParquetKernels } from './parquet-kernels.js';

const port = parentPort;
if (port === null) throw new Error('decode-worker.js must run in a worker thread');
const setup = workerData as DecodeSetup;
let opened: Promise<{ file: ParquetFile; decode: FlatDecode }> | undefined;
let turn: Promise<void> = Promise.resolve();

// The arrays the load handed back (`RecycleRequest`), decoded into again.
const pool = new BufferPool();

port.on('message', (request: DecodeRequest | RecycleRequest | 'close') => {
  if (typeof request === 'object' && 'recycle' in request) {
    pool.give(request.recycle);
    return;
  }
  if (request === 'close') {
    // The file closed, the port closed: nothing is left on the thread's loop, and it exits.
    void turn
      .then(() => opened)
      .then((o) => o?.file.close())
      .catch(() => undefined)
      .finally(() => port.close());
    return;
  }
  opened ??= openParquet(setup.path).then((file) => ({ file, decode: flatDecodeHere(file, pool, undefined, setup.wasm ? ParquetKernels.get() : null) }));
  // One row group at a time (the decoder reuses its read buffer), in the order asked.
  const o = opened;
  turn = turn.then(async () => {
    try {
      const columns = await (await o).decode(request.rowGroup, request.fields);
      const reply: DecodeReply = { id: request.id, columns };
      // The arrays each column owns (its views of the value bytes share their buffer): moved, not copied.
      port.postMessage(reply, columns.flatMap((c) => (c === undefined ? [] : ownedBuffers(c))));
    } catch (error) {
      const e = error instanceof Error ? error : new Error(String(error));
      const reply: DecodeReply = { id: request.id, error: { message: e.message, stack: e.stack } };
      port.postMessage(reply);
    }
  });
});
