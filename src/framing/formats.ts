import path from 'node:path';

/** The input formats pgsurge frames. */
export const FORMATS = ['tbl', 'text', 'csv'] as const;
export type Format = (typeof FORMATS)[number];

export function isFormat(value: string): value is Format {
  return (FORMATS as readonly string[]).includes(value);
}

/** Formats whose records end at every newline, so a file can be cut into byte ranges. */
export function isNewlineFramed(format: Format): boolean {
  return format !== 'csv';
}

const EXTENSIONS: Record<string, Format> = {
  '.tbl': 'tbl',
  '.txt': 'text',
  '.text': 'text',
  '.tsv': 'text',
  '.copy': 'text',
  '.csv': 'csv',
};

/**
 * The format named by a file's extension, looking through a numeric split suffix
 * (`lineitem.tbl.3`); undefined when the name says nothing.
 */
export function formatFromFileName(file: string): Format | undefined {
  let base = path.basename(file).toLowerCase();
  base = base.replace(/\.\d+$/, '');
  return EXTENSIONS[path.extname(base)];
}

/** `lineitem.tbl` → `lineitem`, `lineitem.tbl.3` → `lineitem`, `orders.csv` → `orders`. */
export function tableFromFileName(file: string): string | undefined {
  let base = path.basename(file);
  base = base.replace(/\.\d+$/, '');
  const ext = path.extname(base);
  if (ext === '' || !(ext.toLowerCase() in EXTENSIONS)) return undefined;
  const name = base.slice(0, -ext.length);
  return name === '' ? undefined : name;
}
