/**
 * `dbt3 gen --format parquet`: a table's `.tbl` blocks as a Parquet file, written one row
 * group at a time with hyparquet-writer (so memory is one row group, whatever the scale),
 * the file's bytes flushed to disk as they are encoded.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import type { Dbt3Table } from '../dbt3-schema.js';
import { DEFAULT_ROW_GROUP_ROWS, type ParquetCompression } from './gen-formats.js';
import { RowGroupBuilder, tblColumns, type TblColumn } from './tbl-columns.js';

type WriterOptions = ConstructorParameters<typeof ParquetWriter>[0];
type SchemaElement = WriterOptions['schema'][number];

export interface ParquetOutOptions {
  readonly compression?: ParquetCompression;
  readonly rowGroupRows?: number;
}

/** The Parquet schema of a DBT-3 table: every field REQUIRED (the generator writes no NULLs). */
export function parquetSchema(columns: readonly TblColumn[]): SchemaElement[] {
  const fields = columns.map(({ name, type }): SchemaElement => {
    const required = { name, repetition_type: 'REQUIRED' } as const;
    switch (type.kind) {
      case 'int32':
        return { ...required, type: 'INT32' };
      case 'int64':
        return { ...required, type: 'INT64' };
      case 'decimal': {
        const { precision, scale } = type;
        return { ...required, type: 'INT64', converted_type: 'DECIMAL', precision, scale, logical_type: { type: 'DECIMAL', precision, scale } };
      }
      case 'date':
        return { ...required, type: 'INT32', converted_type: 'DATE', logical_type: { type: 'DATE' } };
      case 'string':
        return { ...required, type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' } };
    }
  });
  return [{ name: 'schema', num_children: fields.length }, ...fields];
}

/** Bytes the encoder may hold before they go to the file. */
const FLUSH_BYTES = 1 << 20;

/** hyparquet-writer's byte writer, emptied into a file descriptor as it fills. */
class FileSink extends ByteWriter {
  constructor(private readonly fd: number) {
    super(FLUSH_BYTES * 2);
  }

  override ensure(size: number): void {
    if (this.index > FLUSH_BYTES) this.drain();
    super.ensure(size);
  }

  drain(): void {
    let done = 0;
    while (done < this.index) done += writeSync(this.fd, new Uint8Array(this.buffer, done, this.index - done));
    this.index = 0;
  }

  override finish(): void {
    this.drain();
  }
}

const CODECS: Record<ParquetCompression, WriterOptions['codec']> = { snappy: 'SNAPPY', gzip: 'GZIP', none: 'UNCOMPRESSED' };

/**
 * One table's Parquet file: feed it the table's `.tbl` blocks in order, then `close`.
 * Rows are parsed into a row group's columns; a full group is encoded and written.
 */
export class Dbt3ParquetFile {
  private readonly fd: number;
  private readonly sink: FileSink;
  private readonly writer: ParquetWriter;
  private readonly group: RowGroupBuilder;
  private closed = false;
  rows = 0;

  /** Bytes of the file so far (encoded row groups; the footer once closed). */
  get bytes(): number {
    return this.sink.offset;
  }

  constructor(
    table: Dbt3Table,
    readonly path: string,
    options: ParquetOutOptions = {},
  ) {
    const columns = tblColumns(table);
    this.group = new RowGroupBuilder(columns, options.rowGroupRows ?? DEFAULT_ROW_GROUP_ROWS);
    this.fd = openSync(path, 'w');
    this.sink = new FileSink(this.fd);
    this.writer = new ParquetWriter({
      writer: this.sink,
      schema: parquetSchema(columns),
      codec: CODECS[options.compression ?? 'snappy'],
      compressors: { GZIP: (input: Uint8Array) => gzipSync(input) },
      createdBy: 'pgsurge dbt3 gen',
    });
  }

  /** The rows of one `.tbl` block (whole lines). */
  write(buf: Buffer): void {
    // a compact copy: the group's strings are views of it, and a generated block is a
    // slice of a much larger allocation that the views would otherwise keep alive
    const bytes = Buffer.copyBytesFrom(buf);
    let pos = 0;
    while (pos < bytes.length) {
      pos = this.group.fill(bytes, pos);
      if (this.group.full) this.flushGroup();
    }
  }

  private flushGroup(): void {
    const { rows, columns } = this.group.take();
    if (rows === 0) return;
    const names = this.writer.schema.slice(1).map((s) => s.name);
    void this.writer.write({ columnData: columns.map((data, i) => ({ name: names[i]!, data })), rowGroupSize: rows });
    this.sink.drain();
    this.rows += rows;
  }

  /** Writes the last (partial) group and the footer, and closes the file. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.flushGroup();
      void this.writer.finish();
    } finally {
      closeSync(this.fd);
    }
  }

  /** Closes the file without finishing it (after an error). */
  abandon(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }
}
