import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NODE_COUNTERS_EVERY_MS, ThrottledRead } from '../../../src/metrics/citus-snapshot.js';

describe('ThrottledRead (Citus nodes\' counters, costly to read)', () => {
  it('reads at most every everyMs, gives the last value between, and reads anew when asked fresh', async () => {
    let clock = 0;
    let reads = 0;
    const r = new ThrottledRead(async (client: string) => `${client}#${++reads}`, 10_000, () => clock);
    assert.equal(await r.read('c', false), 'c#1', 'the first read always reads');
    clock = 9_999;
    assert.equal(await r.read('c', false), 'c#1', 'within the interval: the last value');
    assert.equal(await r.read('c', true), 'c#2', 'fresh: read now');
    clock = 19_998;
    assert.equal(await r.read('c', false), 'c#2', 'the interval counts from the last read, fresh or not');
    clock = 19_999;
    assert.equal(await r.read('d', false), 'd#3', 'once the interval is over: read, through the client given');
    assert.equal(reads, 3);
  });

  it('a failed read is not remembered: the next one reads', async () => {
    let fail = true;
    const r = new ThrottledRead(async () => {
      if (fail) throw new Error('node down');
      return 7;
    }, NODE_COUNTERS_EVERY_MS, () => 0);
    await assert.rejects(r.read(undefined, false), /node down/);
    fail = false;
    assert.equal(await r.read(undefined, false), 7);
  });
});
