import { promises as fs } from 'node:fs';
import { countNewlines } from './line-framer.js';

/**
 * The 1-based line number at a byte offset of a newline-framed file: only needed for an
 * error in a byte range whose first line was not known while loading.
 */
export async function lineAtOffset(file: string, offset: number): Promise<number> {
  const fh = await fs.open(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    let pos = 0;
    let lines = 0;
    while (pos < offset) {
      const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, offset - pos), pos);
      if (bytesRead === 0) break;
      lines += countNewlines(buf.subarray(0, bytesRead));
      pos += bytesRead;
    }
    return lines + 1;
  } finally {
    await fh.close();
  }
}
