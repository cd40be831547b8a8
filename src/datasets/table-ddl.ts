import { quoteIdent, qualifiedName } from '../core/identifiers.js';
import { DBT3_COLUMNS, isDbt3Table } from './dbt3-schema.js';
import { NARROW_TABLE_COLUMNS } from './narrow-schema.js';

/** Column lists of every table `--create` knows, by table name. */
export const KNOWN_TABLE_COLUMNS: Record<string, readonly (readonly [string, string])[]> = {
  ...DBT3_COLUMNS,
  ...NARROW_TABLE_COLUMNS,
};

/** The columns (name, type) of a table pgsurge has DDL for, or undefined. */
export function knownColumns(table: string): readonly (readonly [string, string])[] | undefined {
  return KNOWN_TABLE_COLUMNS[table] ?? (isDbt3Table(table.toLowerCase()) ? DBT3_COLUMNS[table.toLowerCase() as keyof typeof DBT3_COLUMNS] : undefined);
}

/** The `CREATE TABLE` statement for a table pgsurge knows, or undefined. */
export function createTableSql(table: string, schema?: string): string | undefined {
  const columns = knownColumns(table);
  if (columns === undefined) return undefined;
  const body = columns.map(([name, type]) => `  ${quoteIdent(name)} ${type}`).join(',\n');
  return `CREATE TABLE ${qualifiedName(table, schema)} (\n${body}\n)`;
}
