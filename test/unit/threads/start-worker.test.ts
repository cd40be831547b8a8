import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { describe, it } from 'node:test';
import { startWorker } from '../../../src/core/start-worker.js';

const ECHO = new URL(`data:text/javascript,${encodeURIComponent("import { parentPort, workerData } from 'node:worker_threads'; parentPort.postMessage(['up', workerData, process.execArgv, process.throwDeprecation === true]);")}`);

async function reply(execArgv: readonly string[]): Promise<unknown> {
  const w = startWorker(ECHO, { workerData: 7 }, execArgv);
  const [message] = await once(w, 'message');
  await w.terminate();
  return message;
}

describe('startWorker', () => {
  it('passes the flags a thread can take (seen taking effect inside it), and its data', async () => {
    assert.deepEqual(await reply(['--throw-deprecation']), ['up', 7, ['--throw-deprecation'], true]);
  });
  it('a process-only flag (--trace-gc): the thread starts without the flags instead of throwing', async () => {
    assert.throws(() => new Worker(ECHO, { execArgv: ['--trace-gc'] }), { code: 'ERR_WORKER_INVALID_EXEC_ARGV' });
    assert.deepEqual(await reply(['--trace-gc', '--throw-deprecation']), ['up', 7, [], false]);
  });
  it('leaves out --input-type (node -e callers pass it)', async () => {
    assert.deepEqual(await reply(['--input-type=module', '--throw-deprecation']), ['up', 7, ['--throw-deprecation'], true]);
  });
});

