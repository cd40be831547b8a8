import type pg from 'pg';
import type { ChunkWriter } from '../chunk-writer.js';
import { LoadError } from '../../core/load-error.js';
import { CITUS_SESSION_SETTINGS, citusSessionWriter, describeCitus, detectCitus } from './citus.js';

/** What a load does differently when its tables are Citus tables. */
export interface CitusLoad {
  /** `Citus 12.1-1 cluster: 3 nodes, 32 shards`, for the summary and the reports. */
  readonly description: string;
  /** The chunk writer with the Citus session settings. */
  writer(inner: ChunkWriter): ChunkWriter;
  /** The load's tables that Citus holds (distributed, reference, local), by oid. */
  readonly tables: ReadonlySet<number>;
}

/**
 * Undefined unless Citus manages one of the load's tables. Then, besides the session
 * settings, the load does not defer its commits' WAL flushes: a deferred commit is made
 * durable by the coordinator's later flush, but the rows are on the workers, whose
 * commits the coordinator's WAL position says nothing about.
 */
export async function citusLoad(control: pg.Client, tableOids: readonly number[], options: { writer: ChunkWriter; ledger: boolean; settings?: CitusSettings | undefined }): Promise<CitusLoad | undefined> {
  const citus = await detectCitus(control, tableOids);
  if (citus === undefined || citus.tables.size === 0) return undefined;
  // Citus commits a COPY into its tables in two phases always (the rows' PREPARE on the
  // workers, then the coordinator's commit with the ledger row, then COMMIT PREPARED;
  // recovery finishes what a crash interrupts), but an INSERT that reaches one worker in
  // one phase: the worker commits before the coordinator commits the ledger row, and a
  // crash between the two would leave rows the ledger does not know, loaded again on resume.
  if (options.ledger && options.writer.name !== 'copy') {
    throw new LoadError('bad-option', `--mode insert into a Citus table cannot commit each chunk's ledger row with its rows exactly once (Citus commits an INSERT that reaches one worker in one phase, before the coordinator's ledger row)`, {
      hint: 'load with COPY (the default; Citus commits it in two phases), or add --no-ledger',
    });
  }
  const settings = options.settings ?? CITUS_SESSION_SETTINGS;
  return { description: describeCitus(citus), writer: (inner) => (settings.length === 0 ? inner : citusSessionWriter(inner, settings)), tables: new Set(citus.tables.keys()) };
}

/** The session settings a load's connections to a Citus cluster get: `name`, `value`. */
export type CitusSettings = readonly (readonly [string, string])[];

/**
 * `PGSURGE_CITUS_SETTINGS`, for measuring (bench/citus.ts --ab), read by the CLI: `none` leaves Citus's
 * session settings at the server's defaults; `name=value,…` uses these instead of pgsurge's.
 */
export function settingsFromEnv(value: string | undefined): CitusSettings {
  if (value === undefined || value === '') return CITUS_SESSION_SETTINGS;
  if (value === 'none') return [];
  return value.split(',').map((kv) => {
    const at = kv.indexOf('=');
    if (at <= 0) throw new Error(`PGSURGE_CITUS_SETTINGS: expected name=value, got \`${kv}\``);
    return [kv.slice(0, at).trim(), kv.slice(at + 1).trim()] as const;
  });
}
