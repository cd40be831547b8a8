import { constants, createReadStream, openSync, statSync } from 'node:fs';
import { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { LoadTarget } from '../core/chunk.js';
import { LoadError } from '../core/load-error.js';
import { compressionFromFileName, type Compression } from './formats.js';

/**
 * An input that can be read once only, from its start: stdin, and a path that is not a
 * regular file (a named pipe, `<(zcat x.gz)`'s /dev/fd/N, a character device). Nothing may
 * read its head before the load (what it reads the load would not see: a named pipe's
 * writer gone, its reopening waits for ever), nor read it again after. A path that cannot
 * be stat'ed is not one: the load says what is wrong with it.
 */
export function readOnce(file: string): boolean {
  if (file === '-') return true;
  try {
    return !statSync(file).isFile();
  } catch {
    return false;
  }
}

/** What a read-once input is, for a message that refuses what it cannot do (`/dev/fd/63 is a pipe`). */
export function readOnceWhat(file: string): string {
  return file === '-' ? 'stdin' : `${file} is a pipe or device, read once as it streams`;
}

export function compressionOf(target: LoadTarget): Compression | undefined {
  const c = target.input?.compression;
  if (c === 'none') return undefined;
  return c ?? (target.file === '-' ? undefined : compressionFromFileName(target.file));
}

/**
 * A file's stream. A named pipe is opened non-blocking and read as a socket, as stdin's pipe
 * is: opened the usual way, open(2) waits for the pipe's writer (and read(2) for its next
 * bytes) in a libuv thread that nothing interrupts, so a load stopped meanwhile (Ctrl-C)
 * could not end, not even by `process.exit`. Read this way, the wait is the event loop's:
 * no data until a writer comes, the end when the last writer closes.
 */
function openFile(file: string, highWaterMark: number): Readable {
  let fifo = false;
  try {
    fifo = statSync(file).isFIFO();
  } catch {
    // the open below says what is wrong with the path
  }
  if (!fifo) return createReadStream(file, { highWaterMark });
  return new Socket({ fd: openSync(file, constants.O_RDONLY | constants.O_NONBLOCK), readable: true, writable: false });
}

/**
 * A file's bytes from its start, decompressed when it is compressed (one reader: a gzip
 * stream cannot be entered in the middle). A truncated or corrupt `.gz` stops with the
 * file and how much of its content was read.
 */
export async function* fileBlocks(target: LoadTarget, blockSize: number, stdin?: Readable): AsyncGenerator<Buffer> {
  const highWaterMark = Math.max(64 * 1024, Math.min(blockSize, 1 << 20));
  const raw: Readable = target.file === '-' ? (stdin ?? process.stdin) : openFile(target.file, highWaterMark);
  const compression = compressionOf(target);
  if (compression === undefined) {
    for await (const b of raw) yield b as Buffer;
    return;
  }
  const gunzip = createGunzip({ chunkSize: 64 * 1024 });
  raw.on('error', (e: Error) => gunzip.destroy(e));
  raw.pipe(gunzip);
  let produced = 0;
  try {
    for await (const b of gunzip) {
      produced += (b as Buffer).length;
      yield b as Buffer;
    }
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    if (e.code?.startsWith('Z_') || /unexpected end of file|incorrect header check|invalid/i.test(e.message)) {
      throw new LoadError('bad-input', `${target.file}: the gzip data is truncated or corrupt after ${produced} bytes of content (${e.message})`, {
        location: { file: target.file, byteOffset: produced, byteLength: 0, firstLine: undefined },
        hint: 'check the file with `gzip -t`; chunks committed before the error stay in the table',
        cause: error,
      });
    }
    throw error;
  } finally {
    if (raw !== (stdin ?? process.stdin)) raw.destroy();
    gunzip.destroy();
  }
}
