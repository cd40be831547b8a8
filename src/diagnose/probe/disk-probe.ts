import { spawn } from 'node:child_process';
import { closeSync, fdatasyncSync, openSync, writeSync, existsSync, rmSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { filesystemInfo } from '../../cluster/filesystem-info.js';
import type { DiskFigures } from './probe-store.js';

export interface DiskProbeOptions {
  /** Bytes written and read back sequentially. */
  readonly bytes: number;
  /** Seconds of 8 KB fdatasync writes. */
  readonly fsyncSeconds: number;
  /** pg_test_fsync to use, when there is one. */
  readonly pgTestFsync?: string;
}

/** "        fdatasync      1234.567 ops/sec    810 usecs/op" in pg_test_fsync's "one 8kB write" section. */
export function parsePgTestFsync(output: string): number | undefined {
  const section = output.split(/Compare file sync methods using one 8kB write/)[1];
  if (section === undefined) return undefined;
  const m = /^\s*fdatasync\s+([\d.]+) ops\/sec/m.exec(section.split(/Compare file sync methods using two/)[0]!);
  return m ? Number(m[1]) : undefined;
}

/**
 * pg_test_fsync's fdatasync figure for one 8 KB write: the tool is stopped as soon as it
 * has printed that line (the rest of its tests would take a dozen seconds more).
 */
async function pgTestFsync(tool: string, dir: string, seconds: number): Promise<number | undefined> {
  const file = path.join(dir, 'pgsurge-probe-fsync.tmp');
  try {
    return await new Promise<number | undefined>((resolve) => {
      const child = spawn(tool, ['-s', String(Math.max(1, Math.round(seconds))), '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const n = parsePgTestFsync(out);
        if (n !== undefined) {
          child.kill();
          resolve(n);
        }
      });
      child.on('error', () => resolve(undefined));
      child.on('close', () => resolve(parsePgTestFsync(out)));
    });
  } finally {
    await fs.rm(file, { force: true });
  }
}

/** Our own loop: the same 8 KB block written at offset 0 and fdatasync'ed, as a COMMIT's WAL flush does. */
export function fsyncLoop(dir: string, seconds: number): number {
  const file = path.join(dir, 'pgsurge-probe-fsync.tmp');
  const block = Buffer.alloc(8192, 0x5a);
  const fd = openSync(file, 'w');
  try {
    writeSync(fd, block, 0, block.length, 0);
    fdatasyncSync(fd);
    let n = 0;
    const start = performance.now();
    let elapsed = 0;
    while (elapsed < seconds * 1000) {
      writeSync(fd, block, 0, block.length, 0);
      fdatasyncSync(fd);
      n++;
      elapsed = performance.now() - start;
    }
    return n / (elapsed / 1000);
  } finally {
    closeSync(fd);
    // removed before returning: the caller (and its test) may look at the directory next
    rmSync(file, { force: true });
  }
}

/** Runs dd; resolves with its wall time in seconds, or undefined if it failed (e.g. O_DIRECT refused). */
function dd(args: readonly string[]): Promise<number | undefined> {
  return new Promise((resolve) => {
    const start = performance.now();
    const child = spawn('dd', [...args, 'status=none'], { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr.resume();
    child.on('error', () => resolve(undefined));
    child.on('close', (code) => resolve(code === 0 ? (performance.now() - start) / 1000 : undefined));
  });
}

/**
 * Sequential write and read rates of the filesystem under `dir`, as dd measures them:
 * 1 MB blocks with O_DIRECT (the page cache out of the way) when the filesystem takes it;
 * otherwise written through the cache and fdatasync'ed at the end, and the file's cached
 * pages dropped (dd's nocache, i.e. fadvise DONTNEED) before it is read back.
 */
async function sequential(dir: string, bytes: number): Promise<{ write: number; read: number; note: string }> {
  const file = path.join(dir, 'pgsurge-probe-seq.tmp');
  const count = Math.max(1, Math.round(bytes / (1024 * 1024)));
  const mb = count;
  try {
    let note = 'O_DIRECT (dd oflag=direct, iflag=direct), 1 MB blocks of zeros';
    let w = await dd(['if=/dev/zero', `of=${file}`, 'bs=1M', `count=${count}`, 'oflag=direct', 'conv=fdatasync']);
    let r: number | undefined;
    if (w !== undefined) r = await dd([`if=${file}`, 'of=/dev/null', 'bs=1M', 'iflag=direct']);
    if (w === undefined || r === undefined) {
      note = 'no O_DIRECT on this filesystem: written through the page cache with fdatasync at the end, the file\'s cached pages dropped (fadvise) before reading; 1 MB blocks of zeros';
      w = await dd(['if=/dev/zero', `of=${file}`, 'bs=1M', `count=${count}`, 'conv=fdatasync']);
      await dd([`if=${file}`, 'iflag=nocache', 'count=0']);
      r = await dd([`if=${file}`, 'of=/dev/null', 'bs=1M']);
    }
    if (w === undefined || r === undefined) throw new Error(`dd could not write and read ${file}`);
    return { write: mb / w, read: mb / r, note };
  } finally {
    await fs.rm(file, { force: true });
  }
}

/** What the disk under `dir` does: fdatasyncs per second, sequential write and read MB/s. */
export async function probeDisk(dir: string, role: string, options: DiskProbeOptions): Promise<DiskFigures> {
  const fsInfo = await filesystemInfo(dir).catch(() => undefined);
  let fsyncs: number | undefined;
  let tool = 'pgsurge (8 KB write + fdatasync, in a loop)';
  if (options.pgTestFsync && existsSync(options.pgTestFsync)) {
    fsyncs = await pgTestFsync(options.pgTestFsync, dir, options.fsyncSeconds);
    if (fsyncs !== undefined) tool = `pg_test_fsync (${options.pgTestFsync}), fdatasync, one 8 KB write`;
  }
  fsyncs ??= fsyncLoop(dir, options.fsyncSeconds);
  const seq = await sequential(dir, options.bytes);
  return {
    path: dir,
    role,
    ...(fsInfo?.device ? { device: fsInfo.device } : {}),
    ...(fsInfo?.fsType ? { fsType: fsInfo.fsType } : {}),
    fsyncsPerSecond: fsyncs,
    fsyncTool: tool,
    seqWriteMBps: seq.write,
    seqReadMBps: seq.read,
    cacheNote: seq.note,
  };
}
