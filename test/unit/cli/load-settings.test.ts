import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { citusFaultsFromEnv, loadSettingsFromEnv, wireWasmFromEnv } from '../../../src/cli/load-settings.js';

describe('what a load takes from the environment (read in the CLI only)', () => {
  it('nothing set: pgsurge\'s defaults, no faults', () => {
    assert.deepEqual(loadSettingsFromEnv({}), { walFlusher: true });
    assert.equal(wireWasmFromEnv({}), true);
  });

  it('PGSURGE_WAL_FLUSHER=0, PGSURGE_WIRE_WASM=0 turn them off', () => {
    assert.equal(loadSettingsFromEnv({ PGSURGE_WAL_FLUSHER: '0' }).walFlusher, false);
    assert.equal(wireWasmFromEnv({ PGSURGE_WIRE_WASM: '0' }), false);
    assert.equal(wireWasmFromEnv({ PGSURGE_WIRE_WASM: '1' }), true);
  });

  it('PGSURGE_PARQUET_DECODE_THREADS=1 or 0 decides over the rule; anything else leaves the rule', () => {
    assert.deepEqual(loadSettingsFromEnv({ PGSURGE_PARQUET_DECODE_THREADS: '1' }).parquet, { decodeThreads: true });
    assert.deepEqual(loadSettingsFromEnv({ PGSURGE_PARQUET_DECODE_THREADS: '0' }).parquet, { decodeThreads: false });
    assert.equal('parquet' in loadSettingsFromEnv({ PGSURGE_PARQUET_DECODE_THREADS: 'yes' }), false);
  });

  it('PGSURGE_PARQUET_WASM=0: Parquet without the WebAssembly kernels', () => {
    assert.deepEqual(loadSettingsFromEnv({ PGSURGE_PARQUET_WASM: '0', PGSURGE_PARQUET_DECODE_THREADS: '1' }).parquet, { decodeThreads: true, wasm: false });
    assert.equal('parquet' in loadSettingsFromEnv({ PGSURGE_PARQUET_WASM: '1' }), false);
  });

  it('PGSURGE_CITUS_SETTINGS: none drops pgsurge\'s settings, name=value lists replace them, a bad entry is named', () => {
    assert.deepEqual(loadSettingsFromEnv({ PGSURGE_CITUS_SETTINGS: 'none' }).citusSettings, []);
    assert.deepEqual(loadSettingsFromEnv({ PGSURGE_CITUS_SETTINGS: 'citus.a=1' }).citusSettings, [['citus.a', '1']]);
    assert.throws(() => loadSettingsFromEnv({ PGSURGE_CITUS_SETTINGS: 'oops' }), /PGSURGE_CITUS_SETTINGS.*oops/);
  });

  it('PGSURGE_FAULT_CITUS_UNREACHABLE=1: nodes unreachable', () => {
    assert.deepEqual(loadSettingsFromEnv({ PGSURGE_FAULT_CITUS_UNREACHABLE: '1' }).faults, { unreachableNodes: true });
    assert.equal(citusFaultsFromEnv({ PGSURGE_FAULT_CITUS_UNREACHABLE: '0' }), undefined);
  });

  it('PGSURGE_FAULT_CITUS_KILL_AFTER_PART=n: the n-th node part committed (counted over the process) kills it, once', () => {
    let kills = 0;
    const faults = citusFaultsFromEnv({ PGSURGE_FAULT_CITUS_KILL_AFTER_PART: '3' }, () => kills++)!;
    assert.equal(faults.unreachableNodes, undefined);
    faults.partCommitted!();
    faults.partCommitted!();
    assert.equal(kills, 0);
    faults.partCommitted!();
    assert.equal(kills, 1);
    faults.partCommitted!();
    assert.equal(kills, 1);
  });
});
