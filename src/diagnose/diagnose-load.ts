import os from 'node:os';
import type { LoadSummary } from '../metrics/load-counters.js';
import { intervalsOf, type Sample } from '../metrics/series.js';
import type { ServerFacts } from '../metrics/server-snapshot.js';
import { totalWaits, waitShares } from '../metrics/wait-classes.js';
import type { WaitSummary } from '../metrics/wait-sampler.js';
import type { ProbeFigures } from './probe/probe-store.js';
import { diagnose, type DiagnosisInput, type Verdict } from './rules.js';

/** A load's verdict with the measurements it came from; stored in reports and `--json`. */
export interface Diagnosis {
  readonly verdict: Verdict;
  readonly waits: WaitSummary;
  /** The load read against the disks `pgsurge probe` measured, when there is a probe. */
  readonly againstProbe?: readonly string[];
  /** The machine's 1-minute load average the verdict read (a server on this machine), unrounded: the text shows one decimal. */
  readonly loadAverage?: number;
}

export interface LoadContext {
  readonly input: 'files' | 'stream';
  readonly wire?: 'text' | 'binary';
}

/** The wire the load went through: the caller's word, else binary when every table's wire was, text when any was; undefined without one (INSERT). */
function wireOf(context: LoadContext, summary: LoadSummary): 'text' | 'binary' | undefined {
  if (context.wire !== undefined) return context.wire;
  const tables = summary.wire ?? [];
  if (tables.length === 0) return undefined;
  return tables.every((t) => t.wire === 'binary') ? 'binary' : 'text';
}

/** Gathers the rules' input from what the sampler kept and the load's summary, and runs them. */
export function diagnoseLoad(args: {
  readonly waits: WaitSummary;
  readonly samples: readonly Sample[];
  readonly summary: LoadSummary;
  readonly facts: ServerFacts;
  readonly context: LoadContext;
  readonly probe?: ProbeFigures;
}): Diagnosis {
  const { waits, samples, summary, facts } = args;
  // the load's end: the first sample with every row (a command may sample on afterwards, e.g. while dbt3 builds keys)
  const final = samples.at(-1);
  const last = samples.find((s) => s.rowsLoaded === final?.rowsLoaded) ?? final;
  const looks = totalWaits(waits.waits);
  const input: DiagnosisInput = {
    shares: waitShares(waits.waits),
    looks,
    intervals: intervalsOf(samples).flatMap((i) => (i.waits ? [{ toRows: i.toRows, shares: i.waits }] : [])),
    events: waits.events.map((e) => ({ event: e.event, class: e.class, share: looks > 0 ? e.looks / looks : 0 })),
    // the load's own time, which the backends' CPU was spent in
    seconds: summary.total.seconds > 0 ? summary.total.seconds : (last?.seconds ?? 0),
    workers: summary.workers,
    cores: os.availableParallelism?.() ?? os.cpus().length,
    ...(waits.serverCpuSeconds !== undefined ? { serverCpuSeconds: waits.serverCpuSeconds } : {}),
    ...(last ? { clientCpuSeconds: last.clientCpuSeconds } : {}),
    input: args.context.input,
    ...(wireOf(args.context, summary) ? { wire: wireOf(args.context, summary) } : {}),
    synchronousCommit: summary.durability?.settingsInEffect.synchronous_commit ?? facts.settings.synchronous_commit,
    commits: summary.total.chunks,
    sharedBuffersBytes: facts.sharedBuffersBytes,
    indexBytes: last?.indexBytes ?? 0,
    heapBytes: last?.heapBytes ?? 0,
    memoryBytes: os.totalmem(),
    ...(waits.local ? { loadAverage: os.loadavg()[0]! } : {}),
  };
  const verdict = diagnose(input);
  const againstProbe = args.probe && last ? readAgainstProbe(args.probe, last, summary, samples[0]) : undefined;
  return { verdict, waits, ...(input.loadAverage !== undefined ? { loadAverage: input.loadAverage } : {}), ...(againstProbe && againstProbe.length > 0 ? { againstProbe } : {}) };
}

/** Below this, a page or two more or less moves a growth rate by megabytes a second: none is given. */
export const MIN_GROWTH_SECONDS = 0.1;

/**
 * "WAL written at 41 MB/s, 12% of what its disk does sequentially": the load beside the
 * probe's figures. Nothing for a load that loaded no row; the table's growth only from what
 * it grew by since the first sample (`first`: its size before the load), over at least
 * MIN_GROWTH_SECONDS.
 */
export function readAgainstProbe(probe: ProbeFigures, last: Sample, summary: LoadSummary, first?: Sample): string[] {
  const out: string[] = [];
  const seconds = last.seconds > 0 ? last.seconds : summary.total.seconds;
  if (seconds <= 0 || summary.total.loaded <= 0) return out;
  const wal = probe.disks.find((d) => d.role === 'WAL directory') ?? probe.disks.find((d) => d.role === 'data directory');
  const data = probe.disks.find((d) => d.role === 'data directory');
  const walMBps = last.walBytes / (1024 * 1024) / seconds;
  const share = (part: number, whole: number): string => `${((100 * part) / whole).toFixed(part / whole < 0.1 ? 1 : 0)}%`;
  if (wal && wal.seqWriteMBps > 0) out.push(`WAL written at ${walMBps.toFixed(1)} MB/s, ${share(walMBps, wal.seqWriteMBps)} of what its disk does sequentially (${wal.seqWriteMBps.toFixed(0)} MB/s, probe of ${probe.createdAt.slice(0, 10)})`);
  const commitsPerSecond = summary.total.chunks / seconds;
  if (wal && wal.fsyncsPerSecond > 0) out.push(`${commitsPerSecond.toFixed(1)} commits/s against ${wal.fsyncsPerSecond.toFixed(0)} fdatasyncs/s the WAL's disk can do`);
  const grown = last.heapBytes + last.indexBytes - (first ? first.heapBytes + first.indexBytes : 0);
  const dataMBps = grown > 0 && seconds >= MIN_GROWTH_SECONDS ? grown / (1024 * 1024) / seconds : 0;
  if (data && data.seqWriteMBps > 0 && dataMBps > 0) out.push(`table and indexes grew at ${dataMBps.toFixed(1)} MB/s, ${share(dataMBps, data.seqWriteMBps)} of the data disk's sequential writes (${data.seqWriteMBps.toFixed(0)} MB/s)`);
  if (probe.scan) out.push(`input at ${summary.total.mbPerSecond.toFixed(1)} MB/s; one backend scans a table at ${probe.scan.mbPerSecond.toFixed(0)} MB/s here`);
  return out;
}
