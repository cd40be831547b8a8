import type { LoadTarget } from '../core/chunk.js';
import { qualifiedName } from '../core/identifiers.js';
import { connectionFailure } from '../core/load-error.js';
import { prepareTable, withTableCreationLocks } from './table-check.js';
import { preflight } from './preflight.js';
import { connect, type Target } from '../cluster/target.js';
import { load } from './load.js';
import { describeForCreate } from '../input/table-from-file.js';
import { checkLedgerOptions, type LoadOptions } from './load-options.js';
import type { LoadReporter } from '../metrics/load-counters.js';
import type { LoadSummary } from '../metrics/load-counters.js';
import { copyWriter } from '../writer/copy-writer.js';
import { runWithDurability, unsafeRefused, type DurableTable } from '../writer/durability/durability-session.js';
import type { DurabilityOptions } from '../writer/durability/presets.js';

/**
 * `load()` under a durability preset. The tables are created/truncated here rather than in
 * `load()`, because the preset needs to know which ones this load emptied (for FREEZE) and
 * has to make them unlogged before the first row.
 */
export async function loadWithDurability(
  named: readonly LoadTarget[],
  options: LoadOptions & { readonly durability: DurabilityOptions },
  target: Target,
  reporter?: LoadReporter,
): Promise<LoadSummary> {
  const { durability } = options;
  // A dry run changes nothing: no preset either.
  if (options.dryRun) return load(named, options, target, reporter);
  // Before any preset changes the server or the tables.
  checkLedgerOptions(options);
  if (durability.preset === 'safe' && !durability.unlogged) {
    const { result, durability: report } = await runWithDurability(target, durability, [], { writer: options.writer ?? copyWriter, workers: options.workers }, (writer) =>
      load(named, { ...options, writer }, target, reporter),
    );
    return { ...result, durability: report };
  }
  if (durability.preset === 'unsafe' && target.managed === undefined) throw unsafeRefused(target);
  // --create of a table pgsurge has no DDL for: made from its file here, and read by load() as described.
  const inputs = options.create ? await describeForCreate(named, options) : named;
  const tables = await prepareTables(inputs, options, target);
  const { result, durability: report } = await runWithDurability(target, durability, tables, { writer: options.writer ?? copyWriter, workers: options.workers }, (writer) =>
    // The tables are ready; `truncate` still goes through so the ledger forgets their earlier loads (TRUNCATE of an empty table is cheap).
    load(inputs, { ...options, create: false, writer }, target, reporter),
  );
  return { ...result, durability: report };
}

async function prepareTables(inputs: readonly LoadTarget[], options: { create: boolean; truncate: boolean; workers: number; distributeBy?: string }, target: Target): Promise<DurableTable[]> {
  const client = await connect(target.config).catch((error: unknown) => {
    throw connectionFailure(error, target.description);
  });
  try {
    await preflight(client, inputs, options);
    const tables = new Map<string, DurableTable>();
    // --create: holding the tables' creation locks (src/core/create-once.ts), one transaction.
    await withTableCreationLocks(client, inputs, options.create, async () => {
      await client.query('BEGIN');
      try {
        for (const input of inputs) {
          const key = JSON.stringify([input.schema ?? null, input.table]);
          if (tables.has(key)) continue;
          const existed = (await client.query('SELECT to_regclass($1) IS NOT NULL AS e', [qualifiedName(input.table, input.schema)])).rows[0]?.e === true;
          await prepareTable(client, input.table, input.schema, { ...options, fromFile: input.described?.createSql });
          tables.set(key, { table: input.table, schema: input.schema, emptiedByLoad: options.truncate || !existed });
        }
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
    return [...tables.values()];
  } finally {
    await client.end();
  }
}
