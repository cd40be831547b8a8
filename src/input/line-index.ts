import { promises as fs } from 'node:fs';
import { countByte, LF } from './line-ends.js';

/**
 * Line numbers at byte offsets of input files, for rejected rows in byte ranges whose
 * first line was not known while loading. Remembers every answer, so each lookup scans
 * only from the nearest known offset below it, not from the start of a 100 GB file.
 */
export class LineIndex {
  private readonly known = new Map<string, { offset: number; line: number }[]>();
  private readonly locks = new Map<string, Promise<unknown>>();

  /** The 1-based physical line at `offset` (which must be a line start); `lineByte` ends a line (`\r` in a file whose lines end so). */
  lineAt(file: string, offset: number, lineByte: number = LF): Promise<number> {
    // One scan per file at a time: two workers asking about the same region share the work.
    const previous = this.locks.get(file) ?? Promise.resolve();
    const next = previous.then(() => this.scan(file, offset, lineByte), () => this.scan(file, offset, lineByte));
    this.locks.set(file, next.catch(() => undefined));
    return next;
  }

  /** Records what a chunk with a known first line tells about its end. */
  remember(file: string, offset: number, line: number): void {
    const points = this.points(file);
    points.push({ offset, line });
    points.sort((a, b) => a.offset - b.offset);
  }

  private points(file: string): { offset: number; line: number }[] {
    let p = this.known.get(file);
    if (!p) {
      p = [{ offset: 0, line: 1 }];
      this.known.set(file, p);
    }
    return p;
  }

  private async scan(file: string, offset: number, lineByte: number): Promise<number> {
    const points = this.points(file);
    let from = points[0]!;
    for (const p of points) if (p.offset <= offset) from = p;
    if (from.offset === offset) return from.line;
    const fh = await fs.open(file, 'r');
    try {
      const buf = Buffer.allocUnsafe(1 << 20);
      let pos = from.offset;
      let line = from.line;
      while (pos < offset) {
        const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, offset - pos), pos);
        if (bytesRead === 0) break;
        line += countByte(buf, lineByte, 0, bytesRead);
        pos += bytesRead;
      }
      this.remember(file, offset, line);
      return line;
    } finally {
      await fh.close();
    }
  }
}
