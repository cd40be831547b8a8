import { processCpuSeconds } from './proc-stat.js';
import { readFileSync } from 'node:fs';
import type pg from 'pg';
import type { Target } from '../db/target.js';
import { addWaits, classifyWait, NO_WAITS, WAIT_CLASSES, type WaitClass, type WaitCounts } from './wait-classes.js';

/**
 * How often the load's backends are looked at by default: 20 looks per backend in a 1 s
 * interval. Each look costs pgsurge ~0.2 ms of CPU back to back and up to ~1 ms on a busy
 * machine (a wake-up of an idle process), the server ~0.06 ms: at 25 ms that was ~4% of a
 * core on this 2-core machine, over the 2% budget.
 */
export const DEFAULT_WAIT_EVERY_MS = 50;

/** Looks between readings of the backends' CPU in /proc: often enough to lose little when a backend ends, rarely enough to cost nothing. */
const CPU_EVERY_LOOKS = 2;

/**
 * One small query: the load's backends only, matched by their application_name prefixes
 * (one per load: a dbt3 load watches the loads of its tables).
 * The function under the pg_stat_activity view, without the view's joins to pg_database
 * and pg_authid, and prepared once (named): parsing and planning the view each time cost
 * the server ~10× the look itself.
 */
export const WAIT_LOOK_SQL = `SELECT pid, state, wait_event_type, wait_event FROM pg_stat_get_activity(NULL) WHERE EXISTS (SELECT FROM unnest($1::text[]) AS p WHERE left(application_name, length(p)) = p)`;
const WAIT_LOOK_NAME = 'pgsurge-wait-look';

/** Cluster-wide counters read at the start and end of the load, where the version has them. */
export interface ServerIoCounters {
  /** pg_stat_wal (14+). */
  readonly walRecords?: number;
  readonly walFpi?: number;
  readonly walBytes?: number;
  /** Times a backend found the WAL buffers full and wrote them itself (raise wal_buffers). */
  readonly walBuffersFull?: number;
  /** pg_stat_io (16+), client backends on relations: blocks read, written, extended; fsyncs they did themselves. */
  readonly backendReads?: number;
  readonly backendWrites?: number;
  readonly backendExtends?: number;
  readonly backendFsyncs?: number;
  /** Blocks written by the checkpointer and the background writer. */
  readonly checkpointerWrites?: number;
  readonly bgwriterWrites?: number;
}

/** What the wait sampling saw over the whole load. */
export interface WaitSummary {
  readonly everyMs: number;
  /** Looks taken (each sees every backend of the load once). */
  readonly looks: number;
  /** Backend-looks per class. */
  readonly waits: WaitCounts;
  /** The most frequent wait events, `type:event`, with their class and backend-looks. */
  readonly events: readonly { readonly event: string; readonly class: WaitClass; readonly looks: number }[];
  /** Whether the server runs on this machine (its backends' CPU read from /proc). */
  readonly local: boolean;
  /** CPU seconds the load's backends used (local servers only). */
  readonly serverCpuSeconds?: number;
  /** Deltas of cluster-wide counters over the load (all sessions, not only the load's). */
  readonly io?: ServerIoCounters;
}

/** The cumulative figures stored in each sample. */
export interface WaitSnapshot {
  readonly waits: WaitCounts;
  readonly serverCpuSeconds?: number;
}


/**
 * Whether the server is on this machine: the managed cluster, or a server whose backend
 * (the sampler's own) is a `postgres` process here, reached by socket or loopback.
 */
export function serverIsLocal(target: Target, backendPid: number, read: (file: string) => string = (f) => readFileSync(f, 'utf8')): boolean {
  if (target.managed !== undefined) return true;
  const host = hostOf(target.config);
  const loopback = host === undefined || host.startsWith('/') || host === 'localhost' || host === '127.0.0.1' || host === '::1';
  if (!loopback) return false;
  try {
    return read(`/proc/${backendPid}/comm`).trim() === 'postgres';
  } catch {
    return false;
  }
}

function hostOf(config: pg.ClientConfig): string | undefined {
  if (config.host) return config.host;
  const url = config.connectionString;
  if (url === undefined) return process.env.PGHOST;
  try {
    const u = new URL(url);
    return u.searchParams.get('host') ?? (u.hostname === '' ? undefined : decodeURIComponent(u.hostname).replace(/^\[|\]$/g, ''));
  } catch {
    // libpq's `postgresql://user@/db?host=%2Fsocket` (no host: not a WHATWG URL), or `host=/socket dbname=…`
    const m = /(?:^|[?&\s])host=([^&\s]+)/.exec(url);
    return m ? decodeURIComponent(m[1]!) : undefined;
  }
}

function ioSql(versionNum: number): string | undefined {
  const parts: string[] = [];
  if (versionNum >= 140000) parts.push('(SELECT row(wal_records, wal_fpi, wal_bytes, wal_buffers_full)::text FROM pg_stat_wal) AS wal');
  if (versionNum >= 160000) {
    parts.push(`(SELECT row(sum(reads) FILTER (WHERE backend_type = 'client backend' AND object = 'relation'),
                            sum(writes) FILTER (WHERE backend_type = 'client backend' AND object = 'relation'),
                            sum(extends) FILTER (WHERE backend_type = 'client backend' AND object = 'relation'),
                            sum(fsyncs) FILTER (WHERE backend_type = 'client backend' AND object = 'relation'),
                            sum(writes) FILTER (WHERE backend_type = 'checkpointer' AND object = 'relation'),
                            sum(writes) FILTER (WHERE backend_type = 'background writer' AND object = 'relation'))::text FROM pg_stat_io) AS io`);
  }
  return parts.length > 0 ? `SELECT ${parts.join(', ')}` : undefined;
}

/** `(1,2,,4)` → [1, 2, undefined, 4]. */
function rowNumbers(text: string | null | undefined): (number | undefined)[] {
  if (!text) return [];
  return text.replace(/^\(|\)$/g, '').split(',').map((f) => (f === '' ? undefined : Number(f)));
}

async function readIoCounters(client: pg.Client, versionNum: number): Promise<ServerIoCounters> {
  const sql = ioSql(versionNum);
  if (sql === undefined) return {};
  const r = (await client.query<{ wal?: string; io?: string }>(sql)).rows[0];
  const [walRecords, walFpi, walBytes, walBuffersFull] = rowNumbers(r?.wal);
  const [backendReads, backendWrites, backendExtends, backendFsyncs, checkpointerWrites, bgwriterWrites] = rowNumbers(r?.io);
  const all = { walRecords, walFpi, walBytes, walBuffersFull, backendReads, backendWrites, backendExtends, backendFsyncs, checkpointerWrites, bgwriterWrites };
  return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined && Number.isFinite(v))) as ServerIoCounters;
}

function ioDelta(a: ServerIoCounters, b: ServerIoCounters): ServerIoCounters {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(b) as [keyof ServerIoCounters, number][]) {
    const before = a[k];
    if (before !== undefined) out[k] = v - before;
  }
  return out as ServerIoCounters;
}

/**
 * Looks at the load's backends in pg_stat_activity every `everyMs` on a connection it is
 * handed (the sampler's), and counts what each was doing. A look that comes due while the
 * last one is still in flight is skipped, so a slow server gets fewer looks, never a queue.
 */
export class WaitSampler {
  private waits: WaitCounts = NO_WAITS;
  private looks = 0;
  private readonly events = new Map<string, { class: WaitClass; looks: number }>();
  /** CPU seconds per backend pid: at first sight and last read. */
  private readonly cpu = new Map<number, { first: number; last: number }>();
  private timer: NodeJS.Timeout | undefined;
  private inFlight = false;
  private ioBefore: ServerIoCounters | undefined;
  private stopped: WaitSummary | undefined;

  constructor(
    private readonly run: <T>(fn: (c: pg.Client) => Promise<T>) => Promise<T>,
    private readonly prefixes: string[],
    private readonly options: { readonly everyMs: number; readonly local: boolean; readonly versionNum: number },
  ) {}

  /** Another load's workers to look at, from the next look on. */
  addPrefix(prefix: string): void {
    if (!this.prefixes.includes(prefix)) this.prefixes.push(prefix);
  }

  /** The first look (the backends' CPU baseline) and the cluster-wide counters; then the timer. */
  async start(): Promise<void> {
    this.ioBefore = await this.run((c) => readIoCounters(c, this.options.versionNum)).catch(() => undefined);
    await this.look();
    this.timer = setInterval(() => {
      if (!this.inFlight) void this.look();
    }, this.options.everyMs);
    this.timer.unref();
  }

  private async look(): Promise<void> {
    this.inFlight = true;
    try {
      const r = await this.run((c) => c.query<{ pid: number; state: string | null; wait_event_type: string | null; wait_event: string | null }>({ name: WAIT_LOOK_NAME, text: WAIT_LOOK_SQL, values: [this.prefixes] }));
      if (this.stopped) return;
      const counts: Record<WaitClass, number> = { ...NO_WAITS };
      for (const row of r.rows) {
        const c = classifyWait(row.state, row.wait_event_type, row.wait_event);
        if (c === undefined) continue;
        counts[c]++;
        if (c !== 'cpu' && row.wait_event !== null) {
          const key = `${row.wait_event_type}:${row.wait_event}`;
          const e = this.events.get(key) ?? { class: c, looks: 0 };
          e.looks++;
          this.events.set(key, e);
        }
        if (this.options.local && !this.cpu.has(row.pid)) {
          const s = processCpuSeconds(row.pid);
          if (s !== undefined) this.cpu.set(row.pid, { first: s, last: s });
        }
      }
      // every 2nd look (~100 ms) the backends' CPU is read again: a backend that ends keeps its last reading
      if (this.options.local && this.looks % CPU_EVERY_LOOKS === 0) this.serverCpuSeconds();
      this.waits = addWaits(this.waits, counts);
      this.looks++;
    } catch {
      // a look that fails (server restarting) is a look not taken; the sampler reports its own failures
    } finally {
      this.inFlight = false;
    }
  }

  /** CPU seconds the backends seen so far used since first seen (a backend that ended keeps its last reading). */
  private serverCpuSeconds(): number | undefined {
    if (!this.options.local) return undefined;
    let total = 0;
    for (const [pid, c] of this.cpu) {
      const now = processCpuSeconds(pid);
      if (now !== undefined && now >= c.last) c.last = now;
      total += c.last - c.first;
    }
    return total;
  }

  /** The cumulative figures now, for a sample. */
  snapshot(): WaitSnapshot {
    const cpu = this.serverCpuSeconds();
    return { waits: this.waits, ...(cpu !== undefined ? { serverCpuSeconds: cpu } : {}) };
  }

  /** Stops looking; the whole load's figures. */
  async stop(): Promise<WaitSummary> {
    if (this.stopped) return this.stopped;
    if (this.timer) clearInterval(this.timer);
    const cpu = this.serverCpuSeconds();
    const ioAfter = this.ioBefore ? await this.run((c) => readIoCounters(c, this.options.versionNum)).catch(() => undefined) : undefined;
    const events = [...this.events.entries()]
      .map(([event, e]) => ({ event, class: e.class, looks: e.looks }))
      .sort((a, b) => b.looks - a.looks)
      .slice(0, 8);
    this.stopped = {
      everyMs: this.options.everyMs,
      looks: this.looks,
      waits: this.waits,
      events,
      local: this.options.local,
      ...(cpu !== undefined ? { serverCpuSeconds: cpu } : {}),
      ...(this.ioBefore && ioAfter ? { io: ioDelta(this.ioBefore, ioAfter) } : {}),
    };
    return this.stopped;
  }
}

/** Checks WAIT_CLASSES and the counts agree (for reports read back from files). */
export function isWaitCounts(value: unknown): value is WaitCounts {
  return typeof value === 'object' && value !== null && WAIT_CLASSES.every((c) => typeof (value as Record<string, unknown>)[c] === 'number');
}
