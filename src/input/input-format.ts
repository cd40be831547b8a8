import type { Readable } from 'node:stream';
import type { LoadTarget } from '../core/chunk.js';
import type { TableColumn } from '../core/table-columns.js';
import type { ByteRange } from './byte-ranges.js';
import type { ChunkBuffers } from './chunk-buffers.js';
import type { ChunkSource } from './chunk-queue.js';
import type { Format } from './formats.js';
import type { Framer } from './framer.js';
import type { TextFramerOptions } from './line-framer.js';

/**
 * One input format (or a family of them sharing a reader): everything that is particular
 * to it, behind one small interface. Each lives in a folder of its own (`input/text/`,
 * `input/json/`, `input/parquet/`) and is found by format name in `format-registry.ts`;
 * the generic code (planning, opening, framing) asks the registry and never names a
 * format's files. Adding a format is adding a folder and a line in the registry.
 */
export interface InputFormat {
  /** The format names it reads. */
  readonly names: readonly Format[];
  /** Records end at a line ending, so a plain uncompressed file can be cut into byte ranges at line ends. */
  lineFramed(format: Format): boolean;
  /**
   * The input's column plan, before the load: which table columns its records fill and,
   * where the format needs it, how each takes a value. `table` reads the table's columns
   * from the catalog (once per table); a format that needs nothing from it does not call it.
   */
  plan(target: LoadTarget, table: () => Promise<readonly TableColumn[]>): Promise<LoadTarget>;
  /** The input's chunk sources: byte ranges read in parallel, or one reader from its start. */
  open(target: LoadTarget, options: OpenOptions): Promise<OpenedInput>;
  /** The framer of the input's bytes (`endsInput: false`: the bytes framed stop before the end of the input). */
  framer(target: LoadTarget, options: { endsInput?: boolean }): Framer;
  /** The framer of a plain input with COPY's default options (for locating an error in a chunk). */
  plainFramer(format: Format, options: TextFramerOptions): Framer;
  /** The framer that cuts a chunk's source bytes (`chunk.source`) into records again. */
  sourceFramer(target: LoadTarget): Framer;
  /** The framer of a chunk's wire bytes (`chunk.data`). */
  wireFramer(target: LoadTarget): Framer;
  /** The columns the file itself declares (a Parquet schema) or shows (a header line, JSON keys), read from its start. */
  describe(target: LoadTarget): Promise<DescribedColumn[]>;
}

/** A column a file declares or shows: its name, and its PostgreSQL type and nullability when the file declares them. */
export interface DescribedColumn {
  readonly name: string;
  /** `bigint`, `numeric(15,2)`, `text[]`…; undefined when the file does not say (a header, JSON keys). */
  readonly type?: string;
  /** True when the file says a value is never null (a Parquet REQUIRED field). */
  readonly notNull?: boolean;
}

export interface OpenedInput {
  /** Exclusive chunk sources: byte ranges of a file read in parallel, or one sequential reader. */
  readonly sources: ChunkSource[];
  /** Input size in bytes, when known (not for stdin or pipes). */
  readonly size: number | undefined;
}

/** How a load decodes Parquet (for measuring: the CLI sets these from PGSURGE_PARQUET_*; `ParquetOpenOptions`). */
export interface ParquetSettings {
  /** Decode in a thread per reader (true) or on the load's loop (false); default `decodeThreadsByDefault`'s rule. */
  readonly decodeThreads?: boolean;
  /** false: without the WebAssembly kernels; default with them, where WebAssembly runs. */
  readonly wasm?: boolean;
}

export interface OpenOptions {
  readonly workers: number;
  readonly chunkBytes: number;
  /** Stdin, for `-`. */
  readonly stdin?: Readable;
  /** Byte ranges an earlier run of the load committed (sorted, merged, at record boundaries): not loaded again. */
  readonly covered?: readonly ByteRange[];
  /** The load's chunk buffers, shared by all its readers. */
  readonly buffers?: ChunkBuffers;
  /** `--part K/N`: only this record-aligned range of the file is this process's (`readsInRanges` inputs only). */
  readonly share?: ByteRange;
  /** How Parquet inputs are decoded. */
  readonly parquet?: ParquetSettings | undefined;
}
