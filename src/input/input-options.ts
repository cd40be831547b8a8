import type { Compression } from './formats.js';
import type { InputEncoding } from './encodings.js';

declare module '../core/chunk.js' {
  interface TargetInputFields {
    /** How the input is read: header, delimiters, encoding, JSON mapping, skip/limit (defaults when absent). */
    readonly input?: InputOptions;
  }
}

/** What the user told pgsurge about an input beyond its format (all optional; COPY's defaults otherwise). */
export interface InputOptions {
  /** `skip`: drop the first record; `match`: it names the columns, in order. */
  readonly header?: 'skip' | 'match';
  /** Load into these columns, in this order (`--columns`). */
  readonly columns?: readonly string[];
  /** COPY's DELIMITER (text, csv). */
  readonly delimiter?: string;
  /** COPY's NULL string (text, csv, tbl). */
  readonly null?: string;
  /** COPY's QUOTE and ESCAPE (csv). */
  readonly quote?: string;
  readonly escape?: string;
  /** The input's character encoding; UTF8 when absent. */
  readonly encoding?: InputEncoding;
  /** Compression; from the file name when absent. */
  readonly compression?: Compression | 'none';
  /** JSON arrays: the path of the array inside the document (`data.items`). */
  readonly jsonPath?: string;
  /** JSON: keys that are no column are left out instead of stopping the load. */
  readonly ignoreExtraKeys?: boolean;
  /**
   * JSON: the key that fills a column, by column name, where they differ (a table `--create`
   * made from the file, its keys made identifiers: `First Name` → `first_name`).
   */
  readonly keys?: Readonly<Record<string, string>>;
  /** JSON: a missing key is NULL, or the column's default. */
  readonly missing?: 'null' | 'default';
  /** Records to leave out at the start (after a header). */
  readonly skip?: number;
  /** Records to load at most. */
  readonly limit?: number;
}
