import { redactUrl } from '../cluster/target.js';

/** Flags whose value follows them, so dropping one drops its value too. */
const DROP_WITH_VALUE = new Set(['--load-id']);
const DROP = new Set(['--truncate', '--replace', '--resume', '--again']);

/**
 * The command that resumes a stopped load: the same command line, without `--truncate`
 * or `--replace` (they would empty the tables) or `--again` (it would start another load), plus `--resume` and `--load-id <id>` when
 * the load has one id (a dbt3 load's per-table ids come from its files); a password in
 * `--db` is masked (give it again, or use PGPASSWORD).
 */
export function resumeCommand(argv: readonly string[], loadId?: string): string {
  const out = sameCommand(argv);
  out.push('--resume');
  if (loadId !== undefined) out.push('--load-id', loadId);
  return out.map(shellQuote).join(' ');
}

/**
 * The command that loads a fixed input again from the start, exactly: the same command
 * line with `--truncate` (what earlier runs committed goes with the table's rows).
 */
export function startOverCommand(argv: readonly string[]): string {
  const out = sameCommand(argv);
  out.push('--truncate');
  return out.map(shellQuote).join(' ');
}

/**
 * The command that runs one part of a split load (`--part K/N`) again after it stopped
 * before loading: the same command line as given (its `--part`, `--load-id` and all), a
 * password in `--db` masked.
 */
export function rerunCommand(argv: readonly string[]): string {
  return sameCommand(argv, false).map(shellQuote).join(' ');
}

/** The command line without `--truncate`, `--resume` and `--load-id` (unless `drop` is false), its password masked. */
function sameCommand(argv: readonly string[], drop = true): string[] {
  const out: string[] = ['pgsurge'];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const [flag, inline] = a.startsWith('--') && a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    if (drop && DROP.has(flag)) continue;
    if (drop && DROP_WITH_VALUE.has(flag)) {
      if (inline === undefined) i++;
      continue;
    }
    if (flag === '--db') {
      if (inline !== undefined) out.push(`--db=${redactUrl(inline)}`);
      else {
        out.push('--db');
        if (i + 1 < argv.length) out.push(redactUrl(argv[++i]!));
      }
      continue;
    }
    out.push(a);
  }
  return out;
}

export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
