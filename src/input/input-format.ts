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
  /**
   * The columns the file itself declares (a Parquet schema) or shows (a header line, JSON
   * keys, the values of a sample of its records), and for delimited text the dialect sniffed.
   */
  describe(target: LoadTarget, options?: DescribeOptions): Promise<FileDescription>;
}

/** Records `describe` samples when not told how many. */
export const DEFAULT_SAMPLE = 30_000;

/** How much of a file `describe` looks at. */
export interface DescribeOptions {
  /** Records to sample (taken from the file's start, middle and end); `all` reads the whole file. */
  readonly sample?: number | 'all';
}

/** What a file declares or shows of its columns, and how much of it was read to say so. */
export interface FileDescription {
  readonly columns: DescribedColumn[];
  /** Delimited text (CSV, PostgreSQL text, `.tbl`): how the file is written, as sniffed (absent for JSON and Parquet). */
  readonly dialect?: SniffedDialect;
  /** Records looked at (0 when the file declares its columns, as Parquet does). */
  readonly sampled: number;
  /** True when the whole file was read (or its schema declares every column exactly): no later value can contradict a type. */
  readonly whole: boolean;
}

/** How a delimited text file is written, as sniffed from its bytes: COPY's options to read it. */
export interface SniffedDialect {
  readonly format: 'csv' | 'text' | 'tbl';
  /** COPY's DELIMITER (`|` for `.tbl`). */
  readonly delimiter: string;
  /** CSV's QUOTE and ESCAPE (absent for text and `.tbl`). */
  readonly quote?: string;
  readonly escape?: string;
  /** The first record names the columns. */
  readonly header: boolean;
  readonly lineEnding: 'LF' | 'CRLF' | 'CR';
  /** PostgreSQL's name of the file's encoding: UTF8, WIN1252, LATIN1. */
  readonly encoding: string;
  /** The file starts with a UTF-8 byte-order mark. */
  readonly bom: boolean;
  /** COPY's NULL string: the one marker read as NULL. */
  readonly null: string;
  /**
   * The NULL-like markers seen in the sample (empty, `NA`, `NULL`, `\N`…), `null` first.
   * COPY reads only `null` as NULL: a column that holds another of them is typed to hold it as a value.
   */
  readonly nullMarkers: string[];
  /** The DateStyle the session needs to read the sniffed dates and timestamps (`ISO, DMY` for DD/MM/YYYY); absent when any will do. */
  readonly datestyle?: string;
}

/** A column a file declares or shows: its name, and its PostgreSQL type and nullability when the file declares them. */
export interface DescribedColumn {
  /** The column's name: for a name the file shows (a header, a JSON key), made an identifier a DBA would type (`Order Date` → `order_date`). */
  readonly name: string;
  /** The name as the file shows it (a header's field, a JSON key), when `name` differs from it: what JSON values are found by. */
  readonly key?: string;
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
