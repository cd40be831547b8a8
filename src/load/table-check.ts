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

/** How a missing table is made: `--create`, from the file's description where pgsurge has no DDL of its own, distributed on Citus by a column. */
export interface TableCreation {
  readonly create: boolean;
  readonly truncate: boolean;
  /** The CREATE TABLE made from the input file (`input/table-from-file.ts`), for a table without built-in DDL or a file not shaped like it. */
  readonly fromFile?: string | undefined;
  /** Citus: `create_distributed_table` on this column right after a `--create` made the table. */
  readonly distributeBy?: string | undefined;
}

/**
 * Makes sure a target table exists (creating it with `--create`: the one made from the file,
 * else the built-in DDL of the DBT-3 and narrow tables), emptied with `--truncate`.
 * With `--create`, run it under `withTableCreationLocks`. Returns whether it created it.
 */
export async function prepareTable(client: pg.Client, table: string, schema: string | undefined, options: TableCreation): Promise<boolean> {
  const name = qualifiedName(table, schema);
  const found = await client.query<{ oid: string | null }>('SELECT to_regclass($1)::oid AS oid', [name]);
  if (found.rows[0]?.oid == null) {
    const ddl = options.fromFile ?? createTableSql(table, schema);
    if (!options.create) {
      throw new LoadError('missing-table', `table ${name} does not exist`, {
        hint: createTableSql(table, schema)
          ? "add --create to create it from the built-in DDL (when the file has the table's columns; else from the file's columns and types, as `pgsurge schema <file>` prints)"
          : 'create it first, or add --create to make it from the columns and types of the file (`pgsurge schema <file>` prints the CREATE TABLE it would run)',
      });
    }
    if (ddl === undefined) {
      throw new LoadError('missing-table', `table ${name} does not exist and pgsurge cannot describe its input`, {
        hint: 'create it first: `pgsurge schema <file>` prints a CREATE TABLE for a file (stdin or a pipe cannot be described: save it to a file)',
      });
    }
    await client.query(ddl);
    if (options.distributeBy !== undefined) await distribute(client, name, options.distributeBy);
    return true;
  } else if (options.truncate) {
    await client.query(`TRUNCATE ${name}`);
  }
  return false;
}

/** Citus: the table just created made a distributed table on `column` (in the transaction that created it). */
async function distribute(client: pg.Client, name: string, column: string): Promise<void> {
  const citus = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_extension WHERE extname = 'citus'");
  if ((citus.rows[0]?.n ?? 0) === 0) {
    throw new LoadError('bad-option', `--distribute-by ${column}: the database has no Citus extension`, { hint: 'drop --distribute-by, or load into a Citus coordinator' });
  }
  const has = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = $2 AND attnum > 0 AND NOT attisdropped', [name, column]);
  if ((has.rows[0]?.n ?? 0) === 0) {
    throw new LoadError('bad-option', `--distribute-by ${column}: ${name} would have no column ${quoteIdent(column)}`, { hint: 'name one of its columns (`pgsurge schema <file>` shows them)' });
  }
  await client.query('SELECT create_distributed_table($1, $2)', [name, column]);
}

/**
 * Stops a load into a `--schema` the database does not have, before anything is created
 * or emptied: the server would say only `schema "x" does not exist` from the first
 * CREATE TABLE or COPY. pgsurge never creates a schema itself (a typo would get one).
 */
export async function requireSchema(client: pg.Client, schema: string | undefined): Promise<void> {
  // pg_temp: the session's own schema of temporary tables (a dry run's), made on first use.
  if (schema === undefined || schema === 'pg_temp') return;
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
