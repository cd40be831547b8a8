import type { LoadOptions } from '../load/load-options.js';
import type { CitusFaults } from '../writer/citus/citus-faults.js';
import { settingsFromEnv } from '../writer/citus/citus-load.js';

/** What a load takes from the environment: settings for measuring, and a test's faults. */
export type LoadSettings = Pick<LoadOptions, 'walFlusher' | 'citusSettings' | 'parquet' | 'faults'>;

/**
 * The variables a load (`load`, `dbt3 load`, `demo`) reads, as its options:
 * - `PGSURGE_WAL_FLUSHER=0` (for measuring): commits that did not wait for their WAL flush are left to the walwriter;
 * - `PGSURGE_CITUS_SETTINGS` (for measuring): `none` or `name=value,…`, the Citus session settings instead of pgsurge's;
 * - `PGSURGE_PARQUET_DECODE_THREADS=1` or `0` (for measuring both): Parquet decoded in threads or not, instead of the rule;
 * - `PGSURGE_PARQUET_WASM=0` (for measuring): Parquet decoded without the WebAssembly kernels;
 * - `PGSURGE_FAULT_CITUS_*` (tests only): faults in a routed Citus load (`citusFaultsFromEnv`).
 */
export function loadSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): LoadSettings {
  const threads = env.PGSURGE_PARQUET_DECODE_THREADS;
  const parquet = { ...(threads === '1' || threads === '0' ? { decodeThreads: threads === '1' } : {}), ...(env.PGSURGE_PARQUET_WASM === '0' ? { wasm: false } : {}) };
  const faults = citusFaultsFromEnv(env);
  return {
    walFlusher: env.PGSURGE_WAL_FLUSHER !== '0',
    ...(env.PGSURGE_CITUS_SETTINGS ? { citusSettings: settingsFromEnv(env.PGSURGE_CITUS_SETTINGS) } : {}),
    ...(Object.keys(parquet).length > 0 ? { parquet } : {}),
    ...(faults ? { faults } : {}),
  };
}

/**
 * Tests only (test/citus/citus-route.test.ts):
 * - `PGSURGE_FAULT_CITUS_UNREACHABLE=1`: pgsurge's first connection to each node goes where nothing listens;
 * - `PGSURGE_FAULT_CITUS_KILL_AFTER_PART=n`: a chunk's node parts commit one after another, and this
 *   process is killed (SIGKILL) right after the n-th part commits, leaving a chunk committed on some nodes and not others.
 */
export function citusFaultsFromEnv(env: NodeJS.ProcessEnv, kill: () => void = () => process.kill(process.pid, 'SIGKILL')): CitusFaults | undefined {
  const unreachable = env.PGSURGE_FAULT_CITUS_UNREACHABLE === '1';
  const killAfter = env.PGSURGE_FAULT_CITUS_KILL_AFTER_PART ? Number(env.PGSURGE_FAULT_CITUS_KILL_AFTER_PART) : undefined;
  if (!unreachable && killAfter === undefined) return undefined;
  let committed = 0;
  return {
    ...(unreachable ? { unreachableNodes: true } : {}),
    ...(killAfter !== undefined ? { partCommitted: () => void (++committed === killAfter && kill()) } : {}),
  };
}

/** `PGSURGE_WIRE_WASM=0` (for measuring): records are split into binary tuples by JavaScript only, not the WebAssembly fast path. */
export function wireWasmFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.PGSURGE_WIRE_WASM !== '0';
}
