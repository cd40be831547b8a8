/**
 * A decoding thread of a Parquet load (`decode-thread.ts`): reads and decodes the flat
 * column chunks of the row groups it is asked for, from its own handle on the file, and
 * hands each decoded column's arrays back without a copy (transferred).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openParquet, type ParquetFile } from './parquet-file.js';
import { flatDecodeHere, type FlatDecode } from './parquet-source.js';
import type { DecodeReply, DecodeRequest, DecodeSetup } from './decode-thread.js';

const port = parentPort;
if (port === null) throw new Error('decode-worker.js must run in a worker thread');
const setup = workerData as DecodeSetup;
let opened: Promise<{ file: ParquetFile; decode: FlatDecode }> | undefined;
let turn: Promise<void> = Promise.resolve();

port.on('message', (request: DecodeRequest | 'close') => {
  if (request === 'close') {
    // The file closed, the port closed: nothing is left on the thread's loop, and it exits.
    void turn
      .then(() => opened)
      .then((o) => o?.file.close())
      .catch(() => undefined)
      .finally(() => port.close());
    return;
  }
  opened ??= openParquet(setup.path).then((file) => ({ file, decode: flatDecodeHere(file) }));
  // One row group at a time (the decoder reuses its read buffer), in the order asked.
  const o = opened;
  turn = turn.then(async () => {
    try {
      const columns = await (await o).decode(request.rowGroup, request.fields);
      const reply: DecodeReply = { id: request.id, columns };
      // The arrays each column owns (its views of the value bytes share their buffer): moved, not copied.
      const moved = columns.flatMap((c) => (c === undefined ? [] : [c.index.buffer, c.bytes.buffer, ...(c.span ? [c.span.buffer] : [])]));
      port.postMessage(reply, moved as ArrayBuffer[]);
    } catch (error) {
      const e = error instanceof Error ? error : new Error(String(error));
      const reply: DecodeReply = { id: request.id, error: { message: e.message, stack: e.stack } };
      port.postMessage(reply);
    }
  });
});
