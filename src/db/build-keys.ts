import pLimit from 'p-limit';
import type pg from 'pg';
import { DBT3_FOREIGN_KEYS, DBT3_INDEXES, DBT3_PRIMARY_KEYS, DBT3_TABLES } from '../datasets/dbt3-schema.js';
import { qualifiedName, quoteIdent } from './identifiers.js';

export interface PhaseTiming {
  readonly phase: string;
  readonly seconds: number;
  readonly statements: number;
}

const cols = (c: readonly string[]): string => c.map(quoteIdent).join(', ');

/** The statements the DBT-3 kit runs after its load, in dependency order: primary keys, then foreign keys and indexes. */
export function dbt3KeyStatements(schema?: string): { primaryKeys: string[]; foreignKeysAndIndexes: string[] } {
  const t = (name: string): string => qualifiedName(name, schema);
  const primaryKeys = DBT3_TABLES.map((table) => `ALTER TABLE ${t(table)} ADD PRIMARY KEY (${cols(DBT3_PRIMARY_KEYS[table])})`);
  const foreignKeys = DBT3_FOREIGN_KEYS.map(
    ([table, c, ref, refCols]) => `ALTER TABLE ${t(table)} ADD FOREIGN KEY (${cols(c)}) REFERENCES ${t(ref)} (${cols(refCols)})`,
  );
  const indexes = DBT3_INDEXES.map(([name, table, c]) => `CREATE INDEX ${quoteIdent(name)} ON ${t(table)} (${cols(c)})`);
  return { primaryKeys, foreignKeysAndIndexes: [...indexes, ...foreignKeys] };
}

/** Runs statements on up to `clients.length` connections at once; times the phase. */
export async function runInParallel(clients: readonly pg.Client[], phase: string, statements: readonly string[]): Promise<PhaseTiming> {
  const started = performance.now();
  const free = [...clients];
  const limit = pLimit(clients.length);
  await Promise.all(
    statements.map((sql) =>
      limit(async () => {
        const client = free.pop()!;
        try {
          await client.query(sql);
        } finally {
          free.push(client);
        }
      }),
    ),
  );
  return { phase, seconds: (performance.now() - started) / 1000, statements: statements.length };
}
