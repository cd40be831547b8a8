import pLimit from 'p-limit';
import type pg from 'pg';
import { DBT3_FOREIGN_KEYS, DBT3_INDEXES, DBT3_PRIMARY_KEYS, DBT3_TABLES, type Dbt3Table } from '../datasets/dbt3-schema.js';
import { qualifiedName, quoteIdent } from './identifiers.js';

export interface PhaseTiming {
  readonly phase: string;
  readonly seconds: number;
  readonly statements: number;
}

/** One key or index of the kit's schema, with the statement that builds it. */
export type Dbt3Build =
  | { readonly kind: 'primary key'; readonly id: string; readonly table: Dbt3Table; readonly columns: readonly string[]; readonly statement: string }
  | { readonly kind: 'index'; readonly id: string; readonly name: string; readonly table: Dbt3Table; readonly columns: readonly string[]; readonly statement: string }
  | {
      readonly kind: 'foreign key';
      readonly id: string;
      readonly table: Dbt3Table;
      readonly columns: readonly string[];
      readonly references: Dbt3Table;
      readonly referencedColumns: readonly string[];
      readonly statement: string;
    };

const cols = (c: readonly string[]): string => c.map(quoteIdent).join(', ');

/** The kit's 8 primary keys, 15 indexes and 8 foreign keys, each with the statement that builds it. */
export function dbt3Builds(schema?: string): Dbt3Build[] {
  const t = (name: string): string => qualifiedName(name, schema);
  return [
    ...DBT3_TABLES.map((table): Dbt3Build => ({
      kind: 'primary key',
      id: `primary key ${table}`,
      table,
      columns: DBT3_PRIMARY_KEYS[table],
      statement: `ALTER TABLE ${t(table)} ADD PRIMARY KEY (${cols(DBT3_PRIMARY_KEYS[table])})`,
    })),
    ...DBT3_INDEXES.map(([name, table, c]): Dbt3Build => ({ kind: 'index', id: `index ${name}`, name, table, columns: c, statement: `CREATE INDEX ${quoteIdent(name)} ON ${t(table)} (${cols(c)})` })),
    ...DBT3_FOREIGN_KEYS.map(([table, c, ref, refCols]): Dbt3Build => ({
      kind: 'foreign key',
      id: `foreign key ${table} (${c.join(', ')}) → ${ref}`,
      table,
      columns: c,
      references: ref,
      referencedColumns: refCols,
      statement: `ALTER TABLE ${t(table)} ADD FOREIGN KEY (${cols(c)}) REFERENCES ${t(ref)} (${cols(refCols)})`,
    })),
  ];
}

/** The statements the DBT-3 kit runs after its load, by phase: primary keys, then indexes, then foreign keys. */
export function dbt3KeyStatements(schema?: string): { primaryKeys: string[]; indexes: string[]; foreignKeys: string[]; foreignKeysAndIndexes: string[] } {
  const builds = dbt3Builds(schema);
  const of = (kind: Dbt3Build['kind']): string[] => builds.filter((b) => b.kind === kind).map((b) => b.statement);
  const indexes = of('index');
  const foreignKeys = of('foreign key');
  return { primaryKeys: of('primary key'), indexes, foreignKeys, foreignKeysAndIndexes: [...indexes, ...foreignKeys] };
}

/** `ANALYZE` of each table, as the kit ends its load. */
export function analyzeStatement(table: string, schema?: string): string {
  return `ANALYZE ${qualifiedName(table, schema)}`;
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
