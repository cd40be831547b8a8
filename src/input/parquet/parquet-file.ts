import { promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { parquetMetadataAsync, parquetSchema, type AsyncBuffer, type FileMetaData, type SchemaTree } from 'hyparquet';
import { LoadError } from '../../core/load-error.js';
import { readOnce } from '../file-blocks.js';

/** A Parquet file opened for reading: its footer, and ranges of it read on demand. */
export interface ParquetFile {
  readonly path: string;
  readonly size: number;
  /** The footer as written. */
  readonly metadata: FileMetaData;
  /** The footer with the leaves' annotations taken off, for the reader (see `rawMetadata`). */
  readonly raw: FileMetaData;
  readonly buffer: AsyncBuffer;
  /** Reads `out.length` bytes from `start` into `out` (a buffer the caller reuses, where `buffer.slice` makes a new one each time). */
  readInto(start: number, out: Uint8Array): Promise<void>;
  close(): Promise<void>;
}

/** Fills `out` from byte `start` of the file. */
async function readFully(fh: FileHandle, start: number, out: Uint8Array): Promise<void> {
  let done = 0;
  while (done < out.length) {
    const { bytesRead } = await fh.read(out, done, out.length - done, start + done);
    if (bytesRead === 0) throw new Error(`unexpected end of file at byte ${start + done}`);
    done += bytesRead;
  }
}

/** Reads byte ranges of an open file, as hyparquet asks for them (a column chunk at a time). */
function fileBuffer(fh: FileHandle, size: number): AsyncBuffer {
  return {
    byteLength: size,
    async slice(start: number, end: number = size): Promise<ArrayBuffer> {
      const buf = new Uint8Array(new ArrayBuffer(Math.max(0, Math.min(end, size) - start)));
      await readFully(fh, start, buf);
      return buf.buffer;
    },
  };
}

/** Opens a Parquet file and reads its footer; a file that is not Parquet is a clear error before anything loads. */
export async function openParquet(path: string): Promise<ParquetFile> {
  if (readOnce(path)) {
    throw new LoadError('bad-option', `${path === '-' ? 'stdin' : `${path} (a pipe or device)`} cannot be read as Parquet: a Parquet file is read from its footer, at its end, then by row group, which needs a regular file`, {
      hint: 'save it to a file first',
    });
  }
  const fh = await fs.open(path, 'r');
  try {
    const { size } = await fh.stat();
    const buffer = fileBuffer(fh, size);
    let metadata: FileMetaData;
    try {
      metadata = await parquetMetadataAsync(buffer);
    } catch (error) {
      throw new LoadError('bad-option', `${path} is not a Parquet file pgsurge can read: ${(error as Error).message}`, { hint: 'check the file and -f', cause: error });
    }
    return { path, size, metadata, raw: rawMetadata(metadata), buffer, readInto: (start, out) => readFully(fh, start, out), close: () => fh.close() };
  } catch (error) {
    await fh.close();
    throw error;
  }
}

/**
 * The footer as the reader is given it: every leaf's logical and converted type taken
 * off, so hyparquet hands over the physical values (an INT64 DECIMAL as its unscaled
 * bigint, a TIMESTAMP as its count of units, strings as bytes) and never a lossy
 * JavaScript Number or Date; pgsurge converts them exactly (`parquet-text.ts`). Groups
 * keep theirs (LIST, MAP assemble by them), and so does a MAP's string key, which becomes
 * the key of the assembled object.
 */
export function rawMetadata(metadata: FileMetaData): FileMetaData {
  const raw: FileMetaData = { ...metadata, schema: metadata.schema.map((e) => ({ ...e })) };
  const strip = (tree: SchemaTree, mapKey: boolean): void => {
    const e = tree.element;
    if (tree.children.length === 0) {
      const stringKey = mapKey && (e.converted_type === 'UTF8' || e.logical_type?.type === 'STRING' || e.logical_type?.type === 'ENUM' || e.converted_type === 'ENUM');
      if (!stringKey) {
        delete e.converted_type;
        delete e.logical_type;
      } else e.converted_type = 'UTF8';
      return;
    }
    // hyparquet assembles by the legacy annotation: a group with only the logical one gets it.
    if (e.logical_type?.type === 'LIST' && e.converted_type === undefined) e.converted_type = 'LIST';
    if (e.logical_type?.type === 'MAP' && e.converted_type === undefined) e.converted_type = 'MAP';
    const isMap = e.converted_type === 'MAP' || e.converted_type === 'MAP_KEY_VALUE';
    for (const child of tree.children) {
      if (isMap && child.children.length === 2) {
        strip(child.children[0]!, true);
        strip(child.children[1]!, false);
      } else strip(child, false);
    }
  };
  for (const child of parquetSchema(raw).children) strip(child, false);
  return raw;
}
