import { inputBytesOf, type ChunkLocation } from '../core/chunk.js';
import { qualifiedName } from '../core/identifiers.js';
import type { Target } from '../cluster/target.js';
import type { LoadReporter } from './load-counters.js';
import type { SampleEvery } from './sample-every.js';
import { intervalBetween, type Interval, type Sample } from './series.js';
import { countRowsBefore, readServerSnapshot, readServerStart, type ServerFacts, type ServerSnapshot } from './server-snapshot.js';
import { snapshotReaderFor, type SnapshotReader } from './citus-snapshot.js';
import { SamplerConnection } from './sampler-connection.js';
import { DEFAULT_SPACING, SpacedSeries, spreadChunk, type SampleSpacing, type Streamed } from './sample-spacing.js';
import { DEFAULT_WAIT_EVERY_MS, prepareLooks, serverIsLocal, WaitSampler, type WaitSnapshot, type WaitSummary } from './wait-sampler.js';

/** What a sample tells whoever listens (the progress output, a report, a test). */
export interface SampleListener {
  sample?(event: { sample: Sample; interval: Interval | undefined; index: number }): void;
  sampleFailed?(error: unknown): void;
}

export interface SamplerOptions {
  readonly every: SampleEvery;
  /** Client clock in ms and CPU seconds; a test may pass its own. */
  readonly clock?: () => number;
  readonly cpuSeconds?: () => number;
  /** How often the load's backends' wait events are looked at (default 50 ms); `off` for never. */
  readonly waitEveryMs?: number | 'off';
  /** On a timer: how the series' samples are spaced (start, and how many are kept before halving). */
  readonly spacing?: SampleSpacing;
}

/** The sampler's session name; its wait looks' connection is `pgsurge sampler waits`. */
export const SAMPLER_NAME = 'pgsurge sampler';

const processCpuSeconds = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/**
 * Samples the server on its own connection while a load runs: a `LoadReporter` that the
 * load calls (start, each chunk), plus `stop()` for the last sample. One query at a time;
 * a sample that comes due while one is in flight is taken right after it (row buckets) or
 * skipped (time ticks). A failed sample is reported to the listener, never fails the load.
 *
 * On a timer, the series adapts to the load's length (`SampleSpacing`): samples start a
 * few milliseconds apart and their spacing doubles whenever the series is halved, so a
 * short load still has a curve and a long one bounded memory; the listeners hear a
 * sample only every `every.ms` (and the last one), as asked. The last interval, cut
 * short by the load's end, is merged into the one before when it is under half its length.
 */
export class Sampler implements LoadReporter {
  /** Row buckets: every sample; on a timer: the spaced series. */
  private readonly bucketed: Sample[] = [];
  private spaced: SpacedSeries | undefined;
  private tables: string[] = [];
  private base: { snapshot: ServerSnapshot; at: number; cpu: number; rowsBefore: number } | undefined;
  private rows = 0;
  private bytes = 0;
  private nextRows = 0;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  /** Chunks committed while a sample is in flight: spread into it too once it is recorded. */
  private committedInFlight: { start: number; end: number; rows: number; bytes: number }[] | undefined;
  private again = false;
  private stopped = false;
  rowsBeforeEstimated = false;
  /** Milliseconds spent waiting for the server's answers to samples (what sampling costs, at most). */
  busyMs = 0;
  private waitSampler: WaitSampler | undefined;
  /** The wait looks' own connection (a batch of looks runs for up to half a second: on the samples' connection it would hold them up). */
  private waitConnection: SamplerConnection | undefined;
  /** The samples' session's backend (whether the server is on this machine: its process is here). */
  private backendPid = 0;
  /** Where the load's backends spent their time, once stopped (undefined without wait sampling). */
  waitSummary: WaitSummary | undefined;
  /** The last sample recorded was read `fresh`. */
  private lastFresh = false;
  /** On a timer: the timer's period now. */
  private tickMs = 0;
  /** The last sample the listeners heard of, and how many they heard. */
  private lastHeard: Sample | undefined;
  private heard = 0;

  private constructor(
    private readonly connection: SamplerConnection,
    private readonly target: Target,
    readonly facts: ServerFacts,
    private readonly options: SamplerOptions,
    private readonly listeners: readonly SampleListener[],
    /** Plain PostgreSQL's snapshot, or a Citus cluster's (every node's WAL, the shards' sizes). */
    private readonly read: SnapshotReader,
  ) {}

  /**
   * Opens the samples' connection and, with wait looks, the looks' one, side by side; the
   * first reads the server's facts in the round trip that sets up its session.
   */
  static async open(target: Target, options: SamplerOptions, listeners: readonly SampleListener[] = []): Promise<Sampler> {
    const looking = (options.waitEveryMs ?? DEFAULT_WAIT_EVERY_MS) !== 'off';
    // Each session's statements are prepared here too (a snapshot of no table, a look for no backend): the sampler
    // opens while the load plans, and its start, which holds up the load's first row, then only runs them.
    const [opened, waits] = await Promise.allSettled([
      SamplerConnection.open(target, SAMPLER_NAME, async (c, sessionSql) => {
        const start = await readServerStart(c, sessionSql);
        if (!start.citus) await readServerSnapshot(c, [], start.facts.versionNum);
        return start;
      }),
      // a server with no connection to spare: the looks share the samples' (node-postgres queues a sample behind a batch)
      looking
        ? SamplerConnection.open(target, `${SAMPLER_NAME} waits`, async (c, sessionSql) => {
            await c.query(sessionSql);
            await prepareLooks(c);
          })
        : Promise.resolve(undefined),
    ]);
    const waitConnection = waits.status === 'fulfilled' ? waits.value?.connection : undefined;
    if (opened.status === 'rejected') {
      await waitConnection?.end();
      throw opened.reason;
    }
    const { connection, first: start } = opened.value;
    try {
      const read = await connection.run((c) => snapshotReaderFor(c, start.facts.versionNum, start.citus));
      const sampler = new Sampler(connection, target, start.facts, options, listeners, read);
      sampler.backendPid = start.backendPid;
      sampler.waitConnection = waitConnection;
      return sampler;
    } catch (error) {
      await connection.end();
      await waitConnection?.end();
      throw error;
    }
  }

  get samples(): readonly Sample[] {
    return this.spaced?.samples ?? this.bucketed;
  }

  /** On a timer: the series' first and last spacing, ms (undefined for row buckets). */
  get spacing(): { readonly startMs: number; readonly finalMs: number } | undefined {
    return this.spaced ? { startMs: this.spaced.startMs, finalMs: this.spaced.spacingMs } : undefined;
  }

  private now(): number {
    return (this.options.clock ?? (() => performance.now()))();
  }

  private cpu(): number {
    return (this.options.cpuSeconds ?? processCpuSeconds)();
  }

  /** A load's workers, named after the start (each table's load of a dbt3 load): their waits are looked at too. */
  workersNamed(workerPrefix: string): void {
    this.waitSampler?.addPrefix(workerPrefix);
  }

  /** Called by the load once the tables exist and before any row is sent: the baseline. */
  async start(info: { inputs: readonly { table: string; schema: string | undefined }[]; workerPrefix?: string }): Promise<void> {
    this.tables = [...new Set(info.inputs.map((i) => qualifiedName(i.table, i.schema)))];
    const waitEvery = this.options.waitEveryMs ?? DEFAULT_WAIT_EVERY_MS;
    let looks: Promise<void> | undefined;
    if (waitEvery !== 'off' && this.waitSampler === undefined) {
      const local = serverIsLocal(this.target, this.backendPid);
      const waits = this.waitConnection ?? this.connection;
      this.waitSampler = new WaitSampler((fn) => waits.run(fn), info.workerPrefix === undefined ? [] : [info.workerPrefix], { everyMs: waitEvery, local, versionNum: this.facts.versionNum });
      // on the looks' own connection, while the samples' reads the baseline
      looks = this.waitSampler.start();
    }
    const baseline = async (): Promise<{ before: { rows: number; estimated: boolean }; snapshot: ServerSnapshot }> => {
      const before = await this.connection.run((c) => countRowsBefore(c, this.tables));
      return { before, snapshot: await this.connection.run((c) => this.read(c, this.tables, true)) };
    };
    const [{ before, snapshot }] = await Promise.all([baseline(), looks]);
    this.rowsBeforeEstimated = before.estimated;
    this.base = { snapshot, at: this.now(), cpu: this.cpu(), rowsBefore: before.rows };
    const { every } = this.options;
    if ('ms' in every) this.spaced = new SpacedSeries(this.options.spacing ?? DEFAULT_SPACING, every.ms);
    this.record(snapshot, this.base.at, this.base.cpu, 0, 0, this.waitSampler?.snapshot(), true);
    if (this.spaced) {
      this.setTimer();
    } else if ('rows' in every) {
      this.nextRows = every.rows;
    }
  }

  /** (Re)starts the timer at the smaller of the series' spacing and the listeners' `every.ms`. */
  private setTimer(): void {
    const tick = this.spaced?.tickMs;
    if (tick === undefined || this.stopped || (tick === this.tickMs && this.timer !== undefined)) return;
    if (this.timer) clearInterval(this.timer);
    this.tickMs = tick;
    this.timer = setInterval(() => {
      if (this.inFlight === undefined) this.take();
    }, tick);
    this.timer.unref();
  }

  chunkLoaded(info: { rows: number; chunk: { location: ChunkLocation }; seconds?: number }): void {
    this.rows += info.rows;
    const bytes = inputBytesOf(info.chunk.location);
    this.bytes += bytes;
    if (info.seconds !== undefined) this.spread(info.rows, bytes, info.seconds);
    // the event loop is awake anyway: the moment to read the backends' CPU (the last chunk's reading is what a backend that then ends keeps)
    this.waitSampler?.readCpuSoon();
    const { every } = this.options;
    if ('rows' in every && this.rows >= this.nextRows) {
      this.nextRows = (Math.floor(this.rows / every.rows) + 1) * every.rows;
      if (this.inFlight !== undefined) this.again = true;
      else this.take();
    }
  }

  /**
   * A chunk's rows were sent over its `seconds` up to its commit (now): each sample taken
   * meanwhile counts the share that had passed as streamed (`rowsStreamed`), so rates
   * follow the rows as they went, not the commits' steps. (The listeners heard the samples
   * as they were then: their intervals are those of the commits.)
   */
  private spread(rows: number, bytes: number, seconds: number): void {
    // on a timer only: row buckets are taken at commits, each rate already over many of them
    if (this.base === undefined || this.spaced === undefined || seconds <= 0) return;
    const end = (this.now() - this.base.at) / 1000;
    const chunk = { start: end - seconds, end, rows, bytes };
    spreadChunk(this.samples as Streamed[], chunk);
    this.committedInFlight?.push(chunk);
  }

  /** Waits for a sample in flight, takes the last one, closes the connection. */
  async stop(): Promise<readonly Sample[]> {
    if (this.stopped) return this.samples;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    try {
      // the looks first (their batch in flight ends at the first look that finds the load's backends gone), so the last sample holds them all
      this.waitSummary = await this.waitSampler?.stop();
      while (this.inFlight) await this.inFlight;
      const last = this.samples.at(-1);
      // The last sample must be current: a reader that reuses counters between samples is asked once more, fresh.
      if (this.base && (last === undefined || last.rowsLoaded !== this.rows || this.samples.length === 1 || (this.read.reuses === true && !this.lastFresh))) await this.sampleNow();
      this.spaced?.finish();
    } finally {
      await this.connection.end();
      await this.waitConnection?.end();
    }
    return this.samples;
  }

  /** A sample now, outside the schedule (e.g. after an index build). */
  async sampleNow(): Promise<void> {
    while (this.inFlight) await this.inFlight;
    this.take(true, true);
    await this.inFlight;
  }

  /**
   * `fresh`: every figure read now (a reader may otherwise reuse counters costly to read: Citus's nodes').
   * `always`: kept in the series and told to the listeners whatever the spacing.
   */
  private take(fresh = false, always = false): void {
    if (this.base === undefined) return;
    const rows = this.rows;
    const bytes = this.bytes;
    const at = this.now();
    this.committedInFlight = [];
    const cpu = this.cpu();
    const waits = this.waitSampler?.snapshot();
    this.inFlight = this.connection.run((c) => this.read(c, this.tables, fresh))
      .finally(() => {
        this.busyMs += this.now() - at;
      })
      .then(
        (snapshot) => {
          this.lastFresh = fresh;
          this.record(snapshot, at, cpu, rows, bytes, waits, always);
        },
        (error: unknown) => {
          for (const l of this.listeners) l.sampleFailed?.(error);
        },
      )
      .finally(() => {
        this.inFlight = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          this.take();
        }
      });
  }

  private record(snapshot: ServerSnapshot, at: number, cpu: number, rows: number, bytes: number, waits: WaitSnapshot | undefined, always: boolean): void {
    const base = this.base!;
    const b = base.snapshot;
    const sample: Streamed = {
      seconds: (at - base.at) / 1000,
      rowsLoaded: rows,
      bytesLoaded: bytes,
      rowsInTable: base.rowsBefore + rows,
      heapBytes: snapshot.heapBytes,
      indexBytes: snapshot.indexBytes,
      walBytes: snapshot.walPosition - b.walPosition,
      checkpointsTimed: snapshot.checkpointsTimed - b.checkpointsTimed,
      checkpointsRequested: snapshot.checkpointsRequested - b.checkpointsRequested,
      heapBlocksRead: snapshot.heapBlocksRead - b.heapBlocksRead,
      heapBlocksHit: snapshot.heapBlocksHit - b.heapBlocksHit,
      indexBlocksRead: snapshot.indexBlocksRead - b.indexBlocksRead,
      indexBlocksHit: snapshot.indexBlocksHit - b.indexBlocksHit,
      clientCpuSeconds: cpu - base.cpu,
      ...waits,
    };
    // the chunks committed between this sample's moment and now count for it as for the samples before
    for (const chunk of this.committedInFlight ?? []) spreadChunk([sample], chunk);
    this.committedInFlight = undefined;
    const every = this.options.every;
    if (this.spaced === undefined || !('ms' in every)) {
      this.bucketed.push(sample);
      this.tell(sample);
      return;
    }
    // on a timer: kept at the series' spacing (the timer slows down as it grows), told at the listeners' `every.ms`
    this.spaced.offer(sample, always);
    this.setTimer();
    const heard = this.lastHeard;
    if (always || heard === undefined || sample.seconds - heard.seconds >= (0.9 * every.ms) / 1000) this.tell(sample);
  }

  private tell(sample: Sample): void {
    const previous = this.lastHeard;
    const interval = previous !== undefined && sample.seconds > previous.seconds ? intervalBetween(previous, sample) : undefined;
    this.lastHeard = sample;
    const index = this.heard++;
    for (const l of this.listeners) l.sample?.({ sample, interval, index });
  }
}
