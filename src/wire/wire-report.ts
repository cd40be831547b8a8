/** Which wire a table's chunks went through, and why when text; part of the load's summary. */

export const WIRES = ['text', 'binary', 'auto'] as const;
/** `--wire`: text COPY, binary COPY encoded by pgsurge, or binary where it is exact and measured faster (the default). */
export type WireChoice = (typeof WIRES)[number];

export function isWireChoice(value: string): value is WireChoice {
  return (WIRES as readonly string[]).includes(value);
}

export interface TableWire {
  /** The table as the load names it (`LoadTarget.table`). */
  readonly table: string;
  /** The wire the table's chunks were planned for. */
  readonly wire: 'binary' | 'text';
  /** Why the table went as text (a column without an encoder, `--wire text`, the auto rule, …). */
  readonly why?: string;
  /** Chunks committed through binary COPY. */
  readonly binaryChunks: number;
  /** Chunks of a binary table sent as text because a record or value could not be encoded exactly. */
  readonly fallbackChunks: number;
  /** What sent the first of them to text: record, column, value. */
  readonly firstFallback?: string;
  /** Binary chunks the server refused (a bad row): rolled back and loaded again through text, which isolates the bad rows. */
  readonly redoneChunks: number;
}

/** One line per table: `lineitem: binary (12 chunks; 1 fell back to text: record 3, l_shipdate "infinity")`. */
export function formatTableWire(w: TableWire): string {
  if (w.wire === 'text') return `${w.table}: text wire (${w.why ?? 'as asked'})`;
  const parts = [`${w.binaryChunks} chunk${w.binaryChunks === 1 ? '' : 's'} binary`];
  if (w.fallbackChunks > 0) parts.push(`${w.fallbackChunks} fell back to text, the first for ${w.firstFallback}`);
  if (w.redoneChunks > 0) parts.push(`${w.redoneChunks} refused by the server and redone as text`);
  return `${w.table}: binary wire (${parts.join('; ')})`;
}

/** The summary's and the report's lines about the wire: `wire: lineitem: binary wire (…)`, one per table. */
export function wireLines(wire: readonly TableWire[] | undefined): string[] {
  return (wire ?? []).map((w) => `wire: ${formatTableWire(w)}`);
}
