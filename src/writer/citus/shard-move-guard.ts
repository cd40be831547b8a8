import type pg from 'pg';

/**
 * Holds off moves, splits and rebalances of a routed load's shards for the load's whole run.
 *
 * Rows COPYed straight into a shard table do not go through Citus, so Citus's own guard
 * against a shard moving under its writes does not see them: a `block_writes` move copies
 * the old placement from a snapshot and then drops it, and a logical-replication move
 * switches placements once it has caught up. Both first block writes with
 * `BlockWritesToShardList` (operations/shard_transfer.c, replication/multi_logical_replication.c,
 * operations/shard_split.c), which takes each shard's metadata lock in ExclusiveLock on the
 * coordinator. pgsurge takes it in ShareLock, which ExclusiveLock waits for (`lock_shard_metadata`, utils/resource_lock.c) on a session
 * of its own, in a transaction kept open until the end-of-load check is done. A move then
 * waits for the load to end before it stops writes (a logical-replication move copies and
 * catches up meanwhile: the rows pgsurge writes into the old placement reach the new one),
 * and the end check finds the map as it began. ShareLock does not conflict with itself, so
 * `--part` siblings and other routed loads run side by side.
 */
const SHARE_LOCK = 5; // PostgreSQL's ShareLock; lock_shard_metadata takes the lock mode as its number.

export interface MoveGuard {
  /** Why shard moves are NOT held off (the lock was refused: not the tables' owner, an old Citus…), or undefined. */
  readonly notHeld: string | undefined;
  /** Ends the guard's transaction and session (after the end check, or when the load stops). */
  release(): Promise<void>;
}

/** Takes the shards' metadata locks on `session` (its own connection to the coordinator) and keeps them until release. */
export async function holdShardMoves(session: pg.Client, shardIds: readonly string[]): Promise<MoveGuard> {
  // A session lost during the load takes its lock with it; the end check is then what is left (and COMMIT is not sent).
  let lost = false;
  session.on('error', () => {
    lost = true;
  });
  let notHeld: string | undefined;
  try {
    await session.query('BEGIN');
    // Waits while a move of one of these shards is blocking writes: the load begins after it.
    await session.query('SELECT lock_shard_metadata($1, $2::bigint[])', [SHARE_LOCK, shardIds]);
  } catch (error) {
    notHeld = `lock_shard_metadata failed: ${error instanceof Error ? error.message : String(error)}`;
    await session.query('ROLLBACK').catch(() => undefined);
  }
  let released = false;
  return {
    notHeld,
    async release() {
      if (released) return;
      released = true;
      if (notHeld === undefined && !lost) await session.query('COMMIT').catch(() => undefined);
      await session.end().catch(() => undefined);
    },
  };
}
