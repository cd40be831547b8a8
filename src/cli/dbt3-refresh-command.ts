/**
 * `pgsurge dbt3 refresh <dir> --set K`: RF1 and RF2 of one refresh set, timed.
 */
import { Option, type Command } from 'commander';
import { openTarget } from './open-target.js';
import { addTargetOptions, type TargetFlags } from './common-options.js';
import { addObserveOptions, observeWithStop, summaryEvent, writeReportIfAsked, type ObserveFlags } from './observe-options.js';
import { parseChunkSize, parseWholeNumber } from './parse-options.js';
import { loadSettingsFromEnv } from './load-settings.js';
import { EXIT } from './errors.js';
import { formatCount } from '../core/format-count.js';
import { formatSummary } from '../report/summary-format.js';
import { refreshDbt3 } from '../dbt3/dbt3-refresh.js';

/** An SF 1 set is ~0.9 MB: chunks of 64 KB give the workers ~14 each and the curve points. */
const REFRESH_CHUNK_BYTES = 64 * 1024;

interface RefreshFlags extends TargetFlags, ObserveFlags {
  set: number;
  workers: number;
  chunkSize: number;
  maxRejects: number;
  schema?: string;
  verbose?: boolean;
}

export function registerDbt3Refresh(dbt3: Command): void {
  const cmd = dbt3
    .command('refresh')
    .description('run TPC-H\'s refresh functions of one set on a database `dbt3 load` loaded: RF1 loads orders.tbl.uK and lineitem.tbl.uK (pgsurge\'s parallel COPY, timed, with the insert curve), RF2 deletes the orders and lineitems of delete.K; each exactly once')
    .argument('<dir>', 'folder holding orders.tbl.uK, lineitem.tbl.uK and delete.K (`dbt3 gen --refresh n` or dbgen -U n)')
    .addOption(new Option('--set <k>', 'which refresh set to run, 1..n').argParser((v) => parseWholeNumber('--set', v, 1)).makeOptionMandatory())
    .addOption(new Option('-w, --workers <n>', 'parallel connections for RF1').default(2).argParser((v) => parseWholeNumber('--workers', v, 1)))
    .addOption(new Option('--chunk-size <bytes>', 'bytes per RF1 chunk (one transaction each); small, as a set is 0.1 % of the orders').default(REFRESH_CHUNK_BYTES, '64KB').argParser((v) => parseChunkSize('--chunk-size', v)))
    .addOption(new Option('--max-rejects <n>', 'rows RF1 may reject before it stops').default(0).argParser((v) => parseWholeNumber('--max-rejects', v, 0)))
    .option('--schema <name>', 'schema of the DBT-3 tables (default: the search_path)')
    .option('-q, --quiet', 'print only the one line of what RF1 and RF2 did');
  addObserveOptions(cmd);
  addTargetOptions(cmd);
  cmd.addHelpText(
    'after',
    `
RF1 loads orders, then lineitem (a lineitem's foreign key needs its order first). A set
runs once on an orders table: RF1's chunks and RF2's delete are in the ledger under the
set's load ids (dbt3-refresh-<K>-<orders oid>-rf1-orders, …-rf1-lineitem, …-rf2), so
running the same set again loads and deletes nothing and says so.

Examples:
  pgsurge dbt3 gen --scale 1 --refresh 2 --out sf1 && pgsurge dbt3 load sf1 && pgsurge dbt3 refresh sf1 --set 1
  pgsurge dbt3 refresh sf1 --set 2 -w 2 --report refresh.html`,
  );
  cmd.action(async (dir: string, flags: RefreshFlags) => {
    const target = await openTarget(flags);
    const { stop, observed } = await observeWithStop(flags, target, 'the chunks in flight');
    try {
      const result = await refreshDbt3(
        dir,
        { set: flags.set, workers: flags.workers, chunkBytes: flags.chunkSize, maxRejects: flags.maxRejects, ...loadSettingsFromEnv(), ...(flags.schema !== undefined ? { schema: flags.schema } : {}), signal: stop.signal },
        target,
        observed.reporter,
      );
      const { rf1, rf2 } = result;
      const series = await observed.finish(`refresh ${flags.set}`, { settings: {} });
      const report = series && observed.report({ title: `pgsurge dbt3 refresh ${dir} --set ${flags.set}`, settings: { workers: flags.workers, chunkBytes: flags.chunkSize, set: flags.set }, series: [series] });
      const written = await writeReportIfAsked(flags.report, report);
      const refresh = { set: flags.set, rf1: { seconds: rf1.seconds, rows: rf1.summary.total.loaded }, rf2: rf2 };
      if (flags.json) process.stdout.write(`${summaryEvent(rf1.summary, { refresh, ...(written ? { report: written } : {}) })}\n`);
      else {
        if (!flags.quiet) process.stdout.write(`${formatSummary(rf1.summary)}\n\n`);
        const rf1Text = rf1.summary.total.read === 0 ? 'RF1 nothing to load (an earlier run of this set loaded it)' : `RF1 ${formatCount(rf1.summary.total.loaded)} rows inserted in ${rf1.seconds.toFixed(2)} s`;
        const rf2Text = rf2.earlier
          ? `RF2 nothing to delete (an earlier run of this set deleted its ${formatCount(rf2.keys)} orders)`
          : `RF2 ${formatCount(rf2.orders)} orders and ${formatCount(rf2.lineitem)} lineitems deleted in ${rf2.seconds.toFixed(2)} s`;
        process.stdout.write(`refresh set ${flags.set}: ${rf1Text}; ${rf2Text}\n`);
        if (written) process.stderr.write(`report: ${written}\n`);
      }
      if (rf1.summary.total.rejected > 0) process.exitCode = EXIT.rejects;
    } finally {
      stop.off();
      await observed.close();
      await target.release();
    }
  });
}
