import { promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { LoadTarget } from '../../core/chunk.js';
import { LoadError } from '../../core/load-error.js';
import { readOnce } from '../../input/file-blocks.js';
import type { RejectedRow } from '../ledger/ledger.js';

/**
 * Where a table's rejected rows go: `--reject-file`, else `<table>.<load id>.rejects` in
 * `--reject-dir`, beside the input, or (stdin, a pipe under /dev or /proc) here. The load id in the name keeps two loads
 * of one table from sharing a file; a resumed load has the same id, so its file holds every
 * run's rejected rows.
 */
export function rejectPathFor(input: LoadTarget, options: { rejectFile?: string; rejectDir?: string }, loadId: string, cwd: string = process.cwd()): string {
  if (options.rejectFile !== undefined) return path.resolve(cwd, options.rejectFile);
  // Beside the input, unless it is stdin or a pipe the system names (`<(zcat x.gz)` is /dev/fd/63): then here.
  const dir = options.rejectDir ?? (input.file === '-' || (/^\/(dev|proc)\//.test(path.resolve(cwd, input.file)) && readOnce(input.file)) ? cwd : path.dirname(path.resolve(cwd, input.file)));
  return path.resolve(cwd, dir, `${safeFileName(input.table)}.${safeFileName(loadId)}.rejects`);
}

/** The first line of a reject file's log: which load wrote the file. */
const OWNER_PREFIX = '# pgsurge load ';

/**
 * Who holds a reject file: `free` (neither it nor its log has a byte), the id of the load
 * whose log it is, or `unknown` (rows without a log, a log of an older pgsurge, a file of
 * the user's own).
 */
export async function rejectFileOwner(file: string): Promise<'free' | 'unknown' | { loadId: string }> {
  const size = async (p: string): Promise<number> => (await fs.stat(p).catch(() => undefined))?.size ?? 0;
  if ((await size(file)) === 0 && (await size(`${file}.log`)) === 0) return 'free';
  const head = await fs.readFile(`${file}.log`, 'utf8').then((t) => t.slice(0, 300), () => '');
  const first = head.split('\n', 1)[0]!;
  return first.startsWith(OWNER_PREFIX) ? { loadId: first.slice(OWNER_PREFIX.length) } : 'unknown';
}

/**
 * The reject file a load writes, never one that holds another load's rows: the file as named
 * when it is free, or when it is this load's own from an earlier run (then rewritten from
 * the ledger, every run's rows). Without the ledger nothing can be rewritten, so only a free
 * file is taken. When the named file is taken, a default name gets `-2`, `-3`… before
 * `.rejects`; a `--reject-file` the user named stops the load before anything is written.
 */
export async function claimRejectPath(file: string, options: { loadId: string; withLedger: boolean; explicit: boolean }): Promise<string> {
  const mine = async (candidate: string): Promise<boolean> => {
    const owner = await rejectFileOwner(candidate);
    return owner === 'free' || (options.withLedger && typeof owner === 'object' && owner.loadId === options.loadId);
  };
  if (await mine(file)) return file;
  if (options.explicit) {
    const owner = await rejectFileOwner(file);
    const whose = typeof owner === 'object' ? `the rejected rows of load ${owner.loadId}` : 'rows pgsurge did not write for this load';
    throw new LoadError('bad-option', `--reject-file ${file} already holds ${whose}${options.withLedger ? '' : ' (without the ledger a load cannot take over a reject file)'}: it is left as it is`, {
      hint: 'give another --reject-file, or move that file (and its .log) away first',
    });
  }
  const base = file.endsWith('.rejects') ? file.slice(0, -'.rejects'.length) : file;
  for (let n = 2; ; n++) {
    const candidate = `${base}-${n}.rejects`;
    if (await mine(candidate)) return candidate;
  }
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
  /** Rows handed to `append` since the file was started: what it should hold. */
  private asked = 0;
  /** A failed write left part of a row at the end. */
  private cut = false;
  /** Rows whose line is in the log. */
  private loggedRows = 0;
  private failure: Error | undefined;

  /** `owner`: the load id written at the top of the log, so a later load knows whose file this is. */
  constructor(
    readonly path: string,
    private readonly owner?: string,
  ) {}

  get logPath(): string {
    return `${this.path}.log`;
  }

  /** Whole rows in the file (after a failed write, those it holds before the cut). */
  get written(): number {
    return this.count;
  }

  /** Rows this file was asked to hold; more than `written` once a write failed. */
  get wanted(): number {
    return this.asked;
  }

  /** Rows whose reason is in the log: fewer than `written` when the log's write failed. */
  get logged(): number {
    return this.loggedRows;
  }

  /** A failed write left part of a row after the last whole one. */
  get endsCut(): boolean {
    return this.cut;
  }

  /** The first write that failed (a full disk): the file is incomplete from there on. */
  get failed(): Error | undefined {
    return this.failure;
  }

  /** Removes the file and its log (what an earlier load left, or this load's rows before they are rewritten in order). */
  async clear(): Promise<void> {
    await this.close();
    this.count = 0;
    this.asked = 0;
    this.loggedRows = 0;
    this.cut = false;
    this.failure = undefined;
    await fs.rm(this.path, { force: true });
    await fs.rm(this.logPath, { force: true });
  }

  append(rows: readonly RejectedRow[]): Promise<void> {
    if (rows.length === 0) return this.tail;
    this.asked += rows.length;
    const next = this.tail.then(async () => {
      // After a failed write the file is incomplete: nothing more goes in (it would have a hole).
      if (this.failure) throw this.failure;
      try {
        const { rows: rf, log } = await this.open();
        // Each record as read, its own line ending included (CR, CRLF or LF): nothing added.
        const records = rows.map((r) => r.record);
        try {
          await writeAll(rf, Buffer.concat(records));
        } catch (error) {
          // What reached the file before the write failed: whole rows, and maybe part of one.
          let left = (error as { bytesWritten?: number }).bytesWritten ?? 0;
          for (const r of records) {
            if (left < r.length) {
              this.cut = left > 0;
              break;
            }
            left -= r.length;
            this.count++;
          }
          throw error;
        }
        this.count += rows.length;
        await writeAll(log, Buffer.from(rows.map(logLine).join('')));
        this.loggedRows += rows.length;
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
      let log: FileHandle | undefined;
      try {
        log = await fs.open(this.logPath, 'a', 0o600);
        // An existing file keeps its mode on open: make sure no one else can read rejected rows.
        await Promise.all([rows.chmod(0o600), log.chmod(0o600)]);
        if ((await log.stat()).size === 0) await writeAll(log, Buffer.from(`${this.owner === undefined ? '' : `${OWNER_PREFIX}${this.owner}\n`}${LOG_HEADER}`));
      } catch (error) {
        // A full disk can refuse the log's first line: the handles are closed here, as nothing else holds them.
        await Promise.allSettled([rows.close(), log?.close()]);
        throw error;
      }
      return { rows, log };
    })();
    return this.handles;
  }
}

/** `write` may write less than asked (a nearly full disk): go on until all is written, or it fails (with `bytesWritten`: how far it got). */
async function writeAll(fh: FileHandle, buf: Buffer): Promise<void> {
  let at = 0;
  try {
    while (at < buf.length) {
      const { bytesWritten } = await fh.write(buf, at, buf.length - at);
      if (bytesWritten === 0) throw Object.assign(new Error('no space left on device (a write wrote nothing)'), { code: 'ENOSPC' });
      at += bytesWritten;
    }
  } catch (error) {
    throw Object.assign(error as Error, { bytesWritten: at });
  }
}

function clean(s: string): string {
  return s.replace(/[\t\r\n]+/g, ' ');
}

function logLine(r: RejectedRow): string {
  return `${clean(r.file)}\t${r.line ?? ''}\t${r.byteOffset}\t${r.sqlstate ?? ''}\t${clean(r.column ?? '')}\t${clean(r.message)}\n`;
}
