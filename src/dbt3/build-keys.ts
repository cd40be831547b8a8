import type pg from 'pg';
import { DBT3_FOREIGN_KEYS, DBT3_INDEXES, DBT3_PRIMARY_KEYS, DBT3_TABLES, type Dbt3Table } from '../datasets/dbt3-schema.js';
import { qualifiedName, quoteIdent } from '../core/identifiers.js';

export interface PhaseTiming {
  readonly phase: string;
  readonly seconds: number;
  readonly statements: number;
}

/** One key or index of the kit's schema, with the statement that builds it. */
export type Dbt3Build =
  | {
      readonly kind: 'primary key';
      readonly id: string;
      readonly table: Dbt3Table;
      readonly columns: readonly string[];
      /** The kit's statement: `ALTER TABLE … ADD PRIMARY KEY (…)`. */
      readonly statement: string;
      /**
       * The same key in two steps: its unique index, `<table>_pkey` as ADD PRIMARY KEY names
       * it (CREATE INDEX's SHARE lock lets it build beside the table's other indexes), then
       * the constraint on it (ACCESS EXCLUSIVE for a moment: the columns are NOT NULL already).
       */
      readonly index: { readonly name: string; readonly statement: string; readonly attach: string };
      /** A resumed load found the key's unique index in place (the run stopped between the two steps): only the constraint is left. */
      readonly indexBuilt?: boolean;
    }
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
      index: {
        name: primaryKeyIndexName(table),
        statement: `CREATE UNIQUE INDEX ${quoteIdent(primaryKeyIndexName(table))} ON ${t(table)} (${cols(DBT3_PRIMARY_KEYS[table])})`,
        attach: `ALTER TABLE ${t(table)} ADD PRIMARY KEY USING INDEX ${quoteIdent(primaryKeyIndexName(table))}`,
      },
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

/** The name ADD PRIMARY KEY gives a table's key (and its index). */
export function primaryKeyIndexName(table: string): string {
  return `${table}_pkey`;
}

/**
 * `ALTER TABLE … ALTER COLUMN … SET NOT NULL` for a table's primary key columns: run on the
 * empty table before its load (no scan then), so that the key's constraint, added on its
 * unique index after the load, needs no scan of the table under ACCESS EXCLUSIVE to prove
 * them NOT NULL. The columns end as the kit's ADD PRIMARY KEY leaves them: NOT NULL.
 */
export function primaryKeyNotNullStatement(table: Dbt3Table, schema?: string): string {
  return `ALTER TABLE ${qualifiedName(table, schema)} ${DBT3_PRIMARY_KEYS[table].map((c) => `ALTER COLUMN ${quoteIdent(c)} SET NOT NULL`).join(', ')}`;
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

