import type { Command } from 'commander';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { defaultDataDir } from '../cluster/default-home.js';
import { ManagedCluster } from '../cluster/managed-cluster.js';
import { moveWal } from '../cluster/wal-move.js';

interface ClusterFlags {
  dataDir: string;
  pgBin: string;
  walDir?: string;
}

export function registerClusterCommands(program: Command): void {
  const cluster = program
    .command('cluster')
    .description('the managed PostgreSQL cluster: keep it running between commands, query it with psql "$(pgsurge cluster url)"');
  const withDir = (c: Command): Command =>
    c
      .option('--data-dir <dir>', 'data directory of the managed cluster', defaultDataDir(process.env))
      .option('--pg-bin <which>', 'server binaries: embedded (from npm), system (this machine\'s PostgreSQL), or a bin directory', 'embedded');

  withDir(cluster.command('start').description('create the cluster if needed and start it; it stays up until `pgsurge cluster stop`'))
    .option('--wal-dir <path>', 'put the WAL in this directory: initdb --waldir for a new cluster; an existing one has its WAL moved there (as `pgsurge wal move --restart`)')
    .action(async (flags: ClusterFlags) => {
      const c = await ManagedCluster.open({ ...flags, env: process.env });
      if (flags.walDir !== undefined && c.isInitialized()) {
        const current = await fs.realpath(path.join(c.dataDir, 'pg_wal'));
        const wanted = path.resolve(flags.walDir);
        if (current !== wanted && current !== (await fs.realpath(wanted).catch(() => wanted))) {
          const r = await moveWal({ dataDir: c.dataDir, to: wanted, pgBin: flags.pgBin, restart: true, log: (line) => process.stderr.write(`pgsurge: ${line}\n`), env: process.env });
          process.stdout.write(`moved the WAL: ${r.from} → ${r.to} (${r.files} files)\n`);
        }
      }
      const started = await c.start();
      process.stdout.write(`${started ? 'started' : 'already running'}: ${c.binaries.version} (${c.binaries.source}) in ${c.dataDir}\n${c.url()}\n`);
    });
  withDir(cluster.command('stop').description('stop the cluster (fast shutdown: open sessions rolled back, a checkpoint taken)')).action(
    async (flags: ClusterFlags) => {
      const c = await ManagedCluster.open({ ...flags, env: process.env });
      process.stdout.write((await c.stop()) ? `stopped ${c.dataDir}\n` : `not running: ${c.dataDir}\n`);
    },
  );
  withDir(cluster.command('status').description('whether the cluster exists and runs; exit code 0 only when it runs')).action(async (flags: ClusterFlags) => {
    const c = await ManagedCluster.open({ ...flags, env: process.env });
    const running = await c.isRunning();
    const state = !c.isInitialized() ? 'not created' : running ? 'running' : 'stopped';
    process.stdout.write(`${state}: ${c.dataDir} (PostgreSQL ${(await c.dataVersion()) ?? '-'}; binaries ${c.binaries.version}, ${c.binaries.source})\n`);
    if (running) process.stdout.write(`${c.url()}\n`);
    else process.exitCode = 3;
  });
  withDir(cluster.command('url').description('print the connection URL, for psql "$(pgsurge cluster url)"')).action(async (flags: ClusterFlags) => {
    const c = await ManagedCluster.open({ ...flags, env: process.env });
    process.stdout.write(`${c.url()}\n`);
  });
}
