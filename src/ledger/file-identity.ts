import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';

/** What says "this is the same file" across runs: its size, its mtime, a hash of its first and last 64 KB. */
export interface FileIdentity {
  readonly size: number;
  readonly mtimeMs: number;
  /** sha256 (hex, 32 chars) of the first and the last 64 KB. */
  readonly hash: string;
}

const EDGE = 64 * 1024;

export async function fileIdentity(file: string): Promise<FileIdentity> {
  const fh = await fs.open(file, 'r');
  try {
    const st = await fh.stat();
    const h = createHash('sha256');
    const head = Buffer.alloc(Math.min(EDGE, st.size));
    await fh.read(head, 0, head.length, 0);
    h.update(head);
    if (st.size > EDGE) {
      const tail = Buffer.alloc(Math.min(EDGE, st.size - EDGE));
      await fh.read(tail, 0, tail.length, st.size - tail.length);
      h.update(tail);
    }
    return { size: st.size, mtimeMs: Math.floor(st.mtimeMs), hash: h.digest('hex').slice(0, 32) };
  } finally {
    await fh.close();
  }
}

/** `size:mtime:hash`, the form the ledger keeps. */
export function identityString(id: FileIdentity): string {
  return `${id.size}:${id.mtimeMs}:${id.hash}`;
}

/** Names what differs between two identities, for the error that refuses a resume onto another file. */
export function identityDifference(was: string, now: string): string {
  const [s0, m0, h0] = was.split(':');
  const [s1, m1, h1] = now.split(':');
  const diffs: string[] = [];
  if (s0 !== s1) diffs.push(`size was ${s0} bytes, now ${s1}`);
  if (m0 !== m1) diffs.push(`modified ${new Date(Number(m0)).toISOString()}, now ${new Date(Number(m1)).toISOString()}`);
  if (h0 !== h1) diffs.push('its first or last 64 KB differ');
  return diffs.join('; ') || 'its identity differs';
}
