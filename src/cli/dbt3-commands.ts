import type { Command } from 'commander';
import { openTarget } from '../db/target.js';
import { loadDbt3 } from '../dbt3-load.js';
import { addLoadOptions, addTargetOptions, type LoadFlags } from './common-options.js';
import { UNSAFE_WARNING } from '../durability/presets.js';
import { formatDurability } from './durability-format.js';
import { EXIT } from './errors.js';
import { addObserveOptions, observeLoad, summaryEvent, writeReportIfAsked, type ObserveFlags } from './observe-options.js';
import { formatDiagnosis, formatSummary, renderTable } from './summary-format.js';

interface Dbt3LoadFlags extends LoadFlags, ObserveFlags {
  replace?: boolean;
  keys: boolean;
  analyze: boolean;
  schema?: string;
}

/** `pgsurge dbt3 …`; returns the `dbt3` command so other subcommands (gen) can join it. */
export function registerDbt3Commands(program: Command): Command {
  const dbt3 = program.command('dbt3').description('DBT-3 / TPC-H data sets: load a folder of .tbl files, generate them');
  const cmd = dbt3
    .command('load')
    .description('load the eight DBT-3 tables from a folder of .tbl files, then build keys and indexes and ANALYZE, as the DBT-3 kit does')
    .argument('<dir>', 'folder holding region.tbl … lineitem.tbl (split files such as lineitem.tbl.1 … .8 too)')
    .option('--replace', 'drop the DBT-3 tables (and their keys) first and create them bare')
    .option('--no-keys', 'skip the primary keys, foreign keys and indexes')
    .option('--no-analyze', 'skip ANALYZE')
    .option('--schema <name>', 'schema for the tables (default: the search_path)');
  addLoadOptions(cmd);
  addObserveOptions(cmd);
  addTargetOptions(cmd);
  cmd.action(async (dir: string, flags: Dbt3LoadFlags) => {
    const target = await openTarget(flags);
    if (flags.durability === 'unsafe' && target.managed !== undefined) process.stderr.write(UNSAFE_WARNING);
    const observed = await observeLoad(flags, target).catch(async (error: unknown) => {
      await target.release();
      throw error;
    });
    try {
      const { summary, phases } = await loadDbt3(
        dir,
        {
          workers: flags.workers,
          chunkBytes: flags.chunkSize,
          replace: flags.replace === true,
          keys: flags.keys,
          analyze: flags.analyze,
          schema: flags.schema,
          durability: { preset: flags.durability, unlogged: flags.unlogged === true },
          maxRejects: flags.maxRejects,
          rejectDir: flags.rejectDir,
          retryForMs: flags.retryFor,
        },
        target,
        observed.reporter,
      );
      const finished = await observed.finish('dbt3', { settings: {}, phases: phases.map((p) => ({ phase: p.phase, seconds: p.seconds })) });
      const { series, diagnosis } = await observed.diagnose(summary, finished, { input: 'files' });
      const report =
        series &&
        observed.report({
          title: `pgsurge dbt3 load ${dir}`,
          settings: { workers: flags.workers, chunkBytes: flags.chunkSize, keys: flags.keys, analyze: flags.analyze, durability: flags.durability },
          series: [series],
          ...(diagnosis ? { notes: [diagnosis.verdict.text, ...(diagnosis.againstProbe ?? [])] } : {}),
        });
      const written = await writeReportIfAsked(flags.report, report);
      if (flags.json) {
        process.stdout.write(`${summaryEvent(summary, { phases, ...(written ? { report: written } : {}), ...(diagnosis ? { diagnosis } : {}) })}\n`);
      } else {
        process.stdout.write(`${formatSummary(summary)}\n${formatDurability(summary)}\n${diagnosis ? `${formatDiagnosis(diagnosis)}\n` : ''}\n`);
        process.stdout.write(`${renderTable(['phase', 'seconds', 'statements'], phases.map((p) => [p.phase, p.seconds.toFixed(2), String(p.statements)]))}\n`);
        if (written) process.stderr.write(`report: ${written}\n`);
      }
      if (summary.total.rejected > 0) process.exitCode = EXIT.rejects;
    } finally {
      await observed.close();
      await target.release();
    }
  });
  return dbt3;
}
