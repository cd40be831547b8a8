import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { LoadTarget } from './batching/chunk.js';
import { dbt3KeyStatements, runInParallel, type PhaseTiming } from './db/build-keys.js';
import { qualifiedName } from './db/identifiers.js';
import { connectionFailure, LoadError } from './db/load-error.js';
import { connect, type Target } from './db/target.js';
import { createTableSql } from './datasets/table-ddl.js';
import { DBT3_TABLES, type Dbt3Table } from './datasets/dbt3-schema.js';
import { distributeDbt3, hasCitus } from './datasets/dbt3-citus.js';
import { load, type LoadOptions, type LoadReporter } from './load.js';
import type { LoadSummary } from './metrics/load-counters.js';
import { runWithDurability, unsafeRefused, type DurableTable } from './durability/durability-session.js';
import { SAFE_DURABILITY, type DurabilityOptions } from './durability/presets.js';
import { copyWriter } from './writer/copy-writer.js';

export interface Dbt3LoadOptions extends Omit<LoadOptions, 'create' | 'truncate'> {
  /** Drop the eight tables (and their keys) and create them bare before loading. */
  readonly replace: boolean;
  /** Build the kit's keys and indexes after the load. */
  readonly keys: boolean;
  readonly analyze: boolean;
  readonly schema?: string;
  /** Durability preset for the load phase (keys and ANALYZE run after it is undone). */
  readonly durability?: DurabilityOptions;
}

export interface Dbt3LoadResult {
  readonly summary: LoadSummary;
  readonly phases: readonly PhaseTiming[];
}

/** `region.tbl`, `lineitem.tbl`, `lineitem.tbl.1` … (each may be gzipped: `.tbl.gz`, `.tbl.1.gz`) in a folder, by table. */
export async function findDbt3Files(dir: string): Promise<Map<Dbt3Table, string[]>> {
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch (error) {
    throw new LoadError('missing-file', `cannot read the folder ${dir}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such folder' : (error as Error).message}`);
  }
  const found = new Map<Dbt3Table, string[]>();
  for (const table of DBT3_TABLES) {
    const re = new RegExp(`^${table}\\.tbl(\\.\\d+)?(\\.gz)?$`);
    const files = names.filter((n) => re.test(n)).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
    // The same part plain and gzipped would load its rows twice.
    const parts = new Map<string, string>();
    for (const f of files) {
      const part = f.replace(/\.gz$/, '');
      const other = parts.get(part);
      if (other !== undefined) {
        throw new LoadError('bad-option', `${dir} holds both ${other} and ${f}: loading both would load ${part}'s rows twice`, { hint: 'keep one of them in the folder' });
      }
      parts.set(part, f);
    }
    if (files.length > 0) found.set(table, files.map((f) => path.join(dir, f)));
  }
  return found;
}

/**
 * The DBT-3 kit's load test: create the tables bare, load them (biggest first, one worker
 * budget), build primary keys, then foreign keys and indexes in parallel, then ANALYZE,
 * timing each phase.
 */
export async function loadDbt3(dir: string, options: Dbt3LoadOptions, target: Target, reporter?: LoadReporter): Promise<Dbt3LoadResult> {
  const files = await findDbt3Files(dir);
  if (files.size === 0) {
    throw new LoadError('missing-file', `no DBT-3 .tbl files in ${dir}`, { hint: 'expected region.tbl … lineitem.tbl (or split files such as lineitem.tbl.1, gzipped or not); make them with `pgsurge dbt3 gen`' });
  }
  const durability = options.durability ?? SAFE_DURABILITY;
  if (durability.preset === 'unsafe' && target.managed === undefined) throw unsafeRefused(target);
  const phases: PhaseTiming[] = [];
  const tables: DurableTable[] = [];
  const client = await connect(target.config).catch((e: unknown) => {
    throw connectionFailure(e, target.description);
  });
  try {
    const started = performance.now();
    for (const table of files.keys()) {
      const name = qualifiedName(table, options.schema);
      const exists = (await client.query('SELECT to_regclass($1) IS NOT NULL AS e', [name])).rows[0]?.e === true;
      if (exists && !options.replace) {
        const nonEmpty = (await client.query(`SELECT EXISTS (SELECT 1 FROM ${name}) AS e`)).rows[0]?.e === true;
        if (nonEmpty) throw new LoadError('bad-option', `table ${name} already holds rows`, { hint: 'add --replace to drop and recreate the DBT-3 tables' });
        tables.push({ table, schema: options.schema, emptiedByLoad: false });
        continue;
      }
      if (exists) await client.query(`DROP TABLE ${name} CASCADE`);
      await client.query(createTableSql(table, options.schema)!);
      tables.push({ table, schema: options.schema, emptiedByLoad: true });
    }
    // On Citus: the tables created here distributed as docs/citus.md says (src/datasets/dbt3-citus.ts).
    const created = tables.filter((t) => t.emptiedByLoad).map((t) => t.table as Dbt3Table);
    const distributed = created.length > 0 && (await hasCitus(client)) ? await distributeDbt3(client, created, options.schema) : [];
    phases.push({ phase: 'create tables', seconds: (performance.now() - started) / 1000, statements: files.size + distributed.length });
  } finally {
    await client.end();
  }

  const inputs: LoadTarget[] = [...files.entries()].flatMap(([table, paths]) =>
    paths.map((file) => ({ file, table, schema: options.schema, format: 'tbl' as const })),
  );
  const durable = await runWithDurability(target, durability, tables, { writer: options.writer ?? copyWriter, workers: options.workers }, (writer) =>
    load(inputs, { ...options, create: false, truncate: false, writer }, target, reporter),
  );
  const summary: LoadSummary = { ...durable.result, durability: durable.durability };
  phases.push({ phase: 'load', seconds: summary.total.seconds, statements: inputs.length });
  // SET LOGGED, the restarts of --durability unsafe: part of what the load cost.
  for (const step of durable.durability.steps) phases.push({ phase: step.step, seconds: step.seconds, statements: 1 });

  if (options.keys || options.analyze) {
    const clients = await Promise.all(Array.from({ length: options.workers }, () => connect(target.config)));
    try {
      if (options.keys) {
        if (files.size < DBT3_TABLES.length) {
          throw new LoadError('missing-file', `keys need all eight DBT-3 tables; ${dir} has only ${[...files.keys()].join(', ')}`, { hint: 'add --no-keys to load without them' });
        }
        const { primaryKeys, foreignKeysAndIndexes } = dbt3KeyStatements(options.schema);
        phases.push(await runInParallel(clients, 'primary keys', primaryKeys));
        phases.push(await runInParallel(clients, 'foreign keys and indexes', foreignKeysAndIndexes));
      }
      if (options.analyze) {
        phases.push(await runInParallel(clients, 'analyze', [...files.keys()].map((t) => `ANALYZE ${qualifiedName(t, options.schema)}`)));
      }
    } finally {
      await Promise.allSettled(clients.map((c) => c.end()));
    }
  }
  return { summary, phases };
}
