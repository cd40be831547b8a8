import type pg from 'pg';
import type { LoadTarget } from '../core/chunk.js';
import { inputFormat } from './format-registry.js';
import { readTableColumns, type TableColumnCache } from '../core/table-columns.js';

/**
 * The column plan of every input, read from the catalog once before the load (one query
 * per table, kept in `cache`), by its format: `--columns`, `--header match` (the file's first
 * line, read now) or the table's columns, checked against the table; JSON inputs also get
 * how each column takes a value, Parquet inputs which field fills each column.
 */
export async function planInputColumns(client: pg.Client, inputs: readonly LoadTarget[], cache: TableColumnCache = new Map()): Promise<LoadTarget[]> {
  const planned: LoadTarget[] = [];
  for (const input of inputs) planned.push(await inputFormat(input.format).plan(input, () => readTableColumns(client, input.table, input.schema, cache)));
  return planned;
}
