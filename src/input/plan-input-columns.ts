import type pg from 'pg';
import type { LoadTarget } from '../core/chunk.js';
import { readHeaderNames } from './header.js';
import { planColumns } from './column-plan.js';
import { readTableColumns, type TableColumn, type TableColumnCache } from '../core/table-columns.js';

/** A Parquet input's plan: its footer read now, its fields matched to the table's columns by name. */
async function planParquetInput(input: LoadTarget, table: readonly TableColumn[]): Promise<LoadTarget> {
  // Imported when a Parquet input is planned: other loads do not load the Parquet reader (see source/open-input.ts).
  const [{ openParquet }, { parquetFields, planParquetColumns }] = await Promise.all([import('./parquet/parquet-file.js'), import('./parquet/parquet-columns.js')]);
  const file = await openParquet(input.file);
  try {
    const parquetColumns = planParquetColumns(input, table, parquetFields(file.metadata, input.file), input.input?.columns);
    return { ...input, columns: parquetColumns.map((c) => c.column), parquetColumns };
  } finally {
    await file.close();
  }
}

/**
 * The column plan of every input, read from the catalog once before the load (one query
 * per table, kept in `cache`): `--columns`, `--header match` (the file's first line, read now) or the
 * table's columns, checked against the table; JSON inputs also get how each column takes a value.
 */
export async function planInputColumns(client: pg.Client, inputs: readonly LoadTarget[], cache: TableColumnCache = new Map()): Promise<LoadTarget[]> {
  const planned: LoadTarget[] = [];
  for (const input of inputs) {
    const options = input.input ?? {};
    const needsCatalog = options.columns !== undefined || options.header === 'match' || input.format === 'ndjson' || input.format === 'json' || input.format === 'parquet';
    if (!needsCatalog) {
      planned.push(input);
      continue;
    }
    const columns = await readTableColumns(client, input.table, input.schema, cache);
    if (input.format === 'parquet') {
      planned.push(await planParquetInput(input, columns));
    } else if (options.header === 'match') {
      planned.push(planColumns(input, columns, await readHeaderNames(input), `the header of ${input.file}`));
    } else {
      planned.push(planColumns(input, columns, options.columns, '--columns'));
    }
  }
  return planned;
}
