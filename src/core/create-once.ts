import type pg from 'pg';

/**
 * What pgsurge creates on first use — its ledger (schema `pgsurge`, its tables, indexes
 * and added columns), a routed Citus load's `routed_files`, a Citus node's ledger, a
 * `--create` table — is created by whichever of any number of pgsurge processes starting
 * at once gets there first, and found by the others.
 *
 * `CREATE … IF NOT EXISTS` alone does not do that: two sessions that both look before
 * either commits both find the object missing, both create it, and the second fails on the
 * catalog's unique index (`duplicate key value violates unique constraint
 * "pg_type_typname_nsp_index"`, `relation … already exists`). So each creation first takes
 * an advisory lock named after the object, then looks at the catalog: the second process
 * waits for the first one's COMMIT and then finds the object there.
 *
 * The lock is the session's, taken before the transaction that looks and creates begins,
 * not a transaction's lock taken inside it: a backend reads the catalog changes other
 * sessions committed (their invalidation messages) when a transaction begins or it locks a
 * relation, not when it gets an advisory lock, so a lookup made earlier in the session
 * (`to_regclass` finding nothing) would still say "missing" after the wait, and the CREATE
 * would fail as before.
 *
 * An advisory lock is one server's: on Citus it is taken on the node where the DDL runs.
 * A schema created on the coordinator is created on the workers in the same (two-phase)
 * transaction, committed there before the coordinator's COMMIT returns, so a process that
 * takes the coordinator's lock after it finds the schema on every node.
 */
const LOCK_SQL = "SELECT pg_advisory_lock(hashtext('pgsurge create'), hashtext($1))";
const UNLOCK_SQL = "SELECT pg_advisory_unlock(hashtext('pgsurge create'), hashtext($1))";

/**
 * Runs `fn` holding the creation locks of the objects named, taken in one order (two
 * processes taking two locks in different orders could deadlock) before `fn` begins its
 * transaction, and released after it, however it ends. Outside a transaction only.
 */
export async function withCreationLocks<T>(client: pg.Client, objects: readonly string[], fn: () => Promise<T>): Promise<T> {
  const names = [...new Set(objects)].sort();
  const held: string[] = [];
  try {
    for (const object of names) {
      await client.query(LOCK_SQL, [object]);
      held.push(object);
    }
    return await fn();
  } finally {
    // A connection that broke took its session's locks with it.
    for (const object of held.reverse()) await client.query(UNLOCK_SQL, [object]).catch(() => undefined);
  }
}

/**
 * Creates an object once: holding its creation lock, one transaction in which `missing`
 * looks at the catalog and, when it says so, `create` runs the DDL. Returns whether this
 * call created it. Nothing is created, and no privilege to create is needed, when the
 * object is there already.
 *
 * `missing` is asked once first without the lock, in a statement of its own: what it finds
 * there is committed (a statement outside a transaction begins one, which reads the catalog
 * changes committed before it), so when nothing is missing, nothing more is done (four
 * round trips fewer at the start of every load). Only a "missing" goes on to the lock and
 * asks again.
 */
export async function createOnce(
  client: pg.Client,
  object: string,
  steps: { missing(client: pg.Client): Promise<boolean>; create(client: pg.Client): Promise<void> },
): Promise<boolean> {
  if (!(await steps.missing(client))) return false;
  return withCreationLocks(client, [object], async () => {
    await client.query('BEGIN');
    try {
      const missing = await steps.missing(client);
      if (missing) await steps.create(client);
      await client.query('COMMIT');
      return missing;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  });
}
