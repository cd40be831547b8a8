import path from 'node:path';
import { Option, type Command } from 'commander';
import { openTarget } from './open-target.js';
import { Dbt3LoadStopped, loadDbt3, type Dbt3LoadResult } from '../dbt3/dbt3-load.js';
import { formatKb, type BuildSizing } from '../dbt3/build-memory.js';
import type { TaskRun } from '../dbt3/run-schedule.js';
import { loadSettingsFromEnv, wireWasmFromEnv } from './load-settings.js';
import { addLoadOptions, addTargetOptions, type LoadFlags } from './common-options.js';
import { UNSAFE_WARNING } from '../writer/durability/presets.js';
import { formatDurability } from './durability-format.js';
import { EXIT, printError } from './errors.js';
import { addObserveOptions, observeWithStop, stoppedEvent, summaryEvent, writeReportIfAsked, type ObserveFlags } from './observe-options.js';
import { formatBytes } from '../core/format-count.js';
import { parseSize } from './parse-options.js';
import { resumeCommand } from './resume-command.js';
import { formatDiagnosis, formatSummary, renderTable } from '../report/summary-format.js';
import { wireOption } from './writer-options.js';
import { writerFor } from '../writer/writer-for.js';
import { wireLines, type WireChoice } from '../wire/wire-report.js';

interface Dbt3LoadFlags extends LoadFlags, ObserveFlags {
  replace?: boolean;
  resume?: boolean;
  keys: boolean;
  analyze: boolean;
  overlap?: boolean;
  buildAsLoaded?: boolean;
  twoStepKeys?: boolean;
  buildMemory?: number;
  schema?: string;
  wire?: WireChoice;
}

/** The build sessions' settings, one line each, for the summary. */
export function formatBuildSizing(sizing: BuildSizing): string {
  const lines = [`build sessions: ${sizing.buildsAtOnce} at once, ${formatBytes(sizing.budgetBytes)} for all of them (${sizing.budgetFrom})`];
  for (const s of sizing.settings) {
    const value = s.name === 'max_parallel_maintenance_workers' ? String(s.value) : formatKb(s.value);
    lines.push(`  ${s.name} = ${value}${s.set ? '' : ' (kept)'}: ${s.why}`);
  }
  if (sizing.lastBuild) lines.push(`  the last sort: max_parallel_maintenance_workers = ${sizing.lastBuild.maxParallelMaintenanceWorkers}: ${sizing.lastBuild.why}`);
  return lines.join('\n');
}

/** The timeline as a table: what ran when, on how many slots; the longest tasks are the critical path's candidates. */
export function formatTimeline(timeline: readonly TaskRun[]): string {
  return renderTable(
    ['task', 'start s', 'end s', 'seconds', 'slots'],
    timeline.map((r) => [`${r.id}${r.failed ? ' (failed)' : ''}`, r.start.toFixed(2), r.end.toFixed(2), (r.end - r.start).toFixed(2), `${r.slots}${r.parallelWorkers ? ` (+${r.parallelWorkers} parallel worker${r.parallelWorkers === 1 ? '' : 's'})` : ''}`]),
  );
}

/** `pgsurge dbt3 …`; returns the `dbt3` command so other subcommands (gen) can join it. */
export function registerDbt3Commands(program: Command): Command {
  const dbt3 = program.command('dbt3').description('DBT-3 / TPC-H data sets: load a folder of .tbl files, generate them');
  const cmd = dbt3
    .command('load')
    .description('load the eight DBT-3 tables from a folder of .tbl files and build the kit\'s keys and indexes and ANALYZE, as one schedule on one worker budget: longest builds first, a foreign key once both sides have their keys, a table\'s ANALYZE once its builds are done')
    .argument('<dir>', 'folder holding region.tbl … lineitem.tbl (split files such as lineitem.tbl.1 … .8 too)')
    .option('--replace', 'drop the DBT-3 tables (and their keys) first and create them bare')
    .addOption(new Option('--resume', 'finish a stopped dbt3 load: load the rows the ledger does not have, build the keys and indexes the catalog lacks').conflicts('replace'))
    .option('--no-keys', 'skip the primary keys, foreign keys and indexes')
    .option('--no-analyze', 'skip ANALYZE')
    .option('--overlap', 'load each table on its own and start its keys and indexes as soon as it is loaded, while other tables still load (default: one load of all eight tables, then the builds, which measured faster on 2 cores)')
    .addOption(new Option('--two-step-keys', 'each primary key as CREATE UNIQUE INDEX (beside the table\'s other indexes) then ADD PRIMARY KEY USING INDEX, its columns NOT NULL from the start (default: the kit\'s ADD PRIMARY KEY; see docs/dbt3-load.md)'))
    .addOption(new Option('--build-as-loaded', 'one load of all eight tables, biggest first; each table\'s keys and indexes start once it is in, on a worker the load gives back when they are the longest path (default: the builds after the load)').conflicts('overlap'))
    .addOption(
      new Option('--build-memory <size>', 'memory all key/index build sessions may use together (each gets its share as maintenance_work_mem, at most 1GB); default: half of MemAvailable for a server on this machine, else from shared_buffers and effective_cache_size').argParser(
        (v) => parseSize('--build-memory', v),
      ),
    )
    .option('--schema <name>', 'schema for the tables (default: the search_path)')
    .addOption(wireOption());
  addLoadOptions(cmd);
  addObserveOptions(cmd);
  addTargetOptions(cmd);
  cmd.addHelpText(
    'after',
    `
How it runs (docs/dbt3-load.md):
  The eight tables are loaded through one pool of -w workers, biggest first; then the
  kit's 8 primary keys, 15 indexes and 8 foreign keys and the 8 ANALYZEs run as one
  schedule on the same -w sessions: longest builds first, a foreign key once both sides
  have their keys, never two statements whose locks would make one wait, a table's
  ANALYZE as soon as it is loaded. Each build session gets its own maintenance_work_mem,
  work_mem and max_parallel_maintenance_workers, sized from the machine (or the server's
  settings, or --build-memory), and the last sort the parallel workers of the cores the
  others leave idle; the summary says which. Every load and build is on the
  timeline (the summary, --json, and the Gantt chart of --report).

  A build that fails (a duplicate key, a row whose foreign key has no match) stops with
  the table, the key and the offending value; the rows stay. --resume then loads what the
  ledger lacks and builds what the catalog lacks.

Exit codes: 0 done, 1 a load or build failed, 2 bad usage (nothing changed), 3 rows
rejected, 130 interrupted (Ctrl-C, SIGTERM or SIGHUP; resume with --resume).

Examples:
  pgsurge dbt3 gen --scale 1 --out sf1 && pgsurge dbt3 load sf1 --replace -w 2 --report load.html
  pgsurge dbt3 load sf1 --db postgresql://me@db1/dbt3 --schema dbt3 --build-memory 4GB
  pgsurge dbt3 load sf1 --resume`,
  );
  cmd.action(async (dir: string, flags: Dbt3LoadFlags) => {
    const target = await openTarget(flags);
    if (flags.durability === 'unsafe' && target.managed !== undefined) process.stderr.write(UNSAFE_WARNING);
    // Ctrl-C, SIGTERM, SIGHUP: stop the loads (chunks in flight rolled back) and cancel the builds; print the resume command. A second signal exits at once.
    const { stop, observed } = await observeWithStop(flags, target, 'the chunks in flight and cancelling the builds');
    try {
      const result = await loadDbt3(
        dir,
        {
          workers: flags.workers,
          chunkBytes: flags.chunkSize,
          ...loadSettingsFromEnv(),
          replace: flags.replace === true,
          resume: flags.resume === true,
          keys: flags.keys,
          analyze: flags.analyze,
          overlap: flags.overlap === true,
          buildAsLoaded: flags.buildAsLoaded === true,
          twoStepKeys: flags.twoStepKeys === true,
          buildMemoryBytes: flags.buildMemory,
          schema: flags.schema,
          durability: { preset: flags.durability, unlogged: flags.unlogged === true },
          maxRejects: flags.maxRejects,
          rejectDir: flags.rejectDir,
          retryForMs: flags.retryFor,
          signal: stop.signal,
          writer: writerFor({ mode: 'copy', workers: flags.workers, wasm: wireWasmFromEnv(), ...(flags.wire !== undefined ? { wire: flags.wire } : {}) }),
        },
        target,
        observed.reporter,
      );
      const { summary, phases, timeline } = result;
      const finished = await observed.finish(flags.label?.trim() || `dbt3 ${path.basename(path.resolve(dir))}`, { settings: {}, phases: phases.map((p) => ({ phase: p.phase, seconds: p.seconds })), timeline: timeline.map(timelineBar) });
      const { series, diagnosis } = await observed.diagnose(summary, finished, { input: 'files' });
      const report =
        series &&
        observed.report({
          title: `pgsurge dbt3 load ${dir}`,
          settings: { workers: flags.workers, chunkBytes: flags.chunkSize, keys: flags.keys, analyze: flags.analyze, overlap: flags.overlap === true, buildAsLoaded: flags.buildAsLoaded === true, twoStepKeys: flags.twoStepKeys === true, durability: flags.durability, wire: flags.wire ?? 'auto', ...buildSettingsForReport(result) },
          series: [series],
          notes: [...wireLines(summary.wire), ...(diagnosis ? [diagnosis.verdict.text, ...(diagnosis.againstProbe ?? [])] : [])],
        });
      const written = await writeReportIfAsked(flags.report, report);
      if (flags.json) {
        process.stdout.write(`${summaryEvent(summary, { phases, timeline, seconds: result.seconds, buildSizing: result.buildSizing, buildSession: result.buildSession, alreadyBuilt: result.alreadyBuilt, rebuilt: result.rebuilt, ...(written ? { report: written } : {}), ...(diagnosis ? { diagnosis } : {}) })}\n`);
      } else {
        process.stdout.write(`${formatSummary(summary)}\n${formatDurability(summary)}\n${diagnosis ? `${formatDiagnosis(diagnosis)}\n` : ''}\n`);
        if (result.buildSizing) process.stdout.write(`${formatBuildSizing(result.buildSizing)}\n`);
        if (result.buildSession) process.stdout.write(`  a build session's pg_settings: ${Object.entries(result.buildSession).map(([k, v]) => `${k}=${v}`).join(', ')}\n`);
        if (result.alreadyBuilt.length > 0) process.stdout.write(`already built (left alone): ${result.alreadyBuilt.length}\n`);
        if (result.rebuilt.length > 0) process.stdout.write(`invalid indexes dropped and built again: ${result.rebuilt.join(', ')}\n`);
        process.stdout.write(`\n${renderTable(['phase', 'seconds', 'statements'], phases.map((p) => [p.phase, p.seconds.toFixed(2), String(p.statements)]))}\n`);
        process.stdout.write(`total: ${result.seconds.toFixed(2)} s\n`);
        if (!flags.quiet) process.stdout.write(`\n${formatTimeline(timeline)}\n`);
        if (written) process.stderr.write(`report: ${[written].flat().join(', ')}\n`);
      }
      if (summary.total.rejected > 0) process.exitCode = EXIT.rejects;
    } catch (error) {
      if (!(error instanceof Dbt3LoadStopped)) throw error;
      await observed.close();
      // The accounting of what was loaded before the stop, then what stopped it.
      const resume = resumeCommand(process.argv.slice(2));
      if (flags.json) process.stdout.write(`${summaryEvent(error.summary, { timeline: error.timeline, stopped: stoppedEvent(error, { resume }) })}\n`);
      else {
        process.stdout.write(`${formatSummary(error.summary)}\n`);
        if (error.timeline.length > 0 && !flags.quiet) process.stdout.write(`\n${formatTimeline(error.timeline)}\n`);
      }
      printError(error, flags.verbose === true);
      process.stderr.write(`  resume with: ${resume}\n`);
      process.exitCode = error.interrupted ? EXIT.interrupted : EXIT.failed;
    } finally {
      stop.off();
      await observed.close();
      await target.release();
    }
  });
  return dbt3;
}

function timelineBar(r: TaskRun): { task: string; kind: string; table: string; start: number; end: number; statement: string; failed?: boolean; parallelWorkers?: number } {
  return { task: r.id, kind: r.kind, table: r.table, start: r.start, end: r.end, statement: r.statement, ...(r.failed ? { failed: true } : {}), ...(r.parallelWorkers ? { parallelWorkers: r.parallelWorkers } : {}) };
}

function buildSettingsForReport(result: Dbt3LoadResult): Record<string, string | number> {
  if (!result.buildSizing) return {};
  const last = result.buildSizing.lastBuild;
  return {
    ...Object.fromEntries(result.buildSizing.settings.map((s) => [`build ${s.name}`, s.name === 'max_parallel_maintenance_workers' ? s.value : `${formatKb(s.value)}${s.set ? '' : ' (kept)'}`])),
    ...(last ? { 'the last sort\'s max_parallel_maintenance_workers': last.maxParallelMaintenanceWorkers } : {}),
  };
}
