import type { Command } from 'commander';

/**
 * `pgsurge <command> --help` ends with examples. Commands whose own file already prints
 * an `Examples:` block (load, compare, decay, dbt3 gen, dbt3 load, dbt3 refresh) are not listed; a new command adds
 * its line here (or its own block), and test/unit/cli/help.test.ts checks that every command has one.
 */
export const HELP_EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  'dbt3': ['pgsurge dbt3 gen --scale 1 --out data/sf1 && pgsurge dbt3 load data/sf1'],
  'gen': ['pgsurge gen narrow --rows 10_000_000 --keys random --out narrow.txt'],
  'gen narrow': [
    'pgsurge gen narrow --rows 10_000_000 --keys random --out narrow.txt',
    'pgsurge gen narrow --rows 1e6 --format tbl --out - | pgsurge load - -t narrow -f tbl --create',
  ],
  'schema': ['pgsurge schema trips.parquet', 'pgsurge schema sales.csv --sample all > sales.sql', 'pgsurge schema export.json --json-path data.items --json'],
  'cluster': ['pgsurge cluster start && psql "$(pgsurge cluster url)"'],
  'cluster start': [
    'pgsurge cluster start',
    'pgsurge cluster start --wal-dir /mnt/fastdisk/pgsurge-wal',
    'pgsurge cluster start --pg-bin system --data-dir /var/lib/pgsurge/pg15',
    'pgsurge cluster start --listen 6543                # also on TCP, 127.0.0.1:6543, password only',
  ],
  'cluster stop': ['pgsurge cluster stop'],
  'cluster status': ['pgsurge cluster status || pgsurge cluster start'],
  'cluster url': ['psql "$(pgsurge cluster url)" -c "SELECT version()"', 'psql "$(pgsurge cluster url --tcp)" -c "SELECT inet_server_port()"   # over TCP, with the password'],
  'wal': ['pgsurge wal where', 'pgsurge wal move --to /mnt/wal/pgsurge --restart'],
  'wal move': ['pgsurge wal move --to /mnt/wal/pgsurge --restart', 'pgsurge wal move --data-dir /var/lib/postgresql/15/main --to /mnt/wal/15 --restart --pg-bin system'],
  'wal where': ['pgsurge wal where', 'pgsurge wal where --db postgresql://me@db1/prod', 'pgsurge wal where --data-dir /var/lib/postgresql/15/main'],
  'report': ['pgsurge report copy.json insert.json -o both.html --title "COPY against INSERT"', 'pgsurge report run.json -o run.csv'],
  'demo': ['pgsurge demo', 'pgsurge demo --scale 0.1 --keep-running && psql "$(pgsurge cluster url)"', 'pgsurge demo --db postgresql://me@db1/scratch'],
  'completion': ['source <(pgsurge completion bash)        # in ~/.bashrc', 'pgsurge completion zsh > "${fpath[1]}/_pgsurge"'],
};

/** The command's path below the program: `dbt3 load`. */
export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** Adds the examples above to every command that has some. */
export function addHelpExamples(program: Command): void {
  const walk = (cmd: Command): void => {
    for (const sub of cmd.commands) {
      const examples = HELP_EXAMPLES[commandPath(sub)];
      if (examples !== undefined) sub.addHelpText('after', `\nExamples:\n${examples.map((e) => `  ${e}`).join('\n')}`);
      walk(sub);
    }
  };
  walk(program);
}
