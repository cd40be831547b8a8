/**
 * A worker thread that writes blocks on request and hands each buffer back without a copy.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { buildContext } from './context.js';
import { writeBlock } from './block.js';
import type { BlockRequest, BlockReply, WorkerSetup } from './worker-pool.js';

const setup = workerData as WorkerSetup;
const ctx = buildContext(setup.scale, setup.seed);
const port = parentPort;
if (port === null) throw new Error('block-worker.js must run in a worker thread');

port.on('message', (request: BlockRequest) => {
  const { buf, rows } = writeBlock(ctx, request.table, request.start, request.end);
  const reply: BlockReply = { id: request.id, buffer: buf.buffer as ArrayBuffer, length: buf.length, rows };
  port.postMessage(reply, [reply.buffer]);
});
