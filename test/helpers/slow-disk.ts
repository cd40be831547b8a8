import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * A disk with known latencies, for a test that needs the server to wait on it: a shared
 * library loaded into the server with LD_PRELOAD whose fdatasync (the WAL's flush) and
 * block reads (pread/preadv of 8 kB or more) sleep first. The server reports the sleeps as
 * it would a slow disk's (IO:WalSync, IO:DataFileRead, AioIoCompletion). The disk under a
 * test may have a write cache (a flush in a tenth of a millisecond) and the page cache
 * answers a read the test dropped from it once it is read again: the test cannot know what
 * it runs on, so it builds the slow disk it needs.
 */
const SOURCE = `#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
static void wait_ns(long ns) { if (ns > 0) { struct timespec t = { ns / 1000000000L, ns % 1000000000L }; nanosleep(&t, 0); } }
static int (*real_fdatasync)(int);
static ssize_t (*real_pread)(int, void *, size_t, off_t);
static ssize_t (*real_preadv)(int, const struct iovec *, int, off_t);
int fdatasync(int fd) {
  if (!real_fdatasync) real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  wait_ns(FLUSH_NS);
  return real_fdatasync(fd);
}
ssize_t pread(int fd, void *buf, size_t n, off_t off) {
  if (!real_pread) real_pread = (ssize_t (*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread");
  if (n >= 8192) wait_ns(READ_NS);
  return real_pread(fd, buf, n, off);
}
ssize_t preadv(int fd, const struct iovec *iov, int count, off_t off) {
  if (!real_preadv) real_preadv = (ssize_t (*)(int, const struct iovec *, int, off_t))dlsym(RTLD_NEXT, "preadv");
  size_t n = 0;
  for (int i = 0; i < count; i++) n += iov[i].iov_len;
  if (n >= 8192) wait_ns(READ_NS);
  return real_preadv(fd, iov, count, off);
}
`;

export interface SlowDisk {
  /** Each fdatasync waits this long first. */
  readonly flushMs?: number;
  /** Each read of a block (8 kB or more) waits this long first. */
  readonly readMs?: number;
}

/** Compiles the library into `dir` (readable by the server's account); its path. Throws when there is no C compiler. */
export async function buildSlowDisk(dir: string, disk: SlowDisk): Promise<string> {
  const name = `slow-disk-${disk.flushMs ?? 0}-${disk.readMs ?? 0}`;
  const c = path.join(dir, `${name}.c`);
  const so = path.join(dir, `${name}.so`);
  await fs.writeFile(c, SOURCE);
  const ns = (ms: number | undefined): string => `${Math.round((ms ?? 0) * 1e6)}L`;
  try {
    await promisify(execFile)('cc', ['-shared', '-fPIC', '-O1', `-DFLUSH_NS=${ns(disk.flushMs)}`, `-DREAD_NS=${ns(disk.readMs)}`, '-o', so, c, '-ldl']);
  } catch (e) {
    throw new Error(`this test builds a slow disk for its server with a C compiler (cc), which failed: install gcc (scripts/citus-build.sh does): ${(e as Error).message}`);
  }
  await fs.chmod(so, 0o755);
  return so;
}

/** Runs `f` (a server start) with the library preloaded into the processes it spawns; the runner's own environment is restored after. */
export async function withPreload<T>(library: string, f: () => Promise<T>): Promise<T> {
  const before = process.env.LD_PRELOAD;
  process.env.LD_PRELOAD = library;
  try {
    return await f();
  } finally {
    if (before === undefined) delete process.env.LD_PRELOAD;
    else process.env.LD_PRELOAD = before;
  }
}
