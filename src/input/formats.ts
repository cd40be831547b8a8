import path from 'node:path';

declare module '../core/chunk.js' {
  interface TargetInputFields {
    readonly format: Format;
  }
}

/** The input formats pgsurge frames. */
export const FORMATS = ['tbl', 'text', 'csv', 'ndjson', 'json', 'parquet'] as const;
export type Format = (typeof FORMATS)[number];

/** The delimited ones: fields by position (`--columns` names them in order), records ending at a line end outside quotes. */
export const DELIMITED_FORMATS: readonly Format[] = ['tbl', 'text', 'csv'];

export function isFormat(value: string): value is Format {
  return (FORMATS as readonly string[]).includes(value);
}

const EXTENSIONS: Record<string, Format> = {
  '.tbl': 'tbl',
  '.txt': 'text',
  '.text': 'text',
  '.tsv': 'text',
  '.copy': 'text',
  '.csv': 'csv',
  '.ndjson': 'ndjson',
  '.jsonl': 'ndjson',
  '.json': 'json',
  '.parquet': 'parquet',
};

/** Compression named by a file's last suffix. */
export const COMPRESSIONS = ['gzip'] as const;
export type Compression = (typeof COMPRESSIONS)[number];

const COMPRESSION_SUFFIXES: Record<string, Compression> = { '.gz': 'gzip' };

export function compressionFromFileName(file: string): Compression | undefined {
  return COMPRESSION_SUFFIXES[path.extname(file).toLowerCase()];
}

/** The name without a compression suffix and a numeric split suffix: `lineitem.tbl.3.gz` → `lineitem.tbl`. */
function baseName(file: string): string {
  let base = path.basename(file);
  if (compressionFromFileName(base) !== undefined) base = base.slice(0, -path.extname(base).length);
  return base.replace(/\.\d+$/, '');
}

/**
 * The format named by a file's extension, looking through a compression suffix and a
 * numeric split suffix (`lineitem.tbl.3`, `lineitem.tbl.3.gz`); undefined when the name says nothing.
 */
export function formatFromFileName(file: string): Format | undefined {
  return EXTENSIONS[path.extname(baseName(file)).toLowerCase()];
}

/** `lineitem.tbl` → `lineitem`, `lineitem.tbl.3` → `lineitem`, `orders.csv.gz` → `orders`. */
export function tableFromFileName(file: string): string | undefined {
  const base = baseName(file);
  const ext = path.extname(base);
  if (ext === '' || !(ext.toLowerCase() in EXTENSIONS)) return undefined;
  const name = base.slice(0, -ext.length);
  return name === '' ? undefined : name;
}
