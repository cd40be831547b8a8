import { Command, CommanderError } from 'commander';
import { registerClusterCommands } from './cluster-commands.js';
import { registerCompareCommand } from './compare-command.js';
import { registerDbt3Commands } from './dbt3-commands.js';
import { EXIT, printError } from './errors.js';
import { registerLoadCommand } from './load-command.js';

export function buildProgram(): Command {
  const program = new Command('pgsurge')
    .description('Bulk loader for PostgreSQL: parallel COPY of DBT-3 .tbl, CSV and text files, with throughput measured as tables grow')
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText(
      'after',
      `
Exit codes: 0 everything loaded, 1 the command failed (the message says why), 2 bad command line.
Target: --db <url>, else the PG* environment variables, else a managed cluster pgsurge starts itself.`,
    );
  registerLoadCommand(program);
  registerDbt3Commands(program);
  registerCompareCommand(program);
  registerClusterCommands(program);
  program.exitOverride();
  for (const cmd of program.commands) cmd.exitOverride();
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
