import type pg from 'pg';
import { createTableSql } from '../datasets/table-ddl.js';
import { qualifiedName } from './identifiers.js';
import { LoadError } from './load-error.js';

/** Makes sure a target table exists (creating it from the built-in DDL with `--create`), emptied with `--truncate`. */
export async function prepareTable(
  client: pg.Client,
  table: string,
  schema: string | undefined,
  options: { create: boolean; truncate: boolean },
): Promise<void> {
  const name = qualifiedName(table, schema);
  const found = await client.query<{ oid: string | null }>('SELECT to_regclass($1)::oid AS oid', [name]);
  if (found.rows[0]?.oid == null) {
    const ddl = createTableSql(table, schema);
    if (!options.create) {
      throw new LoadError('missing-table', `table ${name} does not exist`, {
        hint: ddl ? 'add --create to create it from the built-in DDL' : 'create it first (pgsurge --create knows only the DBT-3 and narrow tables)',
      });
    }
    if (ddl === undefined) {
      throw new LoadError('missing-table', `table ${name} does not exist and pgsurge has no DDL for it`, {
        hint: 'create it first; --create knows the eight DBT-3 tables and the narrow table',
      });
    }
    await client.query(ddl);
  } else if (options.truncate) {
    await client.query(`TRUNCATE ${name}`);
  }
}
