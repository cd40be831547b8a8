/**
 * A chunk is the unit of work: whole records, already in the bytes COPY expects,
 * with the place in the input they came from. One chunk is one transaction.
 */

/** Where a chunk's records came from; a rejected row, an error and a resume point all name this. */
export interface ChunkLocation {
  /** The input's path, or `-` for stdin. */
  readonly file: string;
  /** Offset of the chunk's first source byte in the (decompressed) input. */
  readonly byteOffset: number;
  /** Source bytes the chunk covers (before any transformation such as stripping a `.tbl` trailing `|`). */
  readonly byteLength: number;
  /**
   * 1-based line number of the chunk's first record, or `undefined` where it is not known
   * while loading (a byte range in the middle of a file: counted from the start on demand).
   */
  readonly firstLine: number | undefined;
  /** 1-based index of the chunk's first record in the input, where lines do not number records (JSON arrays). */
  readonly firstRecord?: number;
  /**
   * Parquet: the row group the chunk's rows are in (0-based). A Parquet chunk's location
   * counts rows, not bytes: `byteOffset` is its first row's index in the file (0-based),
   * `byteLength` its rows, `firstLine` its first row's number (1-based); the ledger
   * records and resumes by those, exactly as by byte ranges.
   */
  readonly rowGroup?: number;
  /** Bytes of the input file the chunk stands for, where `byteLength` counts something else (Parquet rows): what progress and MB/s count. */
  readonly sourceBytes?: number;
}

/** Bytes of the input a chunk stands for (progress, MB/s). */
export function inputBytesOf(location: ChunkLocation): number {
  return location.sourceBytes ?? location.byteLength;
}

/**
 * The fields a format adds to its chunks, declared by the format's own module (TypeScript's
 * module augmentation: `declare module '…/core/chunk.js' { interface ChunkFormatFields … }`),
 * so that core names no format and no wire: Parquet's typed rows (codecs/typed-rows.ts).
 */
export interface ChunkFormatFields {}

export interface Chunk extends ChunkFormatFields {
  readonly location: ChunkLocation;
  /** Whole records in the writer's wire format (COPY text or CSV), each ending in `\n`. */
  readonly data: Buffer;
  /**
   * The chunk's bytes as read from the input (`location.byteLength` of them): a rejected
   * row is written from these, verbatim, and a chunk is split around a bad row by
   * re-framing parts of them. The same memory as `data` where the framer changes nothing;
   * absent where they can be read again from the file instead (`readSource`).
   */
  readonly source?: Buffer;
  /** Reads the source bytes again, for a chunk that does not keep them (only a refused chunk needs them). */
  readonly readSource?: () => Promise<Buffer>;
  /**
   * The records as binary COPY data (signature, tuples, trailer), where a typed source
   * (Parquet) encoded them itself: the binary wire sends these instead of encoding `data`,
   * which stays the text form the reject path loads a refused chunk from.
   */
  readonly binary?: Buffer;
  /** Records in `data`. */
  readonly records: number;
  /** Physical lines the records span in the source (more than `records` when CSV fields hold newlines). */
  readonly lines: number;
  /** The load target this chunk belongs to. */
  readonly target: LoadTarget;
  /**
   * A chunk of one record the framer could not frame (a malformed NDJSON line): nothing is
   * sent, the record is rejected verbatim (`source`: as read, its line ending included, the
   * input's added when it has none; the end-of-data marker's without it) and the chunk's
   * ledger row says so, so a resume skips it like any committed chunk.
   */
  readonly unframable?: Unframable;
  /**
   * Hands the chunk's buffers back to its reader for the chunks after it. Called once
   * nothing will read `data` or `source` again (the chunk is committed and its rejects are
   * written); a chunk never released is left to the garbage collector.
   */
  readonly release?: () => void;
  /** The chunk's records one by one, where they are not framed from its source bytes (Parquet rows); a refused chunk needs them. */
  readonly splitRecords?: () => Promise<SplittableRecords>;
}

/** The chunk's source bytes: kept, or read again from the input. */
export async function chunkSource(chunk: Chunk): Promise<Buffer> {
  if (chunk.source !== undefined) return chunk.source;
  if (chunk.readSource !== undefined) return chunk.readSource();
  throw new Error(`internal: the chunk at byte ${chunk.location.byteOffset} of ${chunk.location.file} has no source bytes`);
}

/**
 * The fields the input adds to a load target, declared where they are defined (module
 * augmentation, as ChunkFormatFields): the format (input/formats.ts), how the input is
 * read (input/input-options.ts), the JSON and Parquet column mappings (input/json/json-record.ts,
 * input/parquet/parquet-columns.ts).
 */
export interface TargetInputFields {}

/** A table and how its input is framed; shared by every chunk of one input. */
export interface LoadTarget extends TargetInputFields {
  readonly table: string;
  readonly schema: string | undefined;
  readonly file: string;
  /**
   * The columns a chunk's records fill, in order (COPY's column list); every column when
   * absent. Set by the column plan before the load; a writer must honour it.
   */
  readonly columns?: readonly string[];
}

/** Why a record could not be framed; `character` is 1-based within the record, when known. */
export interface Unframable {
  readonly message: string;
  readonly character: number | undefined;
  /** The record's length in source bytes, without its newline. */
  readonly recordLength: number;
  /**
   * Not a record at all but the end-of-data marker `\.` at the end of the input: counted
   * as skipped, not rejected (its chunk's ledger row says so, like a reject's).
   */
  readonly skip?: boolean;
}

/**
 * A chunk's records one by one, as isolating a bad row needs them: `start(i)` is record
 * i's place in the chunk's location's units (bytes; rows for a Parquet chunk).
 */
export interface SplittableRecords {
  readonly count: number;
  start(i: number): number;
  linesBefore(i: number): number;
  /** Record i as the reject file holds it: as read, its line ending included. */
  sourceOf(i: number): Buffer;
  slice(from: number, to: number): Chunk;
}
