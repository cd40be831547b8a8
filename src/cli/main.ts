import { Command, CommanderError } from 'commander';
import { registerClusterCommands } from './cluster-commands.js';
import { registerCompareCommand } from './compare-command.js';
import { registerCompletionCommand } from './completion-command.js';
import { registerDbt3Commands } from './dbt3-commands.js';
import { registerDecayCommand } from './decay-command.js';
import { registerDemoCommand } from './demo-command.js';
import { registerGenCommands } from './gen-commands.js';
import { registerDbt3Refresh } from './dbt3-refresh-command.js';
import { EXIT, printError } from './errors.js';
import { addHelpExamples } from './help-examples.js';
import { registerLoadCommand } from './load-command.js';
import { registerProbeCommand } from './probe-command.js';
import { registerReportCommand } from './report-command.js';
import { registerSchemaCommand } from './schema-command.js';
import { registerStatusCommand } from './status-command.js';
import { registerWalCommands } from './wal-commands.js';

export function buildProgram(): Command {
  const program = new Command('pgsurge')
    .description('Bulk loader for PostgreSQL: parallel COPY of DBT-3 .tbl, CSV, text, JSON and Parquet files, with throughput measured as tables grow')
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText(
      'after',
      `
Exit codes: 0 everything loaded, 3 loaded with rejected rows (see the reject file), 1 the command failed
(the message says why; a stopped load prints its resume command), 2 bad command line, 130 interrupted.
Target: --db <url>, else the PG* environment variables, else a managed cluster pgsurge starts itself.`,
    );
  registerLoadCommand(program);
  registerSchemaCommand(program);
  const dbt3 = registerDbt3Commands(program);
  registerGenCommands(program, dbt3);
  registerDbt3Refresh(dbt3);
  registerCompareCommand(program);
  registerClusterCommands(program);
  registerWalCommands(program);
  registerDecayCommand(program);
  registerReportCommand(program);
  registerProbeCommand(program);
  registerStatusCommand(program);
  registerDemoCommand(program);
  registerCompletionCommand(program);
  addHelpExamples(program);
  const exitOverride = (cmd: Command): void => {
    cmd.exitOverride();
    cmd.commands.forEach(exitOverride);
  };
  exitOverride(program);
  return program;
}

/** Runs the command line and returns the exit code; the only place that prints errors. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = buildProgram();
  const verbose = argv.includes('--verbose');
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  });
  try {
    await program.parseAsync(argv as string[]);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return EXIT.ok;
      return EXIT.usage;
    }
    return printError(error, verbose);
  }
}
