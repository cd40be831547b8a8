import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';

/**
 * What says "this is the same file" across runs: the file itself (device and inode, so a
 * symlink or a hard link to it is the same file), and its content as far as cheaply known
 * (size, mtime, a hash of its first and last 64 KB), so a file changed in place is not.
 */
export interface FileIdentity {
  readonly dev: number;
  readonly ino: number;
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
    return { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: Math.floor(st.mtimeMs), hash: await edgeHash(fh, st.size) };
  } finally {
    await fh.close();
  }
}

/** The identity's hash of the file's first `size` bytes: its first and its last 64 KB. */
async function edgeHash(fh: fs.FileHandle, size: number): Promise<string> {
  const h = createHash('sha256');
  const head = Buffer.alloc(Math.min(EDGE, size));
  await fh.read(head, 0, head.length, 0);
  h.update(head);
  if (size > EDGE) {
    const tail = Buffer.alloc(Math.min(EDGE, size - EDGE));
    await fh.read(tail, 0, tail.length, size - tail.length);
    h.update(tail);
  }
  return h.digest('hex').slice(0, 32);
}

/**
 * Whether `file` is the file an identity describes with bytes appended since: it is longer,
 * and its first `size` bytes (the size the identity gives) have the identity's hash (the
 * first and the last 64 KB of that part) and end a line (`\n` or `\r`), so the records
 * loaded from them are whole and unchanged where they begin and where they end (not a `\r`
 * whose `\n` came after). With
 * `backslashEscapes` (COPY's text format) a line end after an odd run of backslashes is
 * data, not the end of a record.
 */
export async function grewFrom(was: string, file: string, backslashEscapes = false): Promise<boolean> {
  const [sizeText, , hash] = was.split(':');
  const size = Number(sizeText);
  if (!Number.isSafeInteger(size) || size <= 0 || hash === undefined) return false;
  const fh = await fs.open(file, 'r');
  try {
    const st = await fh.stat();
    if (st.size <= size) return false;
    const last = Buffer.alloc(1);
    await fh.read(last, 0, 1, size - 1);
    if (last[0] !== 0x0a && last[0] !== 0x0d) return false;
    if (backslashEscapes && (await backslashesBefore(fh, size - 1)) % 2 === 1) return false;
    // `\r` then `\n` appended: the part loaded ended inside a `\r\n`.
    if (last[0] === 0x0d) {
      const next = Buffer.alloc(1);
      await fh.read(next, 0, 1, size);
      if (next[0] === 0x0a) return false;
    }
    return (await edgeHash(fh, size)) === hash;
  } finally {
    await fh.close();
  }
}

/** How many backslashes run up to the byte at `at`. */
async function backslashesBefore(fh: fs.FileHandle, at: number): Promise<number> {
  const before = Buffer.alloc(Math.min(at, 4096));
  await fh.read(before, 0, before.length, at - before.length);
  let n = 0;
  while (n < before.length && before[before.length - 1 - n] === 0x5c) n++;
  return n;
}

/**
 * `size:mtime:hash:dev:ino`, the form the ledger keeps (an earlier pgsurge kept the first
 * three only: those still compare).
 */
export function identityString(id: FileIdentity): string {
  return `${id.size}:${id.mtimeMs}:${id.hash}:${id.dev}:${id.ino}`;
}

/** The same content as far as the identity knows: size, mtime and hash (not where it is stored). */
export function sameContent(a: string, b: string): boolean {
  return a.split(':').slice(0, 3).join(':') === b.split(':').slice(0, 3).join(':');
}

/** `dev:ino` of an identity string, or undefined for one an earlier pgsurge wrote. */
export function fileKeyOf(identity: string): string | undefined {
  const parts = identity.split(':');
  return parts.length >= 5 ? `${parts[3]}:${parts[4]}` : undefined;
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
