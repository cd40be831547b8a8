import { Option, type Command } from 'commander';
import { DEFAULT_DATA_DIR } from '../cluster/managed-cluster.js';
import { DEFAULT_CHUNK_BYTES, defaultWorkers, formatBytes, parseSize, parseWholeNumber } from './parse-options.js';

/** Options that name the server: shared by every command that talks to one. */
export interface TargetFlags {
  db?: string;
  dataDir: string;
  pgBin: string;
}

export function addTargetOptions(cmd: Command): Command {
  return cmd
    .option('--db <url>', 'server to load into (postgresql://user@host:port/db); default: the PG* environment variables if any is set, else the managed cluster')
    .option('--data-dir <dir>', 'data directory of the managed cluster', DEFAULT_DATA_DIR)
    .option('--pg-bin <which>', 'server binaries for the managed cluster: embedded (from npm), system (this machine\'s PostgreSQL), or a bin directory', 'embedded');
}

export interface LoadFlags extends TargetFlags {
  workers: number;
  chunkSize: number;
  quiet?: boolean;
  verbose?: boolean;
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
        .argParser((v) => parseSize('--chunk-size', v)),
    )
    .option('-q, --quiet', 'print only the summary')
    .option('--verbose', 'print stack traces with errors');
}
