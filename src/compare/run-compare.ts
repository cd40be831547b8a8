import type pg from 'pg';
import { connect, type Target } from '../cluster/target.js';
import { qualifiedName } from '../core/identifiers.js';
import { connectionFailure, LoadError } from '../core/load-error.js';
import { prepareTable, withTableCreationLocks } from '../load/table-check.js';
import type { Format } from '../input/formats.js';
import { load } from '../load/load.js';
import type { LoadOptions } from '../load/load-options.js';
import { mbPerSecond, perSecond } from '../metrics/rates.js';
import type { OnConflict } from '../writer/on-conflict.js';
import { writerFor } from '../writer/writer-for.js';
import { variantWriterSpec, type Variant } from './variants.js';
import { formatTableWire } from '../wire/wire-report.js';
import { Sampler } from '../metrics/sampler.js';
import type { SampleEvery } from '../metrics/sample-every.js';
import type { Sample } from '../metrics/series.js';
import type { ServerFacts } from '../metrics/server-snapshot.js';

export interface CompareOptions {
  readonly file: string;
  readonly format: Format;
  /** The base table: each variant loads into a fresh copy of its definition. */
  readonly table: string;
  readonly schema: string | undefined;
  /** Create the base table from the built-in DDL if it is missing. */
  readonly create: boolean;
  readonly variants: readonly Variant[];
  readonly repeat: number;
  /** Workers for variants that do not name theirs. */
  readonly workers: number;
  readonly chunkBytes: number;
  /** Only the input's first n rows. */
  readonly maxRows?: number;
  readonly onConflict: OnConflict;
  /** Leave each variant's table (of the last round) in place. */
  readonly keep: boolean;
  /** COPY's records split by the WebAssembly fast path (`WriterSpec.wasm`; default true). */
  readonly wasm?: boolean;
  /** Settings every variant's load takes (for measuring; the CLI's, from the environment). */
  readonly settings?: Pick<LoadOptions, 'walFlusher' | 'citusSettings' | 'parquet'>;
  /** Sample each run's load on a connection of its own (for a report): every so often, no wait looks. */
  readonly sampleEvery?: SampleEvery;
}

/** One load of one variant. */
export interface VariantRun {
  readonly round: number;
  readonly rows: number;
  readonly skipped: number;
  readonly bytes: number;
  readonly seconds: number;
  readonly rowsPerSecond: number;
  readonly mbPerSecond: number;
  /** WAL written between the load's start and end: cluster-wide, so anything else running on the server counts too. */
  readonly walBytes: number;
  /** This process's user + system CPU seconds during the load (reading, framing, decoding, the protocol). */
  readonly clientCpuSeconds: number;
  /** `pg_total_relation_size` of the loaded table: heap, indexes, TOAST. */
  readonly tableBytes: number;
  /** COPY's wire for this run (`binary`, or `text (why)`), with its fallback chunks; absent for INSERT. */
  readonly wire?: string;
}

export interface VariantResult {
  readonly variant: Variant;
  /** The fresh table this variant loaded into. */
  readonly table: string;
  readonly workers: number;
  readonly runs: readonly VariantRun[];
  readonly rows: number;
  readonly median: { readonly rowsPerSecond: number; readonly mbPerSecond: number; readonly walBytesPerRow: number; readonly clientCpuSeconds: number; readonly tableBytes: number; readonly seconds: number };
  readonly min: { readonly rowsPerSecond: number };
  readonly max: { readonly rowsPerSecond: number };
  /** Median rows/s over the fastest variant's median rows/s. */
  readonly ratioToFastest: number;
  /** Median over the rounds of (this variant's rows/s ÷ the first variant's rows/s in the same round). */
  readonly pairedRatioToFirst: number;
}

export interface CompareResult {
  readonly file: string;
  readonly format: Format;
  readonly table: string;
  readonly target: string;
  readonly serverVersion: string;
  readonly repeat: number;
  readonly maxRows: number | undefined;
  readonly onConflict: OnConflict;
  /** The order the loads ran in: rounds of every variant, A B C A B C … */
  readonly order: readonly string[];
  readonly results: readonly VariantResult[];
}

export interface CompareReporter {
  runDone?(info: { variant: Variant; run: VariantRun; index: number; total: number }): void;
  /** With `sampleEvery`: a run's samples, and the server's facts as its sampler read them. */
  runSampled?(info: { variant: Variant; run: VariantRun; samples: readonly Sample[]; facts: ServerFacts; spacing: Sampler['spacing'] }): void;
}

/**
 * Loads the same input once per variant per round into a fresh table with the base
 * table's definition (`CREATE TABLE … (LIKE base INCLUDING ALL)`), interleaving variants
 * round by round so drift on a busy machine hits them all alike, and measures each load.
 */
export async function runCompare(options: CompareOptions, target: Target, reporter: CompareReporter = {}): Promise<CompareResult> {
  const admin = await connect(target.config).catch((error: unknown) => {
    throw connectionFailure(error, target.description);
  });
  const base = qualifiedName(options.table, options.schema);
  const tables = options.variants.map((_, i) => variantTable(options.table, i));
  const runs: VariantRun[][] = options.variants.map(() => []);
  const order: string[] = [];
  let created = false;
  try {
    // --create: under the table's creation lock (src/core/create-once.ts).
    await withTableCreationLocks(admin, [options], options.create, () => prepareTable(admin, options.table, options.schema, { create: options.create, truncate: false }));
    // Never drop a table this command did not create.
    for (const t of tables) {
      const name = qualifiedName(t, options.schema);
      const found = await admin.query<{ oid: string | null }>('SELECT to_regclass($1)::oid AS oid', [name]);
      if (found.rows[0]?.oid != null) throw new LoadError('bad-option', `table ${name} already exists; compare loads each variant into a fresh table of that name`, { hint: `drop it first (DROP TABLE ${name}), e.g. after an earlier --keep` });
    }
    created = true;
    const serverVersion = (await admin.query<{ v: string }>('SELECT version() AS v')).rows[0]?.v ?? 'unknown';
    const total = options.repeat * options.variants.length;
    for (let round = 1; round <= options.repeat; round++) {
      for (const [i, variant] of options.variants.entries()) {
        const table = tables[i]!;
        const run = await runOnce(admin, options, target, variant, base, table, round, reporter);
        runs[i]!.push(run);
        order.push(variant.label);
        reporter.runDone?.({ variant, run, index: order.length, total });
        if (!options.keep || round < options.repeat) await admin.query(`DROP TABLE ${qualifiedName(table, options.schema)}`);
      }
    }
    return {
      file: options.file,
      format: options.format,
      table: base,
      target: target.description,
      serverVersion,
      repeat: options.repeat,
      maxRows: options.maxRows,
      onConflict: options.onConflict,
      order,
      results: summarize(options, tables, runs),
    };
  } finally {
    if (created && !options.keep) {
      for (const t of tables) await admin.query(`DROP TABLE IF EXISTS ${qualifiedName(t, options.schema)}`).catch(() => undefined);
    }
    await admin.end();
  }
}

/** `lineitem` → `lineitem_cmp1`, cut so it stays within PostgreSQL's 63-byte names. */
export function variantTable(table: string, index: number): string {
  const suffix = `_cmp${index + 1}`;
  let name = table;
  while (Buffer.byteLength(name + suffix) > 63) name = name.slice(0, -1);
  return name + suffix;
}

async function runOnce(admin: pg.Client, options: CompareOptions, target: Target, variant: Variant, base: string, table: string, round: number, reporter: CompareReporter): Promise<VariantRun> {
  const qualified = qualifiedName(table, options.schema);
  await admin.query(`CREATE TABLE ${qualified} (LIKE ${base} INCLUDING ALL)`);
  const workers = variant.workers ?? options.workers;
  const sampler = options.sampleEvery ? await Sampler.open(target, { every: options.sampleEvery, waitEveryMs: 'off' }) : undefined;
  const walBefore = await walPosition(admin);
  const cpuBefore = process.cpuUsage();
  const summary = await load(
    // --rows is the input's --limit: the first n records, read in order by one reader.
    [{ file: options.file, format: options.format, table, schema: options.schema, ...(options.maxRows !== undefined ? { input: { limit: options.maxRows } } : {}) }],
    {
      workers,
      chunkBytes: options.chunkBytes,
      create: false,
      truncate: false,
      // Each run is a fresh table measured once: no ledger to write (or to resume from).
      ledger: false,
      ...options.settings,
      writer: writerFor({ ...variantWriterSpec(variant, options.onConflict), workers, wasm: options.wasm }),
      onConflict: options.onConflict,
    },
    target,
    sampler,
  ).catch(async (error: unknown) => {
    await sampler?.stop().catch(() => undefined);
    throw error;
  });
  const samples = await sampler?.stop();
  const cpu = process.cpuUsage(cpuBefore);
  const walAfter = await walPosition(admin);
  const wal = await admin.query<{ bytes: string }>('SELECT pg_wal_lsn_diff($1, $2)::bigint AS bytes', [walAfter, walBefore]);
  const size = await admin.query<{ bytes: string }>('SELECT pg_total_relation_size($1::regclass) AS bytes', [qualified]);
  const { rows, skipped, bytes, seconds } = summary.total;
  const run: VariantRun = {
    round,
    rows,
    skipped,
    bytes,
    seconds,
    rowsPerSecond: perSecond(rows, seconds),
    mbPerSecond: mbPerSecond(bytes, seconds),
    walBytes: Number(wal.rows[0]?.bytes ?? 0),
    clientCpuSeconds: (cpu.user + cpu.system) / 1e6,
    tableBytes: Number(size.rows[0]?.bytes ?? 0),
    ...(summary.wire?.[0] !== undefined ? { wire: formatTableWire(summary.wire[0]).replace(/^[^:]*: /, '') } : {}),
  };
  if (sampler && samples) reporter.runSampled?.({ variant, run, samples, facts: sampler.facts, spacing: sampler.spacing });
  return run;
}

async function walPosition(client: pg.Client): Promise<string> {
  return (await client.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]!.lsn;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Medians per variant, ratios to the fastest and (round by round) to the first. */
export function summarize(options: Pick<CompareOptions, 'variants' | 'workers'>, tables: readonly string[], runs: readonly (readonly VariantRun[])[]): VariantResult[] {
  const first = runs[0] ?? [];
  const partial = options.variants.map((variant, i) => {
    const r = runs[i] ?? [];
    const rates = r.map((x) => x.rowsPerSecond);
    return {
      variant,
      table: tables[i] ?? '',
      workers: variant.workers ?? options.workers,
      runs: r,
      rows: median(r.map((x) => x.rows)),
      median: {
        rowsPerSecond: median(rates),
        mbPerSecond: median(r.map((x) => x.mbPerSecond)),
        walBytesPerRow: median(r.map((x) => (x.rows > 0 ? x.walBytes / x.rows : 0))),
        clientCpuSeconds: median(r.map((x) => x.clientCpuSeconds)),
        tableBytes: median(r.map((x) => x.tableBytes)),
        seconds: median(r.map((x) => x.seconds)),
      },
      min: { rowsPerSecond: Math.min(...rates) },
      max: { rowsPerSecond: Math.max(...rates) },
      pairedRatioToFirst: median(r.map((x, k) => x.rowsPerSecond / (first[k]?.rowsPerSecond ?? NaN))),
    };
  });
  const fastest = Math.max(...partial.map((p) => p.median.rowsPerSecond));
  return partial.map((p) => ({ ...p, ratioToFastest: p.median.rowsPerSecond / fastest }));
}
