import { DBT3_COLUMNS, type Dbt3Table } from '../../src/datasets/dbt3-schema.js';

/*
 * DuckDB, the independent Parquet writer of the tests (a dev dependency only): Parquet
 * files written from the same generated .tbl data, with the compressions and row-group
 * sizes a test asks for, so pgsurge's reader is checked against someone else's writer.
 */

type DuckConnection = { run(sql: string): Promise<unknown>; runAndReadAll(sql: string): Promise<{ getRows(): unknown[][] }> };
let connection: Promise<DuckConnection> | undefined;

async function duck(): Promise<DuckConnection> {
  connection ??= (async () => {
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const db = await DuckDBInstance.create(':memory:', { threads: '1' });
    return (await db.connect()) as unknown as DuckConnection;
  })();
  return connection;
}

export async function duckRun(sql: string): Promise<void> {
  await (await duck()).run(sql);
}

export async function duckRows(sql: string): Promise<unknown[][]> {
  return (await (await duck()).runAndReadAll(sql)).getRows();
}

export const sqlString = (s: string): string => `'${s.replace(/'/g, "''")}'`;

/** DuckDB's type for a DBT-3 column's PostgreSQL type. */
function duckType(pgType: string): string {
  if (pgType.startsWith('char') || pgType.startsWith('varchar')) return 'VARCHAR';
  if (pgType.startsWith('numeric')) return pgType.replace('numeric', 'DECIMAL');
  return pgType.toUpperCase();
}

export interface ParquetWrite {
  readonly compression: 'snappy' | 'zstd' | 'gzip' | 'uncompressed' | 'brotli' | 'lz4_raw';
  readonly rowGroupSize: number;
  /** More COPY options: `PARQUET_VERSION V2` (delta encodings), `DICTIONARY_SIZE_LIMIT 1` (plain pages only). */
  readonly options?: string;
}

/** Writes a DBT-3 `.tbl` file as Parquet, typed as the kit's schema (DECIMAL(15,2), DATE, …). */
export async function tblToParquet(table: Dbt3Table, tbl: string, out: string, write: ParquetWrite): Promise<void> {
  const cols = DBT3_COLUMNS[table];
  // A .tbl line ends in `|`: one more, empty, field, left out.
  const columns = [...cols.map(([name, type]) => `${sqlString(name)}: ${sqlString(duckType(type))}`), "'trailing_bar': 'VARCHAR'"].join(', ');
  await duckRun(
    `COPY (SELECT ${cols.map(([n]) => n).join(', ')} FROM read_csv(${sqlString(tbl)}, delim='|', header=false, quote='', escape='', columns={${columns}}))
     TO ${sqlString(out)} (FORMAT parquet, COMPRESSION ${write.compression}, ROW_GROUP_SIZE ${write.rowGroupSize}${write.options === undefined ? '' : `, ${write.options}`})`,
  );
}

/** Row groups and rows of a Parquet file, as DuckDB reads its footer. */
export async function parquetLayout(file: string): Promise<{ rowGroups: number; rows: number }> {
  const r = await duckRows(`SELECT count(DISTINCT row_group_id)::INT, (SELECT count(*)::INT FROM read_parquet(${sqlString(file)})) FROM parquet_metadata(${sqlString(file)})`);
  return { rowGroups: Number(r[0]![0]), rows: Number(r[0]![1]) };
}
