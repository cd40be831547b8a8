/**
 * What `dbt3 gen` can write, apart from the writers themselves (which load only when a
 * run needs them): the formats, the Parquet compressions, the default row group.
 */

export const DBT3_GEN_FORMATS = ['tbl', 'parquet'] as const;
export type Dbt3GenFormat = (typeof DBT3_GEN_FORMATS)[number];

/** hyparquet-writer compresses snappy itself and gzip through node:zlib; zstd would need a compressor Node 20 lacks. */
export const PARQUET_COMPRESSIONS = ['snappy', 'gzip', 'none'] as const;
export type ParquetCompression = (typeof PARQUET_COMPRESSIONS)[number];

/**
 * DuckDB's default row group (122,880 rows): big enough that a reader's per-group costs
 * vanish, small enough that a reader (and this writer) holds one group in tens of MB, and
 * SF 1 lineitem gets 49 of them for workers to share.
 */
export const DEFAULT_ROW_GROUP_ROWS = 122_880;
