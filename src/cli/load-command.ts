import { InvalidArgumentError, Option, type Command } from 'commander';
import { formatBytes, formatCount } from '../core/format-count.js';
import { LoadError } from '../core/load-error.js';
import { openTarget } from './open-target.js';
import { LoadStopped } from '../load/load-stopped.js';
import type { Format } from '../input/formats.js';
import { loadWithDurability } from '../load/durable-load.js';
import { UNSAFE_WARNING } from '../writer/durability/presets.js';
import { allReporters } from '../report/progress-line.js';
import type { LoadReporter, LoadSummary } from '../metrics/load-counters.js';
import { loadSettingsFromEnv, wireWasmFromEnv } from './load-settings.js';
import { addLoadOptions, addTargetOptions, formatOption, type LoadFlags } from './common-options.js';
import { formatDurability } from './durability-format.js';
import { EXIT, PartFailed, printError } from './errors.js';
import { addInputOptions, type InputFlags } from './input-flags.js';
import { addWriterOptions, writerSpecFromFlags, type WriterFlags } from './writer-options.js';
import { writerFor } from '../writer/writer-for.js';
import { chooseKey } from '../writer/keyed/table-key.js';
import { connect, type Target } from '../cluster/target.js';
import type { LoadTarget } from '../core/chunk.js';
import { addObserveOptions, observeWithStop, seriesLabel, stoppedEvent, summaryEvent, writeReportIfAsked, type ObserveFlags } from './observe-options.js';
import { DEFAULT_CHUNK_BYTES, parseLoadId, parseSample, UPSERT_CHUNK_BYTES } from './parse-options.js';
import { planInputs } from './plan-inputs.js';
import { rerunCommand, resumeCommand, startOverCommand } from './resume-command.js';
import { formatDiagnosis, formatQuietSummary, formatSummary, rejectLines } from '../report/summary-format.js';
import { parsePart, partLabel, type LoadPart } from '../input/load-part.js';
import { CITUS_ROUTES, type CitusRoute } from '../writer/citus/plan-routing.js';
import { wireLines } from '../wire/wire-report.js';

interface LoadCommandFlags extends LoadFlags, InputFlags, ObserveFlags, WriterFlags {
  format?: Format;
  table?: string;
  schema?: string;
  create?: boolean;
  sample?: number | 'all';
  distributeBy?: string;
  dryRun?: boolean;
  truncate?: boolean;
  rejectFile?: string;
  loadId?: string;
  resume?: boolean;
  again?: boolean;
  ledger: boolean;
  part?: LoadPart;
  citusRoute: CitusRoute;
}

export function registerLoadCommand(program: Command): void {
  const cmd = program
    .command('load')
    .description('stream files (tbl, csv, text, NDJSON, JSON arrays, Parquet; .gz too) into PostgreSQL through parallel COPY (or batched INSERT with --mode insert; upserts and deletes by key with --on-conflict update and --mode delete); bad rows go to a reject file, and a stopped load resumes where it stopped')
    .argument('<file...>', 'input files; `-` reads stdin')
    .addOption(formatOption())
    .option('-t, --table <name>', 'target table, as psql writes it: table or schema.table, "Quoted Name" keeps case (default: from the file name, lineitem.tbl.3 → lineitem)')
    .option('--schema <name>', 'schema of the target table (default: the search_path)')
    .option('--create', 'create a missing table: the eight DBT-3 tables and narrow from their built-in DDL, any other from the file (Parquet: its schema; CSV, text, .tbl: the dialect and column types sniffed from a sample across the file, which the load then reads with unless a flag says otherwise; NDJSON/JSON: the keys and types of the sampled objects); `pgsurge schema <file>` prints it')
    .addOption(new Option('--sample <N|all>', 'with --create: records to sniff a text or JSON file\'s types from, taken across the file (default: the sniffer\'s); all reads the whole file first, so no later value can fail its column\'s type').argParser(parseSample))
    .option('--distribute-by <column>', 'Citus: a table --create makes becomes a distributed table on this column (create_distributed_table)')
    .option('--dry-run', 'read the whole input against the table (as --create would make it, when missing) and report what would load and what would be rejected, with the reject file: every chunk is sent and rolled back, nothing is written to the table or the ledger')
    .option('--truncate', 'empty the table (and forget its earlier loads in the ledger) before loading')
    .option('--reject-file <path>', 'write rejected rows here (verbatim) and why to <path>.log, unless it holds another load\'s rows; default <table>.<load id>.rejects beside the input, a file of its own per load')
    .addOption(new Option('--load-id <id>', 'the ledger id of this load (default: from the tables, the files\' identities and how they are read, so rerunning the same command resumes)').argParser(parseLoadId))
    .addOption(new Option('--resume', 'resume an earlier, stopped run of this load (it must exist): committed byte ranges are skipped').conflicts('truncate'))
    .addOption(new Option('--again', 'load files loaded before again, on top of the rows already there, as a new load (without it, a file loaded before resumes, says it is loaded, loads only rows appended since, or is refused)').conflicts(['truncate', 'resume', 'loadId']))
    .addOption(
      new Option('--part <K/N>', 'load only the K-th of N record-aligned byte-range shares of every input: N pgsurge processes (on one host or several) load the inputs together under one load id; each part resumes on its own, `pgsurge status <load id>` shows them all').argParser((v) => {
        const part = parsePart(v);
        if (typeof part === 'string') throw new InvalidArgumentError(part);
        return part;
      }),
    )
    .addOption(
      new Option('--citus-route <how>', 'Citus: auto routes each row of a hash-distributed table to its shard\'s node itself (one transaction per chunk and node, with a ledger row on that node; shard moves wait for the load to end) where it can, else through the coordinator; client insists (exit 2 where it cannot); coordinator always COPYs through the coordinator')
        .choices(CITUS_ROUTES)
        .default('auto'),
    )
    .option('--no-ledger', 'no ledger (schema pgsurge) in the target database, for a user who may not create it: rejects still work, but a stopped load cannot be resumed');
  addInputOptions(cmd);
  addLoadOptions(cmd);
  const chunkSize = cmd.options.find((o) => o.long === '--chunk-size');
  if (chunkSize) chunkSize.defaultValueDescription = `${formatBytes(DEFAULT_CHUNK_BYTES)}; ${formatBytes(UPSERT_CHUNK_BYTES)} with --on-conflict update`;
  addWriterOptions(cmd);
  addObserveOptions(cmd);
  addTargetOptions(cmd);
  cmd.addHelpText(
    'after',
    `
Rejects, resume and faults:
  A row the server refuses (bad date, bad number, wrong column count, invalid UTF-8, a
  violated constraint) is cut out of its chunk and written verbatim to the reject file,
  with file, line, byte offset, SQLSTATE, column and message in <reject file>.log; the
  rest of the chunk loads. Each chunk commits with a row in the ledger (schema pgsurge in
  the target database), so a crashed or stopped load resumes exactly: rerun the same
  command, or use the resume command pgsurge prints. Lost connections and server
  restarts are retried for --retry-for; Ctrl-C rolls back the chunks in flight.
  Rerun after it completed: one line, nothing loaded; after the file grew: only the rows
  appended. Files loaded before, read with other options (--header, --delimiter, …,
  --on-conflict) or changed: refused before loading (exit 2); --again loads them on top.

Exit codes: 0 every row loaded, 3 loaded but some rows rejected (see the reject file),
  1 failed or stopped (what was committed stays; the message gives the resume command),
  2 bad command line or a refused rerun, 130 interrupted (Ctrl-C, SIGTERM or SIGHUP).

Examples:
  pgsurge load lineitem.tbl --create          # into the managed cluster, table lineitem
  pgsurge load trips.parquet --create         # the table from the Parquet schema (pgsurge schema trips.parquet prints it)
  pgsurge load sales.csv --create --dry-run   # the dialect and types sniffed; what would load or be rejected, nothing written
  pgsurge load data.csv -t events --db postgresql://me@db1/prod -w 4
  pgsurge dbt3 gen --scale 1 --tables lineitem --out - | pgsurge load - -t lineitem -f tbl --create
  pgsurge load events.csv --mode insert --insert-style values --batch-rows 1000 --on-conflict skip
  pgsurge load events.ndjson.gz -t events --ignore-extra-keys
  pgsurge load export.json --json-path data.items -t items
  pgsurge load people.csv --header match --encoding WIN1252 --null NA`,
  );
  cmd.action(async (files: string[], given: LoadCommandFlags) => {
    // An upsert's chunks are smaller unless --chunk-size says otherwise.
    const flags = given.onConflict === 'update' && cmd.getOptionValueSource('chunkSize') === 'default' ? { ...given, chunkSize: UPSERT_CHUNK_BYTES } : given;
    try {
      await runLoad(files, flags);
    } catch (error) {
      // A part that stopped with a summary printed its resume command; any other error of a part names it and says how to rerun it.
      if (flags.part === undefined || error instanceof LoadStopped) throw error;
      throw new PartFailed(partLabel(flags.part), error, rerunCommand(process.argv.slice(2)));
    }
  });
}

/**
 * `--mode delete`: a file read by position (no --columns, no --header match, not JSON or
 * Parquet) holds the key's columns, those of --key or else the table's primary key (or its
 * only unique key).
 */
async function keyColumnInputs(inputs: readonly LoadTarget[], key: readonly string[] | undefined, target: Target): Promise<LoadTarget[]> {
  const byPosition = (i: LoadTarget): boolean => i.columns === undefined && i.input?.header !== 'match' && i.format !== 'json' && i.format !== 'ndjson' && i.format !== 'parquet';
  if (!inputs.some(byPosition)) return [...inputs];
  const client = key === undefined ? await connect(target.config) : undefined;
  try {
    const out: LoadTarget[] = [];
    for (const i of inputs) out.push(byPosition(i) ? { ...i, columns: key ?? (await chooseKey(client!, i.table, i.schema, undefined, '--mode delete')) } : i);
    return out;
  } finally {
    await client?.end().catch(() => undefined);
  }
}

/** `load lineitem-3f2a9c01bd completed 2026-12-06 03:10:11 UTC: 6,001,215 rows loaded, 0 rejected; nothing to load (…)`. */
function completedLine(loadId: string, c: NonNullable<LoadSummary['completed']>): string {
  const at = c.at.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  return `load ${loadId} completed ${at}: ${formatCount(c.loaded)} rows loaded, ${formatCount(c.rejected)} rejected${c.skipped > 0 ? `, ${formatCount(c.skipped)} skipped` : ''}; nothing to load (to load the files again on top: --again; to replace the table's rows: --truncate)`;
}

/** `appended since: 1,200 new rows (1,199 loaded, 1 rejected)`. */
function appendedLine(summary: LoadSummary, file: string): string {
  const f = summary.files.find((x) => x.file === file);
  const read = f?.read ?? 0;
  return `appended since: ${formatCount(read)} new row${read === 1 ? '' : 's'}${f && (f.rejected > 0 || f.skipped > 0) ? ` (${formatCount(f.loaded)} loaded, ${formatCount(f.rejected)} rejected, ${formatCount(f.skipped)} skipped)` : ''}`;
}

async function runLoad(files: string[], flags: LoadCommandFlags): Promise<void> {
  for (const [flag, given] of [['--distribute-by', flags.distributeBy], ['--sample', flags.sample]] as const) {
    if (given !== undefined && flags.create !== true) {
      throw new LoadError('bad-option', `${flag} says how --create makes a table from its file: it needs --create`, { hint: `add --create, or drop ${flag} for a table that exists` });
    }
  }
  let inputs = planInputs(files, { ...flags, input: flags });
  const writerSpec = writerSpecFromFlags(flags);
  const writer = writerFor({ ...writerSpec, workers: flags.workers, wasm: wireWasmFromEnv() });
  const target = await openTarget(flags);
  if (writerSpec.mode === 'delete') inputs = await keyColumnInputs(inputs, flags.key, target).catch(async (error: unknown) => {
    await target.release();
    throw error;
  });
  if (flags.durability === 'unsafe' && target.managed !== undefined) process.stderr.write(UNSAFE_WARNING);
  const say = !flags.quiet && !flags.json;
  if (say && target.managed !== undefined) process.stderr.write(`pgsurge: into the ${target.description}\n`);
  // What only the command line prints; the progress output and the sampler come from observeLoad.
  const messages: LoadReporter = {
    start(info) {
      if (say) process.stderr.write(flags.ledger ? `pgsurge: load ${info.loadId}${info.resumed ? ' (resuming: committed byte ranges are skipped)' : ''}\n` : 'pgsurge: load without a ledger (--no-ledger): it cannot be resumed\n');
    },
    note(message) {
      if (say) process.stderr.write(`pgsurge: note: ${message}\n`);
    },
    // A warning is not progress: -q and --json (whose stdout is the summary) show it too.
    warning(message) {
      process.stderr.write(`pgsurge: warning: ${message}\n`);
    },
    retrying(info) {
      if (!say) return;
      const { file, byteOffset } = info.chunk.location;
      process.stderr.write(`pgsurge: lost the connection loading ${file} at byte ${byteOffset} (${(info.error as Error).message}); retry ${info.attempt} in ${info.waitMs} ms on a new connection\n`);
    },
  };
  // Ctrl-C, SIGTERM, SIGHUP: stop reading, roll back the chunks in flight, undo a durability
  // preset, print the resume command. A second signal exits at once.
  const { stop, observed } = await observeWithStop(flags, target, 'the chunks in flight');
  try {
    const summary = await loadWithDurability(
      inputs,
      {
        workers: flags.workers,
        chunkBytes: flags.chunkSize,
        create: flags.create === true,
        ...(flags.sample !== undefined ? { sample: flags.sample } : {}),
        ...(flags.distributeBy !== undefined ? { distributeBy: flags.distributeBy } : {}),
        ...(flags.dryRun ? { dryRun: true } : {}),
        truncate: flags.truncate === true,
        loadId: flags.loadId,
        resume: flags.resume === true,
        again: flags.again === true,
        onConflict: flags.onConflict,
        ledger: flags.ledger,
        maxRejects: flags.maxRejects,
        rejectFile: flags.rejectFile,
        rejectDir: flags.rejectDir,
        retryForMs: flags.retryFor,
        signal: stop.signal,
        durability: { preset: flags.durability, unlogged: flags.unlogged === true },
        writer,
        ...(flags.part ? { part: flags.part } : {}),
        citusRoute: flags.citusRoute,
        ...loadSettingsFromEnv(),
      },
      target,
      allReporters(messages, observed.reporter),
    );
    if (summary.completed) {
      // A rerun of a load that completed: one line, nothing loaded, exit 0.
      if (flags.json) process.stdout.write(`${summaryEvent(summary)}\n`);
      else process.stdout.write(`${completedLine(summary.loadId ?? '', summary.completed)}\n`);
      return;
    }
    if (say) for (const file of summary.appended ?? []) process.stderr.write(`pgsurge: ${file} grew since it was loaded: ${appendedLine(summary, file)}\n`);
    const tables = inputs.map((i) => i.table).filter((t, k, all) => all.indexOf(t) === k).join(', ');
    const finished = await observed.finish(seriesLabel(flags.label, files));
    const { series, diagnosis } = await observed.diagnose(summary, finished, { input: files.includes('-') ? 'stream' : 'files' });
    const report =
      series &&
      observed.report({
        title: `pgsurge load: ${series.name} into ${tables}`,
        settings: { workers: flags.workers, chunkBytes: flags.chunkSize, mode: writer.name, ...(writerSpec.mode === 'copy' ? { wire: flags.wire ?? 'auto' } : {}), durability: flags.durability, unlogged: flags.unlogged === true },
        series: [series],
        notes: [...wireLines(summary.wire), ...(diagnosis ? [diagnosis.verdict.text, ...(diagnosis.againstProbe ?? [])] : [])],
      });
    const written = await writeReportIfAsked(flags.report, report);
    const dry = flags.dryRun ? 'dry run: every chunk below was sent and rolled back; nothing was written to the table or the ledger\n' : '';
    // the last sample's sizes (read after the last row; a partitioned table's summed over its partitions)
    const last = finished?.samples.at(-1);
    const finalSizes = last ? { finalSizes: { heapBytes: last.heapBytes, indexBytes: last.indexBytes } } : {};
    if (flags.json) process.stdout.write(`${summaryEvent(summary, { ...(flags.dryRun ? { dryRun: true } : {}), ...finalSizes, ...(written ? { report: written } : {}), ...(diagnosis ? { diagnosis } : {}) })}\n`);
    else if (flags.quiet) process.stdout.write(`${flags.dryRun ? 'dry run (rolled back): ' : ''}${formatQuietSummary(summary)}\n`);
    else {
      process.stdout.write(`${dry}${formatSummary(summary)}\n${formatDurability(summary)}\n${diagnosis ? `${formatDiagnosis(diagnosis)}\n` : ''}`);
      if (written) process.stderr.write(`report: ${[written].flat().join(', ')}\n`);
    }
    const rejected = summary.total.rejected + (summary.files ?? []).reduce((a, f) => a + f.earlier.rejected, 0);
    if (flags.dryRun) process.stderr.write(`pgsurge: dry run: ${formatCount(summary.total.loaded)} row${summary.total.loaded === 1 ? '' : 's'} would load and ${formatCount(rejected)} would be rejected; nothing was written to the table or the ledger\n`);
    if (rejected > 0) {
      process.stderr.write(`pgsurge: ${formatCount(rejected)} row${rejected === 1 ? '' : 's'} ${flags.dryRun ? 'would be ' : ''}rejected: see ${(summary.rejectFiles ?? []).map((f) => f.path).join(', ') || 'the reject file'} and its .log\n`);
      for (const hint of summary.hints ?? []) process.stderr.write(`  hint: ${hint}\n`);
      process.exitCode = EXIT.rejects;
    }
  } catch (error) {
    if (!(error instanceof LoadStopped)) throw error;
    await observed.close();
    const argv = process.argv.slice(2);
    const next = error.details.startOver ? { startOver: startOverCommand(argv) } : error.loadId !== undefined ? { resume: resumeCommand(argv, error.loadId) } : {};
    // --json: the last line is still the summary event (what was loaded before the stop), with what stopped it.
    if (flags.json) process.stdout.write(`${summaryEvent(error.summary, { stopped: stoppedEvent(error, next) })}\n`);
    else process.stdout.write(`${flags.quiet ? [formatQuietSummary(error.summary), ...rejectLines(error.summary)].join('\n') : formatSummary(error.summary)}\n`);
    printError(error, flags.verbose === true, process.stderr, flags.part ? `part ${partLabel(flags.part)}: ` : '');
    if (next.startOver !== undefined) process.stderr.write(`  after fixing the input: ${next.startOver}\n`);
    else if (next.resume !== undefined) process.stderr.write(`  resume with: ${next.resume}\n`);
    else process.stderr.write('  (loaded without the ledger: this load cannot be resumed; the rows committed so far stay)\n');
    process.exitCode = error.interrupted ? EXIT.interrupted : EXIT.failed;
  } finally {
    stop.off();
    await observed.close();
    await target.release();
  }
}
