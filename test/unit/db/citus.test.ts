import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeCitus, CITUS_SESSION_SETTINGS } from '../../../src/writer/citus/citus.js';
import { settingsFromEnv } from '../../../src/writer/citus/citus-load.js';
import { formatStatus } from '../../../src/cli/status-command.js';

describe('Citus facts and settings', () => {
  it('names the cluster by its nodes and the load tables\' shards', () => {
    const tables = new Map([
      [1, { oid: 1, kind: 'distributed' as const, shards: 32 }],
      [2, { oid: 2, kind: 'reference' as const, shards: 1 }],
    ]);
    assert.equal(describeCitus({ version: '12.1-1', nodes: 3, tables }), 'Citus 12.1-1 cluster: 3 nodes, 33 shards');
  });

  it('PGSURGE_CITUS_SETTINGS: unset keeps pgsurge\'s, none drops them, name=value lists replace them; a bad entry is named', () => {
    assert.equal(settingsFromEnv(undefined), CITUS_SESSION_SETTINGS);
    assert.deepEqual(settingsFromEnv('none'), []);
    assert.deepEqual(settingsFromEnv('citus.a=1, citus.b = x'), [['citus.a', '1'], ['citus.b', 'x']]);
    assert.throws(() => settingsFromEnv('oops'), /PGSURGE_CITUS_SETTINGS.*oops/);
  });
});

describe('pgsurge status', () => {
  it('one line per part: state, rows, share done, last commit', () => {
    const out = formatStatus('li', [
      { part: '1/2', state: 'completed', running: false, chunks: 3, rowsLoaded: 1500, rowsRejected: 1, rowsSkipped: 0, bytesDone: 2048, bytesTotal: 2048, lastCommit: new Date('2026-12-01T19:30:00Z') },
      { part: '2/2', state: 'running', running: true, chunks: 1, rowsLoaded: 10, rowsRejected: 0, rowsSkipped: 0, bytesDone: 1024, bytesTotal: 4096, lastCommit: undefined },
    ]);
    const lines = out.trim().split('\n');
    assert.equal(lines[0], 'load li: running, 2 parts, 1 running');
    assert.match(lines[2]!, /^1\/2\s+completed\s+1,500\s+1\s+3\s+2\.0 KB of 2\.0 KB \(100%\)\s+2026-12-01T19:30:00\.000Z$/);
    assert.match(lines[3]!, /^2\/2\s+running\s+10\s+0\s+1\s+1\.0 KB of 4\.0 KB \(25%\)\s+-$/);
  });
});
