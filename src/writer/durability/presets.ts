/**
 * Durability presets for a load: what each trades, in words a DBA can hold us to.
 * `safe` changes nothing; `fast` only what cannot corrupt anything; `unsafe` what can.
 */
export const DURABILITY_PRESETS = ['safe', 'fast', 'unsafe'] as const;
export type DurabilityPreset = (typeof DURABILITY_PRESETS)[number];

export function isDurabilityPreset(value: string): value is DurabilityPreset {
  return (DURABILITY_PRESETS as readonly string[]).includes(value);
}

export interface DurabilityOptions {
  readonly preset: DurabilityPreset;
  /** Load into an unlogged table, `SET LOGGED` at the end. */
  readonly unlogged: boolean;
}

export const SAFE_DURABILITY: DurabilityOptions = { preset: 'safe', unlogged: false };

/** Session settings of the load's own connections. */
export const SESSION_SETTINGS: Readonly<Record<DurabilityPreset, Readonly<Record<string, string>>>> = {
  safe: {},
  fast: { synchronous_commit: 'off' },
  unsafe: { synchronous_commit: 'off' },
};

/** Server settings for `unsafe`; the managed cluster restarts with them, and again without them after the load. */
export const UNSAFE_SERVER_SETTINGS: Readonly<Record<string, string>> = {
  fsync: 'off',
  full_page_writes: 'off',
  wal_level: 'minimal',
  // wal_level=minimal refuses to start with WAL senders configured.
  max_wal_senders: '0',
};

/** The settings a durability report records: the ones that decide what a crash can lose. */
export const DURABILITY_SETTINGS = ['fsync', 'full_page_writes', 'wal_level', 'synchronous_commit', 'max_wal_senders', 'wal_compression'] as const;

/** What a crash during (or just after) the load can cost, said plainly. */
export function crashCanLose(options: DurabilityOptions): string {
  const parts: string[] = [];
  switch (options.preset) {
    case 'safe':
      parts.push('nothing committed: a chunk counts as committed once its commit is on disk, the chunk in flight rolls back');
      break;
    case 'fast':
      parts.push(
        'no corruption; but a crash (of PostgreSQL or the machine) can lose the last chunks the loader counted as committed (synchronous_commit=off: up to 3 × wal_writer_delay, 600 ms by default) — whole chunks, never half of one, and a chunk\'s ledger row is lost with it',
      );
      break;
    case 'unsafe':
      parts.push(
        'EVERYTHING: with fsync=off and full_page_writes=off, a crash of the machine or the OS (power loss, kernel panic, VM killed) while the load runs can corrupt the whole cluster, not just this table — recreate the cluster if that happens',
      );
      break;
  }
  const said = parts.join('; ');
  return options.unlogged ? `${said}; but the table is unlogged until SET LOGGED finishes: a crash before then empties it` : said;
}

export const UNSAFE_WARNING =
  'pgsurge: WARNING: --durability unsafe restarts the managed cluster with fsync=off, full_page_writes=off and wal_level=minimal for this load.\n' +
  'pgsurge: WARNING: a crash of the machine or the OS while they are on can CORRUPT THE WHOLE CLUSTER; other sessions on it are disconnected by the restarts.\n';
