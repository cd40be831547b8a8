import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { Option, type Command } from 'commander';
import { systemBinDirs } from '../cluster/binaries.js';
import { ManagedCluster } from '../cluster/managed-cluster.js';
import { defaultDataDir } from '../cluster/default-home.js';
import { LoadError } from '../core/load-error.js';
import { connect } from '../cluster/target.js';
import { openTarget } from './open-target.js';
import { probeDisk } from '../diagnose/probe/disk-probe.js';
import { saveProbe, type DiskFigures, type ProbeFigures } from '../diagnose/probe/probe-store.js';
import { probeScan } from '../diagnose/probe/scan-probe.js';
import { formatBytes } from '../core/format-count.js';
import { parseSize, parseWholeNumber } from './parse-options.js';
import { renderTable } from '../report/summary-format.js';

interface ProbeFlags {
  dataDir: string;
  pgBin: string;
  path: string[];
  size: number;
  fsyncSeconds: number;
  scanSize: number;
  scan: boolean;
  json?: boolean;
}

const collect = (v: string, all: string[]): string[] => [...all, v];

/** pg_test_fsync beside the server's own binaries, else any installed PostgreSQL's (the disk does not care which version asks). */
function findPgTestFsync(postgres: string): string | undefined {
  return [path.dirname(postgres), ...systemBinDirs()].map((d) => path.join(d, 'pg_test_fsync')).find((p) => existsSync(p));
}

export function formatProbe(p: ProbeFigures): string {
  const rows = p.disks.map((d) => [d.role, d.path, `${d.device ?? '?'} ${d.fsType ?? ''}`.trim(), d.fsyncsPerSecond.toFixed(0), d.seqWriteMBps.toFixed(0), d.seqReadMBps.toFixed(0)]);
  const lines = [renderTable(['what', 'directory', 'device', 'fdatasync/s', 'write MB/s', 'read MB/s'], rows)];
  const notes = [...new Set(p.disks.map((d) => `fdatasync: ${d.fsyncTool}; sequential: ${d.cacheNote}`))];
  lines.push(...notes);
  if (p.scan) lines.push(`scan: one backend read a ${formatBytes(p.scan.tableBytes)} table at ${p.scan.mbPerSecond.toFixed(0)} MB/s (${p.scan.seconds.toFixed(2)} s; ${p.scan.note})`);
  return lines.join('\n');
}

export function registerProbeCommand(program: Command): void {
  const cmd = program
    .command('probe')
    .description('what the disks under the data directory and the WAL directory can do (fdatasyncs/s, sequential MB/s) and one backend\'s scan rate; loads on the managed cluster are read against it')
    .option('--data-dir <dir>', 'the data directory whose disks to probe (and where the figures are kept)', defaultDataDir(process.env))
    .option('--pg-bin <which>', 'server binaries for the managed cluster (for the scan, and pg_test_fsync beside them)', 'embedded')
    .option('--path <dir>', 'another directory to probe (repeatable): a disk you might move the WAL to', collect, [])
    .addOption(new Option('--size <bytes>', 'bytes written and read sequentially per directory').default(256 * 1024 * 1024, '256MB').argParser((v) => parseSize('--size', v)))
    .addOption(new Option('--fsync-seconds <n>', 'seconds of 8 KB fdatasync writes per directory').default(2).argParser((v) => parseWholeNumber('--fsync-seconds', v)))
    .addOption(new Option('--scan-size <bytes>', 'size of the generated table one backend scans').default(256 * 1024 * 1024, '256MB').argParser((v) => parseSize('--scan-size', v)))
    .option('--no-scan', 'skip the scan (no server needed)')
    .option('--json', 'print the figures as JSON');
  cmd.addHelpText(
    'after',
    `
Writes test files (removed afterwards) in each directory: the data directory, the WAL
directory (pg_wal, its symlink followed; probed once if on the same filesystem) and each
--path. fdatasync/s is pg_test_fsync's figure when it is installed, else pgsurge's own loop
of 8 KB writes; sequential rates are dd's with O_DIRECT when the filesystem allows it. The
scan runs in the managed cluster (started for it and stopped again). The figures are kept
in <data-dir>/pgsurge-probe.json; later load reports on that cluster compare against them.

Examples:
  pgsurge probe
  pgsurge probe --path /mnt/wal-disk --size 1GB`,
  );
  cmd.action(async (flags: ProbeFlags) => {
    const cluster = await ManagedCluster.open({ dataDir: flags.dataDir, pgBin: flags.pgBin, env: process.env });
    if (!cluster.isInitialized() && !flags.scan) throw new LoadError('bad-option', `${cluster.dataDir} holds no cluster`, { hint: 'drop --no-scan (the managed cluster is created for the scan), or name a data directory with --data-dir' });
    const target = flags.scan ? await openTarget({ dataDir: flags.dataDir, pgBin: flags.pgBin }) : undefined;
    try {
      const tool = findPgTestFsync(cluster.binaries.postgres);
      const options = { bytes: flags.size, fsyncSeconds: flags.fsyncSeconds, ...(tool ? { pgTestFsync: tool } : {}) };
      const say = (s: string): void => {
        if (!flags.json) process.stderr.write(`${s}\n`);
      };
      const disks: DiskFigures[] = [];
      const dataReal = await fs.realpath(cluster.dataDir);
      say(`probing ${dataReal} (data directory) …`);
      const data = await probeDisk(dataReal, 'data directory', options);
      disks.push(data);
      const walReal = await fs.realpath(path.join(cluster.dataDir, 'pg_wal')).catch(() => undefined);
      if (walReal !== undefined) {
        const sameFs = (await fs.stat(walReal)).dev === (await fs.stat(dataReal)).dev;
        if (sameFs) disks.push({ ...data, path: walReal, role: 'WAL directory', cacheNote: `${data.cacheNote} (same filesystem as the data directory: its figures)` });
        else {
          say(`probing ${walReal} (WAL directory) …`);
          disks.push(await probeDisk(walReal, 'WAL directory', options));
        }
      }
      for (const p of flags.path) {
        say(`probing ${p} …`);
        disks.push(await probeDisk(await fs.realpath(p), '--path', options));
      }
      let scan: ProbeFigures['scan'];
      if (target) {
        say(`scanning a ${formatBytes(flags.scanSize)} table in the managed cluster …`);
        const client = await connect(target.config, 'pgsurge probe');
        try {
          scan = await probeScan(client, flags.scanSize);
        } finally {
          await client.end();
        }
      }
      const figures: ProbeFigures = { format: 'pgsurge-probe', createdAt: new Date().toISOString(), disks, ...(scan ? { scan } : {}), ...(target ? { server: target.description } : {}) };
      const file = await saveProbe(cluster.dataDir, figures);
      if (flags.json) process.stdout.write(`${JSON.stringify(figures)}\n`);
      else process.stdout.write(`${formatProbe(figures)}\nkept in ${file}\n`);
    } finally {
      await target?.release();
    }
  });
}
