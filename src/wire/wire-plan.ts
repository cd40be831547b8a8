import type { WireColumn } from '../codecs/catalog.js';
import type { EncoderLookup, FieldEncoder, SessionFacts } from '../codecs/field-encoder.js';
import type { SplitFormat } from './record-splitter.js';
import { autoPicksBinary, type AutoContext } from './auto-rule.js';
import type { WireChoice } from './wire-report.js';

/** What one table's chunks go through: binary with an encoder per column, or text and why. */
export type WirePlan = { readonly binary: true; readonly columns: readonly WireColumn[]; readonly encoders: readonly FieldEncoder[]; readonly format: SplitFormat } | { readonly binary: false; readonly why: string };

/**
 * Binary only where every step is exact: a server that takes the framed UTF-8 as it is,
 * a framing the splitter can cut, an encoder for every column; and for `auto`, a shape
 * of table that binary measured faster on (`autoPicksBinary`).
 */
export function planWire(choice: WireChoice, columns: readonly WireColumn[], session: SessionFacts, format: SplitFormat | string, lookup: EncoderLookup, context: AutoContext = { serverIsLocal: true }): WirePlan {
  if (choice === 'text') return { binary: false, why: '--wire text' };
  if (session.serverEncoding !== 'UTF8') return { binary: false, why: `server_encoding is ${session.serverEncoding}, not UTF8` };
  if (typeof format === 'string') return { binary: false, why: `the input's framing: ${format}` };
  if (columns.length === 0) return { binary: false, why: 'no columns to fill' };
  const encoders: FieldEncoder[] = [];
  for (const c of columns) {
    const e = lookup(c, session);
    if (e === undefined) return { binary: false, why: `column ${c.name} is ${c.declared}: no binary encoder` };
    encoders.push(e);
  }
  if (choice === 'auto') {
    const verdict = autoPicksBinary(columns, context);
    if (!verdict.binary) return { binary: false, why: `auto: ${verdict.why}` };
  }
  return { binary: true, columns, encoders, format };
}
