import type pg from 'pg';
import type { Dbt3Build } from './build-keys.js';
import { qualifiedName, quoteIdent } from '../core/identifiers.js';
import { LoadError } from '../core/load-error.js';

/** A key or index as the catalog holds it. */
export interface CatalogBuild {
  readonly kind: 'primary key' | 'foreign key' | 'index';
  readonly table: string;
  readonly columns: readonly string[];
  /** An index's name (keys are found by table and columns: the kit does not name them). */
  readonly name?: string;
  readonly references?: string;
  readonly referencedColumns?: readonly string[];
  /** pg_index.indisvalid for indexes and primary keys; pg_constraint.convalidated for foreign keys. */
  readonly valid: boolean;
}

/**
 * Every primary key, foreign key and index on the given tables (primary keys' own
 * indexes are not listed twice), read from pg_constraint and pg_index.
 */
export async function catalogBuilds(client: pg.Client, tables: readonly string[], schema?: string): Promise<CatalogBuild[]> {
  const names = tables.map((t) => qualifiedName(t, schema));
  const r = await client.query<{ kind: CatalogBuild['kind']; tbl: string; cols: string[]; name: string | null; ref: string | null; refcols: string[] | null; valid: boolean }>(
    `WITH t AS (SELECT to_regclass(n)::oid AS oid FROM unnest($1::text[]) AS n WHERE to_regclass(n) IS NOT NULL)
     SELECT CASE c.contype WHEN 'p' THEN 'primary key' ELSE 'foreign key' END AS kind,
            rel.relname AS tbl,
            array(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k(n, o) JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.o) AS cols,
            NULL AS name,
            ref.relname AS ref,
            CASE WHEN c.contype = 'f' THEN array(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY k(n, o) JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.o) END AS refcols,
            CASE WHEN c.contype = 'p' THEN coalesce((SELECT i.indisvalid FROM pg_index i WHERE i.indexrelid = c.conindid), false) ELSE c.convalidated END AS valid
       FROM pg_constraint c JOIN t ON c.conrelid = t.oid JOIN pg_class rel ON rel.oid = c.conrelid LEFT JOIN pg_class ref ON ref.oid = c.confrelid
      WHERE c.contype IN ('p', 'f')
     UNION ALL
     SELECT 'index', rel.relname,
            array(SELECT a.attname::text FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(n, o) JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n ORDER BY k.o),
            idx.relname, NULL, NULL, i.indisvalid
       FROM pg_index i JOIN t ON i.indrelid = t.oid JOIN pg_class rel ON rel.oid = i.indrelid JOIN pg_class idx ON idx.oid = i.indexrelid
      WHERE NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.contype = 'p')
      ORDER BY 1, 2, 4`,
    [names],
  );
  return r.rows.map((row) => ({
    kind: row.kind,
    table: row.tbl,
    columns: row.cols,
    ...(row.name !== null ? { name: row.name } : {}),
    ...(row.ref !== null ? { references: row.ref, referencedColumns: row.refcols ?? [] } : {}),
    valid: row.valid,
  }));
}

const same = (a: readonly string[], b: readonly string[] | undefined): boolean => b !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);

/** The catalog's entry for one of the kit's builds, if there is one. */
export function findInCatalog(build: Dbt3Build, catalog: readonly CatalogBuild[]): CatalogBuild | undefined {
  if (build.kind === 'index') return catalog.find((c) => c.kind === 'index' && c.name === build.name);
  if (build.kind === 'primary key') return catalog.find((c) => c.kind === 'primary key' && c.table === build.table);
  return catalog.find((c) => c.kind === 'foreign key' && c.table === build.table && same(build.columns, c.columns) && c.references === build.references && same(build.referencedColumns, c.referencedColumns));
}

export interface BuildsToDo {
  /** Builds the catalog already holds, valid and on the right columns. */
  readonly present: readonly Dbt3Build[];
  /** Builds still to run. */
  readonly missing: readonly Dbt3Build[];
  /** Statements to run first: an invalid index (a build that crashed half way) is dropped and built again. */
  readonly drops: readonly string[];
}

function dropIndexStatement(name: string, schema: string | undefined): string {
  return `DROP INDEX ${schema === undefined ? quoteIdent(name) : `${quoteIdent(schema)}.${quoteIdent(name)}`}`;
}

/**
 * What a (resumed) load still has to build. A key or index the catalog holds on other
 * columns than the kit's is not the kit's schema: stop rather than guess.
 */
export function buildsToDo(builds: readonly Dbt3Build[], catalog: readonly CatalogBuild[], schema?: string): BuildsToDo {
  const present: Dbt3Build[] = [];
  const missing: Dbt3Build[] = [];
  const drops: string[] = [];
  for (const b of builds) {
    const found = findInCatalog(b, catalog);
    if (found === undefined) {
      // A load stopped between a primary key's two steps left its unique index: only the constraint on it is left to add.
      const index = b.kind === 'primary key' ? catalog.find((c) => c.kind === 'index' && c.name === b.index.name) : undefined;
      if (b.kind === 'primary key' && index !== undefined) {
        if (index.table !== b.table || !same(b.columns, index.columns)) {
          throw new LoadError('bad-option', `index ${b.index.name} exists on ${index.table} (${index.columns.join(', ')}), not on ${b.table} (${b.columns.join(', ')}) as the DBT-3 kit's primary key`, {
            hint: 'drop it, or load with --replace to recreate the tables',
          });
        }
        if (index.valid) {
          missing.push({ ...b, indexBuilt: true });
          continue;
        }
        drops.push(dropIndexStatement(b.index.name, schema));
      }
      missing.push(b);
      continue;
    }
    if (b.kind !== 'foreign key' && (found.table !== b.table || !same(b.columns, found.columns))) {
      throw new LoadError('bad-option', `${b.kind === 'index' ? `index ${b.name}` : `the primary key of ${b.table}`} exists on ${found.table} (${found.columns.join(', ')}), not on ${b.table} (${b.columns.join(', ')}) as the DBT-3 kit builds it`, {
        hint: 'drop it, or load with --replace to recreate the tables',
      });
    }
    if (!found.valid) {
      if (b.kind !== 'index') {
        throw new LoadError('bad-option', `${b.kind === 'foreign key' ? `the foreign key ${b.id.slice('foreign key '.length)}` : `the primary key of ${b.table}`} exists but is not valid`, {
          hint: 'drop it (or validate it) and resume, or load with --replace',
        });
      }
      // A CREATE INDEX CONCURRENTLY that failed leaves its index behind, marked invalid: build it again.
      drops.push(dropIndexStatement(b.name, schema));
      missing.push(b);
      continue;
    }
    present.push(b);
  }
  return { present, missing, drops };
}
