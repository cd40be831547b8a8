import type { Command } from 'commander';
import { defaultDataDir } from '../cluster/default-home.js';
import type { FilesystemInfo } from '../cluster/filesystem-info.js';
import { moveWal, WAL_MOVE_FAILURE_POINTS, type WalMoveFailurePoint } from '../cluster/wal-move.js';
import { walWhereForDataDir, walWhereForServer, type WalWhere } from '../cluster/wal-where.js';
import { connectionFailure } from '../core/load-error.js';
import { connect } from '../cluster/target.js';
import { resolveConnection } from '../core/connection-settings.js';
import { formatBytes } from '../core/format-count.js';

interface WalFlags {
  dataDir: string;
  pgBin?: string;
  user?: string;
}

/** Read only by the tests: `PGSURGE_TEST_INJECT_FAILURE=wal-move:copy|start` makes that step of `wal move` fail. */
export function injectedWalMoveFailure(env: NodeJS.ProcessEnv = process.env): WalMoveFailurePoint | undefined {
  const m = /^wal-move:(\w+)$/.exec(env.PGSURGE_TEST_INJECT_FAILURE ?? '');
  return m && (WAL_MOVE_FAILURE_POINTS as readonly string[]).includes(m[1]!) ? (m[1] as WalMoveFailurePoint) : undefined;
}

export function registerWalCommands(program: Command): void {
  const wal = program.command('wal').description('where the WAL lives, and moving it to its own disk');

  wal
    .command('move')
    .description('move a local cluster\'s WAL (pg_wal) to another directory, leaving a symlink; checked, and rolled back on any failure')
    .requiredOption('--to <path>', 'the new WAL directory: new, or empty; ideally on another disk than the data directory')
    .option('--data-dir <dir>', 'data directory of the cluster (PostgreSQL 10 or later)', defaultDataDir(process.env))
    .option('--restart', 'if the server runs: stop it cleanly, move, start it again (without it, a running server is refused)')
    .option('--pg-bin <which>', 'server binaries: embedded, system, or a bin directory (default: the ones whose version matches PG_VERSION)')
    .option('--user <name>', 'database user for the check after the move (default: postgres, then the data directory\'s owner)')
    .addHelpText(
      'after',
      `
Steps: stop (with --restart) → copy pg_wal to --to and fsync it → swap in a symlink (temp
name renamed over pg_wal) → start → write a row and CHECKPOINT, check the segment written is
in --to → stop again if it was stopped. Any failure puts the old pg_wal back (with whatever
WAL the server wrote meanwhile) and the server as it was. The server's account must own
--to (pgsurge makes it 0700, owned by the data directory's owner).`,
    )
    .action(async (flags: WalFlags & { to: string; restart?: boolean }) => {
      const r = await moveWal({
        dataDir: flags.dataDir,
        to: flags.to,
        pgBin: flags.pgBin,
        restart: flags.restart === true,
        user: flags.user,
        log: (line) => process.stderr.write(`pgsurge: ${line}\n`),
        injectFailure: injectedWalMoveFailure(),
        env: process.env,
      });
      process.stdout.write(
        `moved the WAL of ${r.dataDir}: ${r.from} → ${r.to} (${r.files} files, ${formatBytes(r.bytes)}, ${r.seconds.toFixed(1)} s)\n` +
          `pg_wal is now a symlink to ${r.to}; checked: a write and a CHECKPOINT went to ${r.checkedSegment}\n` +
          `the server is ${r.wasRunning ? 'running again' : 'stopped, as it was'}\n` +
          (r.sameFilesystem ? `note: ${r.to} is on the same filesystem as the data directory, so this gains nothing\n` : ''),
      );
    });

  wal
    .command('where')
    .description('where the WAL lives (device, filesystem, size), whether that differs from the data directory, and the WAL settings')
    .option('--db <url>', 'ask a server (what is on disk shows only when its data directory is on this machine)')
    .option('--data-dir <dir>', 'a local data directory', defaultDataDir(process.env))
    .option('--pg-bin <which>', 'server binaries, to read the settings of a stopped cluster (default: matching PG_VERSION)')
    .option('--user <name>', 'database user when asking a local running server (default: postgres, then the owner)')
    .action(async (flags: WalFlags & { db?: string }) => {
      let where: WalWhere;
      if (flags.db !== undefined) {
        const server = resolveConnection(flags.db, process.env);
        const client = await connect(server.config).catch((e: unknown) => {
          throw connectionFailure(e, server.description);
        });
        try {
          where = await walWhereForServer(client);
        } finally {
          await client.end();
        }
      } else {
        where = await walWhereForDataDir(flags.dataDir, { pgBin: flags.pgBin, user: flags.user, env: process.env });
      }
      process.stdout.write(`${formatWalWhere(where)}\n`);
    });
}

function describeFs(f: FilesystemInfo | undefined): string {
  if (f === undefined) return 'unknown';
  const space = f.totalBytes !== undefined && f.freeBytes !== undefined ? `, ${formatBytes(f.freeBytes)} free of ${formatBytes(f.totalBytes)}` : '';
  return `${f.device ?? '?'} (${f.fsType ?? '?'}) mounted on ${f.mountPoint ?? '?'}${space}`;
}

export function formatWalWhere(w: WalWhere): string {
  const lines: string[] = [];
  lines.push(`data directory: ${w.dataDir ?? 'not known'}`);
  if (w.dataFilesystem) lines.push(`  on ${describeFs(w.dataFilesystem)}`);
  if (w.walDir !== undefined) {
    lines.push(`WAL directory:  ${w.walDir}${w.walIsSymlink ? ' (pg_wal is a symlink to it)' : ' (pg_wal inside the data directory)'}`);
    lines.push(`  on ${describeFs(w.walFilesystem)}`);
    lines.push(
      w.separate
        ? 'WAL and data are on different filesystems'
        : 'WAL and data are on the same filesystem: they share the disk(s), so WAL writes compete with data writes',
    );
  } else lines.push('WAL directory:  not visible from here');
  if (w.walBytes !== undefined) lines.push(`WAL size: ${formatBytes(w.walBytes)} in ${w.walFiles ?? '?'} files`);
  const settings = Object.entries(w.settings);
  lines.push(settings.length > 0 ? `settings (from ${w.settingsSource}): ${settings.map(([k, v]) => `${k}=${v}`).join(' ')}` : 'settings: not read');
  for (const note of w.notes) lines.push(`note: ${note}`);
  return lines.join('\n');
}
