import { InvalidArgumentError, Option, type Command } from 'commander';
import { formatCount } from '../core/format-count.js';
import { openTarget } from './open-target.js';
import { LoadStopped } from '../load/load-stopped.js';
import type { Format } from '../input/formats.js';
import { loadWithDurability } from '../load/durable-load.js';
import { UNSAFE_WARNING } from '../writer/durability/presets.js';
import { allReporters } from '../report/progress-line.js';
import type { LoadReporter } from '../metrics/load-counters.js';
import { loadSettingsFromEnv, wireWasmFromEnv } from './load-settings.js';
import { addLoadOptions, addTargetOptions, formatOption, type LoadFlags } from './common-options.js';
import { formatDurability } from './durability-format.js';
import { EXIT, PartFailed, printError } from './errors.js';
import { addInputOptions, type InputFlags } from './input-flags.js';
import { addWriterOptions, writerSpecFromFlags, type WriterFlags } from './writer-options.js';
import { writerFor } from '../writer/writer-for.js';
import { addObserveOptions, observeLoad, stoppedEvent, summaryEvent, writeReportIfAsked, type ObserveFlags } from './observe-options.js';
import { parseLoadId } from './parse-options.js';
import { onStopSignals } from './stop-signals.js';
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
  truncate?: boolean;
  rejectFile?: string;
  loadId?: string;
  resume?: boolean;
  ledger: boolean;
  part?: LoadPart;
  citusRoute: CitusRoute;
}

export function registerLoadCommand(program: Command): void {
  const cmd = program
    .command('load')
    .description('stream files (tbl, csv, text, NDJSON, JSON arrays; .gz too) into PostgreSQL through parallel COPY (or batched INSERT with --mode insert); bad rows go to a reject file, and a stopped load resumes where it stopped')
    .argument('<file...>', 'input files; `-` reads stdin')
    .addOption(formatOption())
    .option('-t, --table <name>', 'target table, as psql writes it: table or schema.table, "Quoted Name" keeps case (default: from the file name, lineitem.tbl.3 → lineitem)')
    .option('--schema <name>', 'schema of the target table (default: the search_path)')
    .option('--create', 'create a missing table from the built-in DDL (the eight DBT-3 tables, narrow)')
    .option('--truncate', 'empty the table (and forget its earlier loads in the ledger) before loading')
    .option('--reject-file <path>', 'write rejected rows here (verbatim) and why to <path>.log, unless it holds another load\'s rows; default <table>.<load id>.rejects beside the input, a file of its own per load')
    .addOption(new Option('--load-id <id>', 'the ledger id of this load (default: from the tables and the files\' identities, so rerunning the same command resumes)').argParser(parseLoadId))
    .addOption(new Option('--resume', 'resume an earlier, stopped run of this load (it must exist): committed byte ranges are skipped').conflicts('truncate'))
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

Exit codes: 0 every row loaded, 3 loaded but some rows rejected (see the reject file),
  1 failed or stopped (what was committed stays; the message gives the resume command),
  2 bad command line, 130 interrupted (Ctrl-C, SIGTERM or SIGHUP).

Examples:
  pgsurge load lineitem.tbl --create          # into the managed cluster, table lineitem
  pgsurge load data.csv -t events --db postgresql://me@db1/prod -w 4
  pgsurge dbt3 gen --scale 1 --tables lineitem --out - | pgsurge load - -t lineitem -f tbl --create
  pgsurge load events.csv --mode insert --insert-style values --batch-rows 1000 --on-conflict skip
  pgsurge load events.ndjson.gz -t events --ignore-extra-keys
  pgsurge load export.json --json-path data.items -t items
  pgsurge load people.csv --header match --encoding WIN1252 --null NA`,
  );
  cmd.action(async (files: string[], flags: LoadCommandFlags) => {
    try {
      await runLoad(files, flags);
    } catch (error) {
      // A part that stopped with a summary printed its resume command; any other error of a part names it and says how to rerun it.
      if (flags.part === undefined || error instanceof LoadStopped) throw error;
      throw new PartFailed(partLabel(flags.part), error, rerunCommand(process.argv.slice(2)));
    }
  });
}

async function runLoad(files: string[], flags: LoadCommandFlags): Promise<void> {
  const inputs = planInputs(files, { ...flags, input: flags });
  const writerSpec = writerSpecFromFlags(flags);
  const writer = writerFor({ ...writerSpec, workers: flags.workers, wasm: wireWasmFromEnv() });
  const target = await openTarget(flags);
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
  const stop = onStopSignals('the chunks in flight');
  const observed = await observeLoad(flags, target).catch(async (error: unknown) => {
    stop.off();
    await target.release();
    throw error;
  });
  try {
    const summary = await loadWithDurability(
      inputs,
      {
        workers: flags.workers,
        chunkBytes: flags.chunkSize,
        create: flags.create === true,
        truncate: flags.truncate === true,
        loadId: flags.loadId,
        resume: flags.resume === true,
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
    const tables = inputs.map((i) => i.table).filter((t, k, all) => all.indexOf(t) === k).join(', ');
    const finished = await observed.finish(tables);
    const { series, diagnosis } = await observed.diagnose(summary, finished, { input: files.includes('-') ? 'stream' : 'files' });
    const report =
      series &&
      observed.report({
        title: `pgsurge load: ${series.name}`,
        settings: { workers: flags.workers, chunkBytes: flags.chunkSize, mode: writer.name, ...(writerSpec.mode === 'copy' ? { wire: flags.wire ?? 'auto' } : {}), durability: flags.durability, unlogged: flags.unlogged === true },
        series: [series],
        notes: [...wireLines(summary.wire), ...(diagnosis ? [diagnosis.verdict.text, ...(diagnosis.againstProbe ?? [])] : [])],
      });
    const written = await writeReportIfAsked(flags.report, report);
    // the last sample's sizes (read after the last row; a partitioned table's summed over its partitions)
    const last = finished?.samples.at(-1);
    const finalSizes = last ? { finalSizes: { heapBytes: last.heapBytes, indexBytes: last.indexBytes } } : {};
    if (flags.json) process.stdout.write(`${summaryEvent(summary, { ...finalSizes, ...(written ? { report: written } : {}), ...(diagnosis ? { diagnosis } : {}) })}\n`);
    else if (flags.quiet) process.stdout.write(`${formatQuietSummary(summary)}\n`);
    else {
      process.stdout.write(`${formatSummary(summary)}\n${formatDurability(summary)}\n${diagnosis ? `${formatDiagnosis(diagnosis)}\n` : ''}`);
      if (written) process.stderr.write(`report: ${[written].flat().join(', ')}\n`);
    }
    const rejected = summary.total.rejected + (summary.files ?? []).reduce((a, f) => a + f.earlier.rejected, 0);
    if (rejected > 0) {
      process.stderr.write(`pgsurge: ${formatCount(rejected)} row${rejected === 1 ? '' : 's'} rejected: see ${(summary.rejectFiles ?? []).map((f) => f.path).join(', ') || 'the reject file'} and its .log\n`);
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
