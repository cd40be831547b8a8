import { runsFromCheckout } from '../cluster/default-home.js';
import { loadSettingsFromEnv } from './load-settings.js';
import { existsSync } from 'node:fs';
import { formatCount } from '../core/format-count.js';
import path from 'node:path';
import { Option, type Command } from 'commander';
import { defaultDataDir } from '../cluster/default-home.js';
import { DBT3_TABLES } from '../datasets/dbt3-schema.js';
import { generateDbt3 } from '../datasets/dbt3/generate.js';
import { createOnce } from '../core/create-once.js';
import { qualifiedName } from '../core/identifiers.js';
import { connect } from '../cluster/target.js';
import { openTarget } from './open-target.js';
import { loadDbt3 } from '../dbt3/dbt3-load.js';
import { progressMode, progressReporter } from '../report/progress-line.js';
import { defaultWorkers, parseWholeNumber } from './parse-options.js';
import { formatSummary, renderTable } from '../report/summary-format.js';

interface DemoFlags {
  scale: number;
  workers: number;
  dataDir: string;
  pgBin: string;
  db?: string;
  keepRunning?: boolean;
}

const DEMO_SCHEMA = 'pgsurge_demo';

/**
 * How to query the demo's tables later. From a checkout (a clone, `npm run build`) the
 * command is `npx pgsurge`: `pgsurge` alone is not on the PATH there.
 */
export function demoQueryHint(checkout: boolean): string {
  const me = checkout ? 'npx pgsurge' : 'pgsurge';
  return `to query it: ${me} cluster start && psql "$(${me} cluster url)" -c 'SELECT count(*) FROM ${DEMO_SCHEMA}.lineitem'`;
}

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('the quick start: start the managed PostgreSQL, generate a DBT-3 data set, load it as the DBT-3 kit does, print the summary and a row count per table')
    .addOption(
      new Option('--scale <sf>', 'DBT-3 scale factor of the data set (1 = about 1 GB)').default(0.05).argParser((v) => {
        const n = Number(v);
        if (!Number.isFinite(n) || n <= 0) throw new Error(`Expected \`--scale\` to be a number greater than 0, got \`${v}\``);
        return n;
      }),
    )
    .addOption(new Option('-w, --workers <n>', 'parallel connections').default(defaultWorkers(), 'the number of CPUs').argParser((v) => parseWholeNumber('--workers', v)))
    .option('--data-dir <dir>', 'data directory of the managed cluster', defaultDataDir(process.env))
    .option('--pg-bin <which>', 'server binaries: embedded (from npm), system (this machine\'s PostgreSQL), or a bin directory', 'embedded')
    .option('--db <url>', 'load into this server instead of the managed cluster (tables go to the pgsurge_demo schema)')
    .option('--keep-running', 'leave the managed cluster running afterwards, to query it with psql "$(pgsurge cluster url)"')
    .action(async (flags: DemoFlags) => {
      const dataDir = path.join(path.dirname(path.resolve(flags.dataDir)), `demo-sf${flags.scale}`);
      if (!existsSync(path.join(dataDir, 'lineitem.tbl'))) {
        process.stderr.write(`generating DBT-3 scale ${flags.scale} into ${dataDir} …\n`);
        await generateDbt3({ scale: flags.scale, outDir: dataDir });
      }
      // The demo ignores PG* variables: it is about the cluster pgsurge runs itself, unless --db says otherwise.
      const target = await openTarget({ ...flags, keepRunning: flags.keepRunning === true }, {});
      process.stderr.write(`loading into ${target.description}\n`);
      const progress = progressReporter({ mode: progressMode({}, process.stderr), stream: process.stderr, out: process.stdout });
      try {
        const client = await connect(target.config);
        await createOnce(client, `schema ${DEMO_SCHEMA}`, {
          missing: async (c) => (await c.query('SELECT to_regnamespace($1) IS NULL AS missing', [DEMO_SCHEMA])).rows[0]?.missing === true,
          create: async (c) => void (await c.query(`CREATE SCHEMA ${qualifiedName(DEMO_SCHEMA)}`)),
        });
        await client.end();
        const { summary, phases } = await loadDbt3(
          dataDir,
          { workers: flags.workers, chunkBytes: 8 << 20, ...loadSettingsFromEnv(), replace: true, keys: true, analyze: true, schema: DEMO_SCHEMA },
          target,
          progress,
        );
        progress.finish();
        const counts = await connect(target.config).then(async (c) => {
          try {
            const rows: string[][] = [];
            for (const t of DBT3_TABLES) {
              const r = await c.query<{ n: string }>(`SELECT count(*) AS n FROM ${qualifiedName(t, DEMO_SCHEMA)}`);
              rows.push([t, formatCount(Number(r.rows[0]?.n ?? 0))]);
            }
            return rows;
          } finally {
            await c.end();
          }
        });
        process.stdout.write(`${formatSummary(summary)}\n\n`);
        process.stdout.write(`${renderTable(['phase', 'seconds', 'statements'], phases.map((p) => [p.phase, p.seconds.toFixed(2), String(p.statements)]))}\n\n`);
        process.stdout.write(`rows now in the tables (schema ${DEMO_SCHEMA}):\n${renderTable(['table', 'rows'], counts)}\n`);
        if (target.managed) {
          process.stdout.write(
            flags.keepRunning
              ? `\nthe cluster is still running: psql "${target.managed.url()}"\n`
              : `\n${demoQueryHint(runsFromCheckout())}\n`,
          );
        }
      } finally {
        progress.finish();
        await target.release();
      }
    });
}
