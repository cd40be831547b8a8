import type { Command } from 'commander';
import { connect } from '../cluster/target.js';
import { openTarget } from './open-target.js';
import { connectionFailure, LoadError } from '../core/load-error.js';
import { loadStatus, type PartStatus } from '../load/load-status.js';
import { formatCount } from '../core/format-count.js';
import { addTargetOptions, type TargetFlags } from './common-options.js';
import { EXIT } from './errors.js';
import { parseLoadId } from './parse-options.js';
import { formatBytes } from '../core/format-count.js';

interface StatusFlags extends TargetFlags {
  json?: boolean;
}

export function registerStatusCommand(program: Command): void {
  const cmd = program
    .command('status')
    .description('a load\'s progress from its ledger: every part of a split load (--part K/N), with its rows, the input bytes its committed chunks cover, its last commit, and whether it is running now')
    .argument('<load-id>', 'the load id (printed when a load starts and in its summary)', parseLoadId)
    .option('--json', 'one JSON object on stdout instead of the table');
  addTargetOptions(cmd);
  cmd.addHelpText(
    'after',
    `
Examples:
  pgsurge status lineitem-3f2a9c01de --db postgresql://me@coordinator/dbt3
  pgsurge status li-sf100 --json`,
  );
  cmd.action(async (loadId: string, flags: StatusFlags) => {
    const target = await openTarget(flags);
    try {
      const client = await connect(target.config, 'pgsurge status').catch((error: unknown) => {
        throw connectionFailure(error, target.description);
      });
      let parts: PartStatus[] | undefined;
      try {
        parts = await loadStatus(client, loadId);
      } finally {
        await client.end().catch(() => undefined);
      }
      if (parts === undefined) {
        throw new LoadError('bad-option', `there is no load with id ${loadId} in the ledger of ${target.description}`, { hint: 'check the id and --db (the ledger is in the database the load went into)' });
      }
      if (flags.json) process.stdout.write(`${JSON.stringify({ loadId, parts })}\n`);
      else process.stdout.write(formatStatus(loadId, parts));
      process.exitCode = EXIT.ok;
    } finally {
      await target.release();
    }
  });
}

/** The status as a table, one line per part. */
export function formatStatus(loadId: string, parts: readonly PartStatus[]): string {
  const running = parts.filter((p) => p.state === 'running').length;
  const state = running > 0 ? 'running' : parts.every((p) => p.state === 'completed') ? 'completed' : 'stopped';
  const head = `load ${loadId}: ${state}, ${parts.length} part${parts.length === 1 ? '' : 's'}, ${running} running\n`;
  const rows = parts.map((p) => {
    const done = p.bytesTotal === undefined ? formatBytes(p.bytesDone) : `${formatBytes(p.bytesDone)} of ${formatBytes(p.bytesTotal)} (${p.bytesTotal === 0 ? 100 : Math.floor((100 * p.bytesDone) / p.bytesTotal)}%)`;
    return [p.part ?? 'whole', p.state, formatCount(p.rowsLoaded), formatCount(p.rowsRejected), String(p.chunks), done, p.lastCommit ? p.lastCommit.toISOString() : '-'];
  });
  const table = [['part', 'state', 'rows', 'rejected', 'chunks', 'input done', 'last commit'], ...rows];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  return head + table.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n') + '\n';
}
