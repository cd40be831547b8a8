import { open, type FileHandle } from 'node:fs/promises';
import type { ByteRange } from './byte-ranges.js';

/**
 * Bytes read straight into a buffer the caller owns, so the chunker can gather a chunk's
 * source in one buffer without copying blocks together.
 */
export interface ByteReader {
  /** Reads up to `length` bytes into `into` at `at`; resolves to the count, 0 at the end of the input. */
  read(into: Buffer, at: number, length: number): Promise<number>;
  /** Releases the input early (the load stopped); reading after it is not allowed. */
  close?(): Promise<void>;
  /** For a file: reads `length` bytes at `offset` again, so chunks need not keep their source bytes. */
  reread?(offset: number, length: number): Promise<Buffer>;
}

/**
 * `[start, end)` of an open file, read in place; a file that shrinks under the reader is
 * an error. With the file's path, bytes can be read again later (the file is opened anew:
 * the handle may be closed by then).
 */
export function rangeReader(fh: FileHandle, range: ByteRange, path?: string): ByteReader {
  let pos = range.start;
  return {
    ...(path !== undefined ? { reread: (offset: number, length: number) => readAt(path, offset, length) } : {}),
    async read(into, at, length) {
      const want = Math.min(length, range.end - pos);
      if (want <= 0) return 0;
      const { bytesRead } = await fh.read(into, at, want, pos);
      if (bytesRead === 0) throw new Error(`file shrank while reading: expected ${range.end} bytes, ended at ${pos}`);
      pos += bytesRead;
      return bytesRead;
    },
  };
}

/** Blocks from a stream (stdin, a pipe, gunzip), copied into the caller's buffer as it asks. */
export function iterableReader(blocks: AsyncIterable<Buffer>): ByteReader {
  const it = blocks[Symbol.asyncIterator]();
  let block: Buffer | undefined;
  let used = 0;
  let ended = false;
  return {
    async read(into, at, length) {
      while (block === undefined || used >= block.length) {
        if (ended) return 0;
        const r = await it.next();
        if (r.done) {
          ended = true;
          return 0;
        }
        block = r.value;
        used = 0;
      }
      const n = block.copy(into, at, used, Math.min(block.length, used + length));
      used += n;
      return n;
    },
    async close() {
      if (!ended) {
        ended = true;
        await it.return?.();
      }
    },
  };
}

/** `length` bytes of the file at `offset` (fewer if it is shorter now). */
export async function readAt(path: string, offset: number, length: number): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(length);
    let filled = 0;
    while (filled < length) {
      const { bytesRead } = await fh.read(buf, filled, length - filled, offset + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buf.subarray(0, filled);
  } finally {
    await fh.close();
  }
}
