import type { InputFormat } from '../input-format.js';
import { LineFramer } from '../line-framer.js';

/** A Parquet chunk's COPY text is one line a row, and its source one JSON line a row (what its reject file shows). */
const copyLines = (): LineFramer => new LineFramer({ lineEnd: 'nl' });

/**
 * Parquet: a typed, columnar file read by row group (`parquet-source.ts`), its fields
 * matched to the table's columns by name (`parquet-columns.ts`). Its chunks are made by the
 * Parquet reader, never framed from bytes. The reader and its decompressors are ~40% of
 * the bundle, so they are imported when a Parquet input is planned, opened or described,
 * not at the top (scripts/bundle.js splits them into a chunk of their own), and every other
 * command starts without them.
 */
export const parquetFormat: InputFormat = {
  names: ['parquet'],
  lineFramed: () => false,
  /** The file's footer read now, its fields matched to the table's columns by name. */
  async plan(target, table) {
    const columns = await table();
    const [{ openParquet }, { parquetFields, planParquetColumns }] = await Promise.all([import('./parquet-file.js'), import('./parquet-columns.js')]);
    const file = await openParquet(target.file);
    try {
      const parquetColumns = planParquetColumns(target, columns, parquetFields(file.metadata, target.file), target.input?.columns);
      return { ...target, columns: parquetColumns.map((c) => c.column), parquetColumns };
    } finally {
      await file.close();
    }
  },
  /** Read by row group, its own reader; the ledger's ranges count rows. */
  async open(target, options) {
    const { openParquetInput } = await import('./parquet-source.js');
    return openParquetInput(target, { workers: options.workers, chunkBytes: options.chunkBytes, covered: options.covered ?? [], ...options.parquet });
  },
  framer: copyLines,
  plainFramer: copyLines,
  sourceFramer: copyLines,
  wireFramer: copyLines,
  /** The footer's schema as PostgreSQL types. */
  async describe(target) {
    const [{ openParquet }, { describeParquet }] = await Promise.all([import('./parquet-file.js'), import('./parquet-describe.js')]);
    const file = await openParquet(target.file);
    try {
      return { columns: describeParquet(file.metadata), sampled: 0, whole: true };
    } finally {
      await file.close();
    }
  },
};
