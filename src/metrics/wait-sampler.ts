import { ProcCpuReader } from './proc-stat.js';
import { readFileSync } from 'node:fs';
import type pg from 'pg';
import type { Target } from '../cluster/target.js';
import { addWaits, classifyWait, NO_WAITS, type WaitClass, type WaitCounts } from './wait-classes.js';

/**
 * How often the load's backends are looked at by default: 20 looks per backend in a 1 s
 * interval. The server takes the looks itself, a batch of them per query (WAIT_BATCH_MS),
 * so pgsurge wakes twice per batch, not per look (docs/diagnostics.md, "What sampling costs").
 */
export const DEFAULT_WAIT_EVERY_MS = 50;

/**
 * How long one batch of looks runs on the server. Waking pgsurge costs it ~0.3 ms of CPU
 * (a timer, or a socket with an answer; measured on this 2-core VM), a look sent by
 * pgsurge two wake-ups and its parsing: ~1 ms, 2% of a core at 50 ms. A batch of half a
 * second costs the same ~1 ms for 10 looks; the samples' waits lag by at most a batch.
 */
export const WAIT_BATCH_MS = 500;

/** Pause after a batch that failed. */
const FAILED_BATCH_PAUSE_MS = 1000;

/** Least time between two readings of the backends' CPU in /proc when a chunk ends (the event loop is awake then anyway). */
const CPU_EVERY_MS = 50;

/** One look at the load's backends (matched by their application_name prefixes, $1), `arg` the pid argument of pg_stat_get_activity. */
const lookAt = (arg: string): string =>
  `SELECT count(*)::int, array_agg(s.pid), array_agg(s.state), array_agg(s.wait_event_type), array_agg(s.wait_event)
     FROM pg_stat_get_activity(${arg}) AS s
    WHERE EXISTS (SELECT FROM unnest($1::text[]) AS p WHERE left(s.application_name, length(p)) = p)`;

/**
 * Up to $2 looks, $3 seconds apart, taken by the server in one query: a recursive query
 * whose each step sleeps, drops the backend-status snapshot the transaction keeps
 * (pg_stat_clear_snapshot: without it every look in one statement would see the first
 * one's), then looks again. The pid argument depends on the previous step (`l.n`), so
 * the look is run again at each step, after the sleep (a CASE evaluates its test first).
 * A look that finds none of the load's backends ends the batch: the load is over (or not
 * yet begun), and stop() need not wait out the batch. The answer is one row: the looks
 * taken, the pids seen, and backend-looks per (state, wait_event_type, wait_event).
 * pg_stat_get_activity, not the pg_stat_activity view: the view's joins cost the server
 * ~10× the look. Prepared once (named).
 */
export const WAIT_LOOK_SQL = `WITH RECURSIVE look(n, seen, pids, states, types, events) AS (
  SELECT 1, a.* FROM (${lookAt('NULL')}) AS a
  UNION ALL
  SELECT l.n + 1, a.* FROM look AS l,
    LATERAL (${lookAt("(CASE WHEN l.n > 0 AND pg_sleep($3::float8)::text IS NOT NULL AND pg_stat_clear_snapshot()::text IS NOT NULL THEN NULL END)::int")}) AS a
   WHERE l.n < $2::int AND l.seen > 0
), seen AS (
  SELECT b.* FROM look, unnest(look.pids, look.states, look.types, look.events) AS b(pid, state, type, event)
)
SELECT (SELECT max(n) FROM look) AS looks, (SELECT array_agg(DISTINCT pid) FROM seen) AS pids,
       array_agg(g.state), array_agg(g.type), array_agg(g.event), array_agg(g.n)
  FROM (SELECT state, type, event, count(*)::int AS n FROM seen GROUP BY 1, 2, 3) AS g`;
const WAIT_LOOK_NAME = 'pgsurge-wait-looks';

/**
 * Prepares the looks' statement on `client` (a look for no backend, which ends at once),
 * so the first batch at the load's start is not also the one that parses and plans it.
 */
export async function prepareLooks(client: pg.Client): Promise<void> {
  await client.query({ name: WAIT_LOOK_NAME, text: WAIT_LOOK_SQL, values: [[], 1, 0], rowMode: 'array' });
}

/** The batch's answer, as rowMode 'array' gives it. */
type BatchRow = [looks: number, pids: number[] | null, states: (string | null)[] | null, types: (string | null)[] | null, events: (string | null)[] | null, counts: number[] | null];

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
  // No host named: libpq's default, a local socket (the CLI's targets name theirs: PGHOST is resolved into the config).
  if (url === undefined) return undefined;
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
 * Looks at the load's backends in pg_stat_activity every `everyMs`, in batches the server
 * takes on a connection it is handed (the sampler's looks connection), and counts what
 * each was doing. The next batch starts `everyMs` after the last one answered: a slow
 * server gets fewer looks, never a queue.
 */
export class WaitSampler {
  private waits: WaitCounts = NO_WAITS;
  private looks = 0;
  private readonly events = new Map<string, { class: WaitClass; looks: number }>();
  /** CPU seconds per backend pid: at first sight and last read, and its open /proc file. */
  private readonly cpu = new Map<number, { first: number; last: number; reader: ProcCpuReader }>();
  private cpuReadAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private ioBefore: ServerIoCounters | undefined;
  private stopping = false;
  private stopped: WaitSummary | undefined;

  constructor(
    private readonly run: <T>(fn: (c: pg.Client) => Promise<T>) => Promise<T>,
    private readonly prefixes: string[],
    private readonly options: { readonly everyMs: number; readonly local: boolean; readonly versionNum: number },
  ) {}

  /** Another load's workers to look at, from the next batch on. */
  addPrefix(prefix: string): void {
    if (!this.prefixes.includes(prefix)) this.prefixes.push(prefix);
  }

  /** The first look (the backends' CPU baseline) and the cluster-wide counters; then the batches. */
  async start(): Promise<void> {
    this.ioBefore = await this.run((c) => readIoCounters(c, this.options.versionNum)).catch(() => undefined);
    await this.batch(1);
    this.next();
  }

  private next(failed = false): void {
    if (this.stopping) return;
    // after a failure (the server restarting, or refusing the query) a batch a second, not a reconnection every 50 ms
    this.timer = setTimeout(() => {
      this.inFlight = this.batch(Math.max(1, Math.round(WAIT_BATCH_MS / this.options.everyMs))).then((ok) => {
        this.inFlight = undefined;
        this.next(!ok);
      });
    }, failed ? FAILED_BATCH_PAUSE_MS : this.options.everyMs);
    this.timer.unref();
  }

  /** One batch of looks, counted; false when it failed. */
  private async batch(looks: number): Promise<boolean> {
    if (this.prefixes.length === 0) return true;
    try {
      const r = await this.run((c) => c.query<BatchRow>({ name: WAIT_LOOK_NAME, text: WAIT_LOOK_SQL, values: [this.prefixes, looks, this.options.everyMs / 1000], rowMode: 'array' }));
      this.count(r.rows[0]);
      return true;
    } catch {
      // a batch that fails is looks not taken; the sampler reports its own failures
      return false;
    }
  }

  private count(row: BatchRow | undefined): void {
    if (row === undefined) return;
    const [looks, pids, states, types, events, counts] = row;
    const add: Record<WaitClass, number> = { ...NO_WAITS };
    for (let g = 0; g < (counts?.length ?? 0); g++) {
      const type = types![g] ?? null;
      const event = events![g] ?? null;
      const c = classifyWait(states![g] ?? null, type, event);
      if (c === undefined) continue;
      add[c] += counts![g]!;
      if (c !== 'cpu' && event !== null) {
        const key = `${type}:${event}`;
        const e = this.events.get(key) ?? { class: c, looks: 0 };
        e.looks += counts![g]!;
        this.events.set(key, e);
      }
    }
    if (this.options.local) {
      for (const pid of pids ?? []) {
        if (this.cpu.has(pid)) continue;
        const reader = ProcCpuReader.open(pid);
        const s = reader?.read();
        if (reader && s !== undefined) this.cpu.set(pid, { first: s, last: s, reader });
      }
    }
    this.waits = addWaits(this.waits, add);
    this.looks += looks;
  }

  /** Reads the backends' CPU again unless it was read in the last CPU_EVERY_MS (called as chunks end). */
  readCpuSoon(): void {
    if (this.options.local && performance.now() - this.cpuReadAt >= CPU_EVERY_MS) this.serverCpuSeconds();
  }

  /** CPU seconds the backends seen so far used since first seen (a backend that ended keeps its last reading). */
  private serverCpuSeconds(): number | undefined {
    if (!this.options.local) return undefined;
    this.cpuReadAt = performance.now();
    let total = 0;
    for (const c of this.cpu.values()) {
      const now = c.reader.read();
      if (now !== undefined && now >= c.last) c.last = now;
      total += c.last - c.first;
    }
    return total;
  }

  /** The cumulative figures now, for a sample. */
  snapshot(): WaitSnapshot {
    const cpu = this.stopped?.serverCpuSeconds ?? this.serverCpuSeconds();
    return { waits: this.waits, ...(cpu !== undefined ? { serverCpuSeconds: cpu } : {}) };
  }

  /** Stops looking (the batch in flight is counted: it ends at its first look without the load's backends); the whole load's figures. */
  async stop(): Promise<WaitSummary> {
    if (this.stopped) return this.stopped;
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    await this.inFlight;
    const cpu = this.serverCpuSeconds();
    for (const c of this.cpu.values()) c.reader.close();
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
