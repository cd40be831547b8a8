import { formatBytes } from '../core/format-count.js';
import { Option, type Command } from 'commander';
import { defaultDataDir } from '../cluster/default-home.js';
import { DURABILITY_PRESETS, type DurabilityPreset } from '../writer/durability/presets.js';
import { DEFAULT_RETRY_FOR_MS } from '../core/retry.js';
import { DEFAULT_MAX_REJECTS } from '../writer/rejects/reject-budget.js';
import { FORMATS } from '../input/formats.js';
import { DEFAULT_CHUNK_BYTES, defaultWorkers, parseDuration, parseDurability, parseChunkSize, parseFormat, parseSize, parseWholeNumber } from './parse-options.js';

/** Options that name the server: shared by every command that talks to one. */
export interface TargetFlags {
  db?: string;
  dataDir: string;
  pgBin: string;
}

/** `-f, --format`: an input format, inferred from the file extension when absent. */
export function formatOption(): Option {
  return new Option('-f, --format <format>', `input format: ${FORMATS.join(', ')} (default: from the file extension)`).argParser(parseFormat);
}

export function addTargetOptions(cmd: Command): Command {
  return cmd
    .option('--db <url>', 'server to load into, as psql takes it: a URL (postgresql://user@host:port/db) or key=value pairs (host=… dbname=…, service=…), completed from the service file, PG* variables and ~/.pgpass; default: the PG* variables if they name a server, else the managed cluster')
    .option('--data-dir <dir>', 'data directory of the managed cluster', defaultDataDir(process.env))
    .option('--pg-bin <which>', 'server binaries for the managed cluster: embedded (from npm), system (this machine\'s PostgreSQL), or a bin directory', 'embedded');
}

export interface LoadFlags extends TargetFlags {
  workers: number;
  chunkSize: number;
  quiet?: boolean;
  verbose?: boolean;
  durability: DurabilityPreset;
  unlogged?: boolean;
  maxRejects: number;
  retryFor: number;
  rejectDir?: string;
}

export function addLoadOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option('-w, --workers <n>', 'parallel connections, each loading one chunk at a time')
        .default(defaultWorkers(), 'the number of CPUs')
        .argParser((v) => parseWholeNumber('--workers', v)),
    )
    .addOption(
      new Option('--chunk-size <bytes>', 'bytes per chunk (one transaction each); accepts 64KB, 16MB')
        .default(DEFAULT_CHUNK_BYTES, formatBytes(DEFAULT_CHUNK_BYTES))
        .argParser((v) => parseChunkSize('--chunk-size', v)),
    )
    .addOption(
      new Option(
        '--durability <preset>',
        `${DURABILITY_PRESETS.join('|')}: safe leaves the server alone; fast turns synchronous_commit off for the load's sessions and, with -w 1, COPY FREEZE on a table's first chunk (no corruption; the last commits can be lost); unsafe (managed cluster only) restarts it with fsync=off, full_page_writes=off, wal_level=minimal for the load (a crash can corrupt the cluster)`,
      )
        .default('safe')
        .argParser(parseDurability),
    )
    .option('--unlogged', 'load into an unlogged table and SET LOGGED at the end (timed in the summary); a crash before then empties the table')
    .addOption(
      new Option('--max-rejects <n>', 'rows the load may reject (to the reject file) before it stops; 0: stop at the first bad row')
        .default(DEFAULT_MAX_REJECTS, `${DEFAULT_MAX_REJECTS}: stray bad rows never stop a big load, an input wrong through and through stops in seconds`)
        .argParser((v) => parseWholeNumber('--max-rejects', v, 0)),
    )
    .option('--reject-dir <dir>', 'folder for the reject files (<table>.<load id>.rejects and its .log); default: beside the input, or here for stdin')
    .addOption(
      new Option('--retry-for <duration>', 'keep retrying chunks whose connection or server went away this long (30s, 2m), then stop with the resume command')
        .default(DEFAULT_RETRY_FOR_MS, '30s')
        .argParser((v) => parseDuration('--retry-for', v)),
    )
    .option('-q, --quiet', 'print only the summary')
    .option('--verbose', 'print stack traces with errors');
}
