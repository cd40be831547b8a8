import type { LoadTarget } from '../core/chunk.js';
import { connect, type Target } from '../cluster/target.js';
import { connectionFailure } from '../core/load-error.js';
import type { LoadReporter, LoadSummary } from '../metrics/load-counters.js';
import { copyWriter } from '../writer/copy-writer.js';
import { checkLedgerOptions, type LoadOptions } from './load-options.js';
import { checkLoadInputs, planLoad } from './load-plan.js';
import { LoadRejects } from './load-rejects.js';
import { openReaders, openWorkerSessions, planLoadRouting } from './load-open.js';
import { runWorkers } from './load-run.js';
import { alreadyLoaded, finishLoad } from './load-finish.js';
import { laneSession, withLiveClient } from './load-sessions.js';
import { laneRoutingOf } from '../writer/keyed/keyed-writer.js';
import { DEFAULT_RETRY_FOR_MS } from '../core/retry.js';
import { checkDryRunOptions, prepareDryRun, sessionSettingsOf, withSessionSetup } from './dry-run.js';
import { describeForCreate, describedLine, sampledTypesHint } from '../input/table-from-file.js';

/**
 * The whole flow, top to bottom. Plan: the options, the inputs, the tables, the load id and
 * its lock, the ledger's account of earlier runs, a part's shares. Open: the reject files,
 * the readers on what the ledger does not cover, a bounded queue, the sessions. Run: the
 * workers, handed the ledger, the reject files, Citus's routing and the WAL flusher. Finish:
 * the summary, or the first error, which wins.
 */
export async function load(named: readonly LoadTarget[], asked: LoadOptions, target: Target, reporter: LoadReporter = {}): Promise<LoadSummary> {
  // Plan.
  checkLedgerOptions(asked);
  checkDryRunOptions(asked);
  const checked = await checkLoadInputs(named, asked);
  // --create of a table pgsurge has no DDL for: the files described (types, a text file's dialect).
  let inputs = asked.create ? await describeForCreate(named, asked) : [...named];
  for (const input of inputs) {
    const line = describedLine(input);
    if (line !== undefined) reporter.note?.(line);
  }
  // The control connection holds the load's lock for the whole load: two runs of one load id at once would double rows.
  const control = await connect(target.config).catch((error: unknown) => {
    throw connectionFailure(error, target.description);
  });
  // Citus: lets shard moves go on again, however the load ends (src/writer/citus/shard-move-guard.ts).
  let releaseShards = async (): Promise<void> => undefined;
  try {
    // A dry run: the chunks' transactions rolled back, nothing recorded; a missing table made temporary.
    const dry = asked.dryRun ? await prepareDryRun(control, inputs, asked) : undefined;
    if (dry) inputs = dry.inputs;
    const setup = [...sessionSettingsOf(inputs), ...(dry?.setup ?? [])];
    const options: LoadOptions = { ...(dry?.options ?? asked), ...(setup.length > 0 ? { writer: withSessionSetup(asked.writer ?? copyWriter, setup) } : {}) };
    const plan = await planLoad(control, inputs, options, checked, target, reporter);
    // A rerun of a load that completed (its files as they were): nothing to read.
    if (plan.completed) return alreadyLoaded(inputs, plan);
    // An upsert's or a delete's key and order table, before a row moves.
    const keyed = options.writer;
    await keyed?.planLoad?.(control, {
      loadId: plan.loadId,
      inputs: plan.planned,
      withLedger: plan.withLedger,
      fresh: (input) => !plan.withLedger || plan.coveredOf(input).ranges.length === 0,
      part: plan.part !== undefined,
      citus: plan.citus !== undefined,
    });
    // An upsert by key lanes: the chunks are read in input order, and each is spread over the lanes' sessions.
    const lanes = laneRoutingOf(keyed);

    // Open. Reject files: rebuilt from the ledger, so a crash between a chunk's COMMIT and the file write loses nothing.
    const rejects = new LoadRejects(inputs, plan.rejectPaths, plan.loadId, plan.ledger, plan.withLedger);
    const earlierRejects = await rejects.rewrite(control);
    const readers = await openReaders(inputs, options, plan, reporter, lanes !== undefined);
    const routing = await planLoadRouting(control, plan, options, target, readers.queue);
    if (routing) releaseShards = () => routing.release();
    for (const r of routing?.routes ?? []) reporter.note?.(`${r.table}: ${r.route === 'client' ? 'rows routed to the shards by pgsurge' : 'rows through the coordinator'} (${r.why})`);
    // A dry run's temporary tables are its sessions' own: no other session (the sampler's) sees them.
    const sampled = dry ? inputs.filter((i) => i.schema !== 'pg_temp') : inputs;
    // Key lanes: two workers take the chunks in turn (one hands out the next chunk's parts while the lanes apply one);
    // the lanes' sessions do the load's work, and are what the wait sampler looks at.
    const lanePrefix = `${plan.workerPrefix}L`;
    const clients = await openWorkerSessions(plan, options, target, readers, reporter, sampled, lanes ? { prefix: lanePrefix } : undefined);

    // Run.
    const writer = plan.citus ? plan.citus.writer(options.writer ?? copyWriter) : (options.writer ?? copyWriter);
    const signal = options.signal ?? new AbortController().signal;
    let firstError: unknown;
    try {
      const { queue, counters, progress } = readers;
      const router = lanes
        ? lanes.router({
            connect: (lane) => laneSession(target, `${lanePrefix}${lane}`, writer),
            placeOf: (chunk) => queue.placeOf(chunk),
            retryForMs: options.retryForMs ?? DEFAULT_RETRY_FOR_MS,
            chunkBytes: options.chunkBytes,
          })
        : routing?.router;
      const run = { clients, queue, writer, signal, ledger: plan.ledger, rejects, earlierRejects, router, counters, progress };
      firstError = await runWorkers(run, plan, options, target, reporter);
    } finally {
      await rejects.close();
      // Workers append rejects as their chunks commit, in no particular order: rewrite each file from the ledger, in input order.
      if (plan.withLedger) await withLiveClient(control, target, (c) => rejects.rewrite(c)).catch(() => undefined);
    }

    // Finish: first error wins.
    let completed = false;
    try {
      const summary = await finishLoad(control, target, { inputs, plan, readers }, { firstError, signal, workers: lanes ? lanes.lanes : clients.length, writer, rejects, routing, lanes: lanes !== undefined });
      completed = true;
      const hint = summary.total.rejected > 0 ? sampledTypesHint(inputs) : undefined;
      const sniffed = inputs.flatMap((i) => describedLine(i) ?? []);
      return { ...summary, ...(sniffed.length > 0 ? { sniffed } : {}), ...(hint === undefined ? {} : { hints: [hint] }) };
    } finally {
      if (keyed?.endLoad) await withLiveClient(control, target, (c) => keyed.endLoad!(c, completed)).catch(() => undefined);
    }
  } finally {
    // Shard moves may go on (a load that stopped before its end check); ending the session releases the load's advisory lock.
    await releaseShards();
    await control.end().catch(() => undefined);
  }
}
