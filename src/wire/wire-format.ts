import type { LoadTarget } from '../core/chunk.js';
import { quoteLiteral } from '../core/literals.js';

/**
 * What a chunk's bytes are: COPY text or CSV, with COPY's options. Every input is framed
 * into one of these — tbl into text with `|`, NDJSON, JSON arrays and Parquet into plain text
 * (tab, `\N`), other encodings into UTF-8 — so a writer (COPY, or INSERT decoding the
 * records) needs only this to read any chunk.
 */
export interface WireFormat {
  readonly format: 'text' | 'csv';
  /** COPY's DELIMITER; tab for text, comma for CSV when absent. */
  readonly delimiter?: string;
  /** COPY's NULL; `\N` for text, the empty unquoted string for CSV when absent. */
  readonly null?: string;
  readonly quote?: string;
  readonly escape?: string;
}

export function wireFormat(target: LoadTarget): WireFormat {
  const input = target.input ?? {};
  switch (target.format) {
    case 'tbl':
      return { format: 'text', delimiter: '|', ...(input.null !== undefined ? { null: input.null } : {}) };
    case 'text':
      return { format: 'text', ...pick(input, ['delimiter', 'null']) };
    case 'csv':
      return { format: 'csv', ...pick(input, ['delimiter', 'null', 'quote', 'escape']) };
    case 'ndjson':
    case 'json':
    case 'parquet':
      return { format: 'text' };
  }
}

function pick<K extends keyof WireFormat>(input: Partial<Record<K, string>>, keys: readonly K[]): Partial<Record<K, string>> {
  const out: Partial<Record<K, string>> = {};
  for (const k of keys) if (input[k] !== undefined) out[k] = input[k];
  return out;
}

/** `FORMAT text, DELIMITER '|'`: option values are literals quoted for any standard_conforming_strings. */
export function copyOptions(wire: WireFormat): string {
  const parts = [`FORMAT ${wire.format}`];
  if (wire.delimiter !== undefined) parts.push(`DELIMITER ${quoteLiteral(wire.delimiter)}`);
  if (wire.null !== undefined) parts.push(`NULL ${quoteLiteral(wire.null)}`);
  if (wire.quote !== undefined) parts.push(`QUOTE ${quoteLiteral(wire.quote)}`);
  if (wire.escape !== undefined) parts.push(`ESCAPE ${quoteLiteral(wire.escape)}`);
  return parts.join(', ');
}
