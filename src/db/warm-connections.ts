import pg from 'pg';

/**
 * Connections opened ahead of need. A load's sessions (the sampler's, the durability check's,
 * the control connection, the workers, the wait looks', the WAL flusher's) used to connect one
 * after another as each part of the load came to need one: a backend forked and authenticated
 * each time, ~12 ms on a local server, ~80 ms of every load before its first row (measured,
 * docs/binary-wire.md). `warmConnections` starts n connections at once in the background;
 * `takeWarm` hands one out to `connect` (src/db/target.ts), which gives it the
 * application_name it was asked for.
 *
 * They are connected under the name a plain `connect` would give (the user's application_name,
 * else `pgsurge`), so nothing that looks for a load's backends by name (its workers' prefix)
 * counts them until they are taken. Those not taken within `WARM_FOR_MS` are closed: a
 * connection taken much later could be one the server has dropped since (a restart), and a
 * reconnect must get a fresh one. A connection that fails or ends while it waits is dropped
 * (its caller connects as before, and gets the error a connection would give).
 */
export const WARM_FOR_MS = 5_000;
/** At most this many at once: `--workers 1000` is refused by the preflight, not answered with a thousand connections. */
export const MAX_WARM = 12;

interface Warm {
  readonly client: pg.Client;
  /** Settles true once connected, false if the connection failed (already closed then). */
  readonly ready: Promise<boolean>;
  connected: boolean;
  dead: boolean;
}

const pools = new Map<string, Warm[]>();

/** The pool of connections to one server, database and user, as node-postgres would connect. */
function keyOf(config: pg.ClientConfig): string {
  const { host, port, database, user, password, ssl, connectionString, application_name } = config;
  return JSON.stringify([host, port, database, user, typeof password === 'string' ? password : undefined, ssl, connectionString, application_name]);
}

/** Starts `n` connections to `config`'s server; they wait (at most `WARM_FOR_MS`) for `takeWarm`. */
export function warmConnections(config: pg.ClientConfig, n: number, forMs = WARM_FOR_MS): void {
  n = Math.min(n, MAX_WARM);
  if (n <= 0) return;
  const key = keyOf(config);
  const pool = pools.get(key) ?? [];
  pools.set(key, pool);
  for (let i = 0; i < n; i++) {
    const client = new pg.Client({ ...config, application_name: config.application_name ?? 'pgsurge' });
    const warm: Warm = {
      client,
      connected: false,
      dead: false,
      ready: client.connect().then(
        () => {
          warm.connected = true;
          return true;
        },
        async () => {
          warm.dead = true;
          await client.end().catch(() => undefined);
          return false;
        },
      ),
    };
    client.on('error', () => {
      warm.dead = true;
    });
    client.on('end', () => {
      warm.dead = true;
    });
    pool.push(warm);
  }
  const timer = setTimeout(() => void closeWarm(pool), forMs);
  timer.unref();
}

/**
 * A warm connection to `config`'s server, or undefined when there is none (the caller connects).
 * One already connected first; else the first still connecting, waited for.
 */
export async function takeWarm(config: pg.ClientConfig): Promise<pg.Client | undefined> {
  const pool = pools.get(keyOf(config));
  while (pool && pool.length > 0) {
    const i = pool.findIndex((w) => w.connected && !w.dead);
    const [warm] = pool.splice(i >= 0 ? i : 0, 1);
    if ((await warm!.ready) && !warm!.dead) return warm!.client;
  }
  return undefined;
}

/** How many warm connections to `config`'s server are open or opening now (they count as the server's connections in use). */
export function warmCount(config: pg.ClientConfig): number {
  return (pools.get(keyOf(config)) ?? []).filter((w) => !w.dead).length;
}

async function closeWarm(pool: Warm[]): Promise<void> {
  const left = pool.splice(0);
  await Promise.allSettled(left.map(async (w) => ((await w.ready) ? w.client.end() : undefined)));
}

/** Closes every warm connection not taken (a command's end: open sockets would keep Node from exiting). */
export async function closeWarmConnections(): Promise<void> {
  await Promise.allSettled([...pools.values()].map((pool) => closeWarm(pool)));
}
