import type pg from 'pg';
import type { LoadTarget } from '../core/chunk.js';
import { ChunkQueue, type ChunkSource } from '../input/chunk-queue.js';
import { TableProgress } from '../input/table-progress.js';
import { connect, type Target } from '../cluster/target.js';
import { openInput } from '../input/open-input.js';
import { ChunkBuffers } from '../input/chunk-buffers.js';
import { LoadCounters, type LoadReporter } from '../metrics/load-counters.js';
import { copyWriter } from '../writer/copy-writer.js';
import { planRouting, type RoutingPlan } from '../writer/citus/plan-routing.js';
import type { LoadOptions } from './load-options.js';
import type { LoadPlan } from './load-plan.js';
import { openClients, waitForEarlierRun } from './load-sessions.js';

/** The inputs opened on what the ledger does not cover, behind one bounded queue. */
export interface OpenedReaders {
  readonly queue: ChunkQueue;
  /** Says when a table is loaded (every chunk of every input into it counted). */
  readonly progress: TableProgress;
  readonly counters: LoadCounters;
  /** The bytes this run reads, when known. */
  readonly totalBytes: number | undefined;
  /** Some input was loaded in part by an earlier run. */
  readonly resumed: boolean;
}

/**
 * Opens the readers, biggest input first, and starts reading: the first chunks are read
 * while the sessions open. `inOrder`: the inputs as named, each from its start by one
 * reader, one after another, so chunks come in input order (an upsert's key lanes).
 */
export async function openReaders(inputs: readonly LoadTarget[], options: LoadOptions, plan: LoadPlan, reporter: LoadReporter, inOrder = false): Promise<OpenedReaders> {
  const { part, sizes } = plan;
  // Biggest input first, so the long pole starts early and the small ones fill in.
  const named = plan.planned.map((input, i) => ({ input, size: sizes[i] }));
  const order = inOrder ? named : named.sort((a, b) => (b.size ?? Infinity) - (a.size ?? Infinity));
  const sources: ChunkSource[] = [];
  const progress = new TableProgress((table) => reporter.tableLoaded?.(table));
  // Every reader lends and borrows the same chunk buffers: at most (3 × workers + 1) chunks are alive at once
  // (read ahead, in flight, held until their commit is flushed, being read).
  const buffers = new ChunkBuffers(options.chunkBytes, 2 * (3 * options.workers + 1));
  for (const { input } of order) progress.expect(input.table);
  for (const { input } of order) {
    const share = part?.shares.get(input.file);
    const opened = await openInput(input, { workers: inOrder ? 1 : options.workers, chunkBytes: options.chunkBytes, stdin: options.stdin, covered: plan.coveredOf(input).ranges, buffers, ...(share ? { share } : {}), parquet: options.parquet });
    sources.push(...opened.sources.map((source) => progress.track(input.table, source)));
  }
  progress.opened();
  const totalBytes = part
    ? [...part.shares.values()].reduce((a, r) => a + (r.end - r.start), 0)
    : sizes.every((s) => s !== undefined)
      ? sizes.reduce<number>((a, s) => a + (s ?? 0), 0)
      : undefined;

  const counters = new LoadCounters();
  for (const input of inputs) {
    counters.expect(input.table, input.file);
    counters.earlier(input.table, input.file, plan.coveredOf(input));
    const found = plan.rowTriggers.get(input.file);
    if (found) counters.rowTriggers(input.table, found);
  }
  const resumed = inputs.some((i) => plan.coveredOf(i).ranges.length > 0);
  const queue = new ChunkQueue(sources, inOrder ? Math.max(2, options.workers) : options.workers, inOrder);
  // The first chunks are read while the sessions open (and Citus's routing is planned), not after.
  queue.start();
  return { queue, progress, counters, totalBytes, resumed };
}

/** Citus: which tables' rows pgsurge routes to their shards' nodes itself, checked before any row moves. */
export async function planLoadRouting(control: pg.Client, plan: LoadPlan, options: LoadOptions, target: Target, queue: ChunkQueue): Promise<RoutingPlan | undefined> {
  if (!plan.citus) return undefined;
  let nodeConnections = 0;
  return planRouting(control, plan.planned, {
    route: options.citusRoute ?? 'auto',
    writer: options.writer ?? copyWriter,
    loadId: plan.withLedger ? plan.loadId : undefined,
    inputs: plan.ledgerInputs,
    citusTables: plan.citus.tables,
    // The coordinator holding shards (group 0) is reached as the load reaches it: its pg_dist_node name is often localhost.
    connect: (node) => connect(node.groupId === 0 ? target.config : { ...target.config, host: node.host, port: node.port }, `${plan.workerPrefix}0n${nodeConnections++}`),
    waitForEarlierRun: (c) => waitForEarlierRun(c, plan.workerPrefix),
    guardSession: () => connect(target.config, `${plan.workerPrefix}0g`),
    ...(options.shardCopy ? { shardCopy: options.shardCopy } : {}),
    ...(options.faults ? { faults: options.faults } : {}),
  }).catch(async (error: unknown) => {
    await queue.close();
    throw error;
  });
}

/** The workers' sessions, then the reporter told the load starts; on a failure the queue (and the sessions) are closed. */
export async function openWorkerSessions(
  plan: LoadPlan,
  options: LoadOptions,
  target: Target,
  readers: OpenedReaders,
  reporter: LoadReporter,
  inputs: readonly LoadTarget[],
  /** Key lanes: two workers, and the lanes' sessions are the ones the wait sampler looks at. */
  lanes?: { readonly prefix: string },
): Promise<pg.Client[]> {
  const sessions = lanes ? 2 : options.workers;
  const { queue } = readers;
  const clients = await openClients(target, sessions, (n) => `${plan.workerPrefix}${n}`).catch(async (error: unknown) => {
    await queue.close();
    throw error;
  });
  try {
    await reporter.start?.({ inputs, totalBytes: readers.totalBytes, workers: options.workers, target: plan.where, loadId: plan.loadId, resumed: readers.resumed, workerPrefix: lanes?.prefix ?? plan.workerPrefix });
  } catch (error) {
    await queue.close();
    await Promise.allSettled(clients.map((c) => c.end()));
    throw error;
  }
  return clients;
}
