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
 * "pg_type_typname_nsp_index"`, `relation … already exists`). So each creation takes a
 * transaction-scoped advisory lock named after the object before it looks at the catalog:
 * the second process waits for the first one's COMMIT and then finds the object there.
 *
 * An advisory lock is one server's: on Citus it is taken on the node where the DDL runs.
 * A schema created on the coordinator is created on the workers in the same (two-phase)
 * transaction, and the coordinator's locks are released only after the workers committed,
 * so a process that took the coordinator's lock after it finds the schema on every node.
 */
const LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtext('pgsurge create'), hashtext($1))";

/**
 * Takes the creation lock of each object named, in one order (two processes taking two
 * locks in different orders could deadlock), inside the transaction the caller has open;
 * COMMIT or ROLLBACK releases them.
 */
export async function lockCreation(client: pg.Client, objects: readonly string[]): Promise<void> {
  for (const object of [...new Set(objects)].sort()) await client.query(LOCK_SQL, [object]);
}

/**
 * Creates an object once: in one transaction, under its creation lock, `missing` looks at
 * the catalog and, when it says so, `create` runs the DDL. Returns whether this call
 * created it. Nothing is created, and no privilege to create is needed, when the object is
 * there already.
 */
export async function createOnce(
  client: pg.Client,
  object: string,
  steps: { missing(client: pg.Client): Promise<boolean>; create(client: pg.Client): Promise<void> },
): Promise<boolean> {
  await client.query('BEGIN');
  try {
    await lockCreation(client, [object]);
    const missing = await steps.missing(client);
    if (missing) await steps.create(client);
    await client.query('COMMIT');
    return missing;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
