import type pg from 'pg';
import { createTableSql } from '../datasets/table-ddl.js';
import { withCreationLocks } from '../core/create-once.js';
import { qualifiedName, quoteIdent } from '../core/identifiers.js';
import { LoadError } from '../core/load-error.js';

/**
 * Runs `fn` (which begins and ends its own transaction) holding the creation locks
 * (src/core/create-once.ts) of the tables a `--create` may create, when `create` is set:
 * loads started at once (the parts of one) create each table once, and the others find it.
 */
export async function withTableCreationLocks<T>(client: pg.Client, tables: readonly { table: string; schema: string | undefined }[], create: boolean, fn: () => Promise<T>): Promise<T> {
  if (!create) return fn();
  const r = await client.query<{ s: string | null }>('SELECT current_schema() AS s');
  const current = r.rows[0]?.s ?? '';
  return withCreationLocks(
    client,
    tables.map((t) => `table ${qualifiedName(t.table, t.schema ?? current)}`),
    fn,
  );
}

/**
 * Makes sure a target table exists (creating it from the built-in DDL with `--create`),
 * emptied with `--truncate`. With `--create`, run it under `withTableCreationLocks`.
 */
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

/**
 * Stops a load into a `--schema` the database does not have, before anything is created
 * or emptied: the server would say only `schema "x" does not exist` from the first
 * CREATE TABLE or COPY. pgsurge never creates a schema itself (a typo would get one).
 */
export async function requireSchema(client: pg.Client, schema: string | undefined): Promise<void> {
  if (schema === undefined) return;
  const r = await client.query<{ found: boolean; db: string; current: string | null }>(
    'SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS found, current_database() AS db, current_schema() AS current',
    [schema],
  );
  const row = r.rows[0];
  if (row?.found) return;
  throw new LoadError('bad-option', `--schema ${schema}: database ${row?.db ?? '?'} has no schema ${quoteIdent(schema)}`, {
    hint: `create it first (CREATE SCHEMA ${quoteIdent(schema)};), or leave out --schema to use the search_path's${row?.current ? ` (${row.current})` : ''}`,
  });
}
