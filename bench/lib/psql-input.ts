import { createReadStream, createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';

/**
 * psql cannot strip dbgen's trailing `|`: writes a stripped copy of a `.tbl` file, and its
 * two halves (by line) for two psql streams at once.
 */
export async function stripTrailingPipe(from: string, to: string, halves: [string, string], lines: number): Promise<void> {
  const all = createWriteStream(to);
  const parts = halves.map((h) => createWriteStream(h));
  let n = 0;
  for await (const line of createInterface({ input: createReadStream(from), crlfDelay: Infinity })) {
    const out = `${line.endsWith('|') ? line.slice(0, -1) : line}\n`;
    all.write(out);
    parts[n < lines / 2 ? 0 : 1]!.write(out);
    n++;
  }
  await Promise.all([all, ...parts].map((s) => new Promise((r) => s.end(r))));
}
