import type { WireColumn } from './catalog.js';
import type { SessionFacts, WireBuffer } from './field-encoder.js';

declare module '../core/chunk.js' {
  interface ChunkFormatFields {
    /**
     * A typed source's rows (Parquet), which the binary wire has write themselves as binary
     * COPY tuples; such a chunk makes its `data` (COPY text) only when something reads it.
     */
    readonly typed?: TypedRows;
  }
}

/**
 * The rows of a chunk from a typed source (Parquet), which writes them as binary COPY
 * tuples itself, straight from its typed values: no text is made for the binary wire
 * (the chunk's `data`, its COPY text, is made only when the text path asks for it).
 */
export interface TypedRows {
  /**
   * The writer of these rows as tuples of the table's COPY columns (`columns`, in order),
   * or why they must go as text (a column type without an exact binary form for its field).
   */
  binary(columns: readonly WireColumn[], session: SessionFacts): TypedTuples | string;
}

/** A value the typed writer cannot encode exactly (an INT64 past an int4): the chunk goes as text, where the server decides. */
export interface TypedRefusal {
  /** 0-based row of the chunk, and column of the COPY's list. */
  readonly row: number;
  readonly column: number;
  readonly why: string;
}

export interface TypedTuples {
  readonly rows: number;
  /**
   * Appends the tuples of rows `from`… until the last row or until `out.pos` reaches
   * `limit`; returns the row after the last one written, or the first value it cannot
   * encode (`out.pos` then means nothing).
   */
  write(from: number, out: WireBuffer, limit: number): number | TypedRefusal;
}
