import { promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { LoadTarget } from '../batching/chunk.js';
import type { RejectedRow } from '../ledger/ledger.js';

/** Where a table's rejected rows go: `--reject-file`, else `<table>.rejects` in `--reject-dir`, beside the input, or (stdin) here. */
export function rejectPathFor(input: LoadTarget, options: { rejectFile?: string; rejectDir?: string }, cwd: string = process.cwd()): string {
  if (options.rejectFile !== undefined) return path.resolve(cwd, options.rejectFile);
  const dir = options.rejectDir ?? (input.file === '-' ? cwd : path.dirname(path.resolve(cwd, input.file)));
  return path.resolve(cwd, dir, `${safeFileName(input.table)}.rejects`);
}

/**
 * A table name as one file name: it must not steer the path (`/`, a backslash, a leading `.`
 * as in `../`) nor put control characters (a newline) in it; those become `_`. Anything
 * else a table name holds (spaces, quotes, upper case) is a valid file name and stays.
 */
export function safeFileName(name: string): string {
  // eslint-disable-next-line no-control-regex
  const safe = name.replace(/[/\\\u0000-\u001f\u007f]/g, '_').replace(/^\.+/, (dots) => '_'.repeat(dots.length));
  return safe === '' ? '_' : safe;
}

const LOG_HEADER = 'file\tline\tbyte_offset\tsqlstate\tcolumn\tmessage\n';

/**
 * A reject file and its log (`<file>.log`), both mode 0600 (rejected rows are data).
 * The file holds each rejected row verbatim, as read from the input with its own line
 * ending (`RejectedRow.record`), so it can be fixed and loaded again with the same
 * options; the log says where each came from and why the server refused
 * it, one tab-separated line each. Opened on the first reject; appends are serialized.
 */
export class RejectFile {
  private handles: Promise<{ rows: FileHandle; log: FileHandle }> | undefined;
  private tail: Promise<void> = Promise.resolve();
  private count = 0;
  private failure: Error | undefined;

  constructor(readonly path: string) {}

  get logPath(): string {
    return `${this.path}.log`;
  }

  get written(): number {
    return this.count;
  }

  /** The first write that failed (a full disk): the file is incomplete from there on. */
  get failed(): Error | undefined {
    return this.failure;
  }

  /** Removes the file and its log (what an earlier load left, or this load's rows before they are rewritten in order). */
  async clear(): Promise<void> {
    await this.close();
    this.count = 0;
    this.failure = undefined;
    await fs.rm(this.path, { force: true });
    await fs.rm(this.logPath, { force: true });
  }

  append(rows: readonly RejectedRow[]): Promise<void> {
    if (rows.length === 0) return this.tail;
    const next = this.tail.then(async () => {
      // After a failed write the file is incomplete: nothing more goes in (it would have a hole).
      if (this.failure) throw this.failure;
      try {
        const { rows: rf, log } = await this.open();
        // Each record as read, its own line ending included (CR, CRLF or LF): nothing added.
        await writeAll(rf, Buffer.concat(rows.map((r) => r.record)));
        await writeAll(log, Buffer.from(rows.map(logLine).join('')));
        this.count += rows.length;
      } catch (error) {
        this.failure ??= error as Error;
        throw error;
      }
    });
    this.tail = next.catch(() => undefined);
    return next;
  }

  async close(): Promise<void> {
    await this.tail;
    if (!this.handles) return;
    const handles = this.handles;
    this.handles = undefined;
    const { rows, log } = await handles.catch((error: unknown) => {
      this.failure ??= error as Error;
      return { rows: undefined, log: undefined };
    });
    // close() reports what a delayed write could not put on disk (NFS, some full disks).
    for (const r of await Promise.allSettled([rows?.close(), log?.close()])) {
      if (r.status === 'rejected') this.failure ??= r.reason as Error;
    }
  }

  private open(): Promise<{ rows: FileHandle; log: FileHandle }> {
    this.handles ??= (async () => {
      await fs.mkdir(path.dirname(this.path), { recursive: true });
      // Append: `clear()` starts a file afresh; rows written earlier in this run stay.
      const rows = await fs.open(this.path, 'a', 0o600);
      const log = await fs.open(this.logPath, 'a', 0o600);
      // An existing file keeps its mode on open: make sure no one else can read rejected rows.
      await Promise.all([rows.chmod(0o600), log.chmod(0o600)]);
      if ((await log.stat()).size === 0) await log.write(LOG_HEADER);
      return { rows, log };
    })();
    return this.handles;
  }
}

/** `write` may write less than asked (a nearly full disk): go on until all is written, or it fails. */
async function writeAll(fh: FileHandle, buf: Buffer): Promise<void> {
  for (let at = 0; at < buf.length; ) {
    const { bytesWritten } = await fh.write(buf, at, buf.length - at);
    if (bytesWritten === 0) throw Object.assign(new Error('no space left on device (a write wrote nothing)'), { code: 'ENOSPC' });
    at += bytesWritten;
  }
}

function clean(s: string): string {
  return s.replace(/[\t\r\n]+/g, ' ');
}

function logLine(r: RejectedRow): string {
  return `${clean(r.file)}\t${r.line ?? ''}\t${r.byteOffset}\t${r.sqlstate ?? ''}\t${clean(r.column ?? '')}\t${clean(r.message)}\n`;
}
