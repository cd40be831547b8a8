import { createReadStream, createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';

/**
 * psql cannot strip dbgen's trailing `|`: the kit-style reference loads a copy without
 * it. With `halves`, the first and second half of the lines also go to two files (two
 * psql streams loading one table at once).
 */
export async function stripTrailingPipe(from: string, to: string, halves?: { files: [string, string]; lines: number }): Promise<void> {
  const all = createWriteStream(to);
  const parts = halves ? halves.files.map((h) => createWriteStream(h)) : [];
  let n = 0;
  for await (const line of createInterface({ input: createReadStream(from), crlfDelay: Infinity })) {
    const out = `${line.endsWith('|') ? line.slice(0, -1) : line}\n`;
    if (!all.write(out)) await new Promise<void>((r) => all.once('drain', () => r()));
    if (halves) parts[n < halves.lines / 2 ? 0 : 1]!.write(out);
    n++;
  }
  await Promise.all([all, ...parts].map((s) => new Promise((r) => s.end(r))));
}
