import type pg from 'pg';
import type { LoadTarget } from '../core/chunk.js';
import { qualifiedName } from '../core/identifiers.js';
import { LoadError } from '../core/load-error.js';

/**
 * What can be checked before a load changes anything (`--truncate`, `--create`, a
 * durability preset): enough free connections for the workers, and the privileges the
 * load needs on the tables that exist. A load refused here leaves everything as it was
 * (exit 2); one that failed after TRUNCATE would have emptied a table for nothing.
 */
export async function preflight(client: pg.Client, inputs: readonly LoadTarget[], options: { workers: number; truncate: boolean }): Promise<void> {
  // This connection is counted already; the workers need `workers` more.
  const r = await client.query<{ max: number; reserved: number; used: number; superuser: boolean }>(
    `SELECT current_setting('max_connections')::int AS max,
            current_setting('superuser_reserved_connections')::int + coalesce(current_setting('reserved_connections', true)::int, 0) AS reserved,
            (SELECT count(*)::int FROM pg_stat_activity WHERE backend_type = 'client backend') AS used,
            (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS superuser`,
  );
  const { max, reserved, used, superuser } = r.rows[0]!;
  const free = max - (superuser ? 0 : reserved) - used;
  if (options.workers > free) {
    throw new LoadError('bad-option', `--workers ${options.workers} needs ${options.workers} more connections, and the server has ${Math.max(0, free)} free (max_connections ${max}, ${used} in use${superuser ? '' : `, ${reserved} reserved`}); nothing was changed`, {
      hint: `use --workers ${Math.max(1, free)} or fewer, or raise max_connections`,
    });
  }
  const seen = new Set<string>();
  for (const input of inputs) {
    const name = qualifiedName(input.table, input.schema);
    if (seen.has(name)) continue;
    seen.add(name);
    const p = await client.query<{ exists: boolean; ins: boolean | null; trunc: boolean | null }>(
      `SELECT to_regclass($1) IS NOT NULL AS exists,
              CASE WHEN to_regclass($1) IS NULL THEN NULL ELSE has_table_privilege(to_regclass($1), 'INSERT') END AS ins,
              CASE WHEN to_regclass($1) IS NULL THEN NULL ELSE has_table_privilege(to_regclass($1), 'TRUNCATE') END AS trunc`,
      [name],
    );
    const row = p.rows[0]!;
    if (!row.exists) continue; // --create, or the "does not exist" message, comes later
    const missing = [row.ins === false ? 'INSERT' : undefined, options.truncate && row.trunc === false ? 'TRUNCATE' : undefined].filter((x) => x !== undefined);
    if (missing.length > 0) {
      throw new LoadError('bad-option', `the user may not ${missing.join(' or ')} on ${name}; nothing was changed`, {
        hint: `GRANT ${missing.join(', ')} ON ${name} TO current_user (as its owner), or load as another user`,
      });
    }
  }
}
