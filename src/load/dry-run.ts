import type pg from 'pg';
import type { LoadTarget } from '../core/chunk.js';
import { qualifiedName } from '../core/identifiers.js';
import { LoadError } from '../core/load-error.js';
import { createTableSql } from '../datasets/table-ddl.js';
import { createTableFromFile } from '../input/table-from-file.js';
import type { ChunkWriter } from '../writer/chunk-writer.js';
import type { LoadOptions } from './load-options.js';

/**
 * `writer` with statements run first on each of its sessions (as its `prepare` is: once
 * per connection, again on a fresh one after a lost one): a sniffed file's DateStyle, a
 * dry run's temporary tables.
 */
export function withSessionSetup(writer: ChunkWriter, statements: readonly string[]): ChunkWriter {
  if (statements.length === 0) return writer;
  const setUp = Object.create(writer) as ChunkWriter & { prepare(client: pg.Client): Promise<void> };
  setUp.prepare = async (client) => {
    for (const sql of statements) await client.query(sql);
    await writer.prepare?.(client);
  };
  return setUp;
}

/** The session settings the inputs' sniffed dialects need: DateStyle for DD/MM/YYYY dates. */
export function sessionSettingsOf(inputs: readonly LoadTarget[]): string[] {
  const styles = [...new Set(inputs.flatMap((i) => (i.described?.datestyle === undefined ? [] : [i.described.datestyle])))];
  if (styles.length > 1) {
    throw new LoadError('bad-option', `the inputs' dates need different DateStyles (${styles.join('; ')}): one load has one`, { hint: 'load them in separate commands' });
  }
  return styles.map((s) => `SET DateStyle = '${s.replace(/'/g, "''")}'`);
}

/** What a dry run cannot do: it writes nothing, so it neither empties a table nor resumes or records a load. */
export function checkDryRunOptions(options: LoadOptions): void {
  if (!options.dryRun) return;
  const refused: [boolean, string][] = [
    [options.truncate, '--truncate'],
    [options.resume === true, '--resume'],
    [options.loadId !== undefined, '--load-id'],
    [options.part !== undefined, '--part'],
    [options.writer?.ownsTransactions === true, '--commit-every'],
    // An upsert's order table and a delete's key table live outside the chunks' transactions.
    [options.writer?.name === 'upsert', '--on-conflict update'],
    [options.writer?.name === 'delete', '--mode delete'],
  ];
  const flag = refused.find(([given]) => given)?.[1];
  if (flag !== undefined) {
    throw new LoadError('bad-option', `--dry-run writes nothing to the table and records nothing in the ledger: it cannot take ${flag}`, { hint: `drop ${flag} for the dry run` });
  }
}

/** A dry run: its inputs (a missing table's as a temporary table of the definition `--create` would give it) and the load's options. */
export interface DryRun {
  readonly inputs: LoadTarget[];
  readonly options: LoadOptions;
  /** The statements each worker session runs first: the temporary tables. */
  readonly setup: string[];
}

/**
 * Prepares a dry run on the control connection: no ledger (nothing recorded, nothing to
 * resume), each chunk's transaction rolled back, Citus rows through the coordinator. A
 * table that does not exist, with `--create`, is made as a temporary table of the same
 * definition, in this session and in each worker's (where `setup` runs): nothing is
 * created in the database, and every value meets the types a real load would.
 */
export async function prepareDryRun(control: pg.Client, inputs: readonly LoadTarget[], options: LoadOptions): Promise<DryRun> {
  const setup: string[] = [];
  const temporary = new Set<string>();
  const out: LoadTarget[] = [];
  for (const input of inputs) {
    const name = qualifiedName(input.table, input.schema);
    if (!temporary.has(name)) {
      const found = await control.query<{ found: boolean }>('SELECT to_regclass($1) IS NOT NULL AS found', [name]);
      const ddl = found.rows[0]?.found !== true && options.create ? temporaryDdl(input) : undefined;
      if (ddl === undefined) {
        out.push(input);
        continue;
      }
      await control.query(ddl);
      setup.push(ddl);
      temporary.add(name);
    }
    out.push({ ...input, schema: 'pg_temp' });
  }
  return { inputs: out, options: { ...options, create: false, ledger: false, citusRoute: 'coordinator' }, setup };
}

/** The CREATE TABLE `--create` would run, made temporary (`pg_temp.<table>`), when pgsurge has one. */
function temporaryDdl(input: LoadTarget): string | undefined {
  const ddl = input.described !== undefined && input.described.builtIn !== true ? createTableFromFile(input.table, 'pg_temp', input.described.description) : createTableSql(input.table, 'pg_temp');
  return ddl?.replace(/^CREATE TABLE /, 'CREATE TABLE IF NOT EXISTS ');
}
