import type { Command } from 'commander';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { defaultDataDir } from '../cluster/default-home.js';
import { ManagedCluster } from '../cluster/managed-cluster.js';
import { moveWal } from '../cluster/wal-move.js';
import { generatePassword, isLoopback, parseListen, SERVICE_FILE, SERVICE_NAME, tcpUrl, writeListen, type ListenAddress } from '../cluster/cluster-listen.js';
import { LoadError } from '../core/load-error.js';
import { InvalidArgumentError } from 'commander';

interface ClusterFlags {
  dataDir: string;
  pgBin: string;
  walDir?: string;
  listen?: ListenAddress | 'off';
  tcp?: boolean;
}

function parseListenFlag(value: string): ListenAddress | 'off' {
  if (value.trim() === 'off') return 'off';
  const parsed = parseListen(value);
  if (typeof parsed === 'string') throw new InvalidArgumentError(`Expected \`--listen\` to be ${parsed}, or off, got \`${value}\``);
  return parsed;
}

/**
 * `--listen`: writes the address, the password (kept from before, else generated), the
 * service file and the pg_hba.conf lines; a running server whose listening changes is
 * stopped first (listen_addresses and the port take a restart). Returns the cluster as
 * it opens now (its port may have changed).
 */
async function applyListen(c: ManagedCluster, flags: ClusterFlags, listen: ListenAddress | 'off'): Promise<ManagedCluster> {
  const wanted = listen === 'off' ? undefined : { ...listen, password: c.listen?.password ?? generatePassword() };
  if (wanted?.host === c.listen?.host && wanted?.port === c.listen?.port) return c;
  if (await c.isRunning()) {
    await c.stop();
    process.stderr.write(`pgsurge: stopped the cluster to ${wanted ? `listen on ${wanted.host}:${wanted.port}` : 'stop listening on TCP'}\n`);
  }
  await c.init();
  await writeListen(c.dataDir, wanted);
  return ManagedCluster.open({ ...flags, env: process.env });
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
    .option(
      '--listen <[host:]port>',
      'also listen on TCP (127.0.0.1 unless a host is given; 0.0.0.0 for every address), password only (scram-sha-256, generated: `cluster url --tcp` prints it); kept for later starts; `off` to stop',
      parseListenFlag,
    )
    .action(async (flags: ClusterFlags) => {
      let c = await ManagedCluster.open({ ...flags, env: process.env });
      if (flags.listen !== undefined) c = await applyListen(c, flags, flags.listen);
      if (flags.walDir !== undefined && c.isInitialized()) {
        const current = await fs.realpath(path.join(c.dataDir, 'pg_wal'));
        const wanted = path.resolve(flags.walDir);
        if (current !== wanted && current !== (await fs.realpath(wanted).catch(() => wanted))) {
          const r = await moveWal({ dataDir: c.dataDir, to: wanted, pgBin: flags.pgBin, restart: true, log: (line) => process.stderr.write(`pgsurge: ${line}\n`), env: process.env });
          process.stdout.write(`moved the WAL: ${r.from} → ${r.to} (${r.files} files)\n`);
        }
      }
      const started = await c.start();
      await c.setListenPassword();
      process.stdout.write(`${started ? 'started' : 'already running'}: ${c.binaries.version} (${c.binaries.source}) in ${c.dataDir}\n${c.url()}\n`);
      if (c.listen) {
        const open = isLoopback(c.listen.host) ? 'this machine only' : 'other machines too: mind the firewall';
        process.stdout.write(
          `listening on ${c.listen.host}:${c.listen.port} (${open}), user postgres, password only (scram-sha-256): ${tcpUrl(c.listen, 'postgres', false)}\n` +
            `  the URL with the password: pgsurge cluster url --tcp; a service entry: PGSERVICEFILE=${path.join(c.dataDir, SERVICE_FILE)} psql service=${SERVICE_NAME}\n`,
        );
      }
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
    if (c.listen) process.stdout.write(`listens on TCP: ${tcpUrl(c.listen, 'postgres', false)} (the password: pgsurge cluster url --tcp)\n`);
  });
  withDir(cluster.command('url').description('print the connection URL, for psql "$(pgsurge cluster url)"'))
    .option('--tcp', 'the TCP URL with host, port and the password (a cluster started with --listen)')
    .action(async (flags: ClusterFlags) => {
      const c = await ManagedCluster.open({ ...flags, env: process.env });
      if (flags.tcp && !c.listen) throw new LoadError('bad-option', `the cluster in ${c.dataDir} listens on its Unix socket only`, { hint: 'start it with: pgsurge cluster start --listen 6543' });
      process.stdout.write(`${flags.tcp && c.listen ? tcpUrl(c.listen) : c.url()}\n`);
    });
}
