import path from 'node:path';
import pg from 'pg';
import type { ManagedCluster } from '../../src/cluster/managed-cluster.js';
import { createTableSql } from '../../src/datasets/table-ddl.js';
import { generateDbt3, type Dbt3File } from '../../src/datasets/dbt3/generate.js';
import { stripTrailingPipe } from './tbl-strip.js';

/** What the lineitem benches share: the generated file, psql's stripped copy and halves, the started server, an admin connection. */
export interface LineitemBench {
  readonly lineitem: Dbt3File;
  readonly stripped: string;
  readonly halves: [string, string];
  readonly url: string;
  readonly admin: pg.Client;
  /** Empties the table and checkpoints, before each run. */
  reset(): Promise<void>;
  /** psql's arguments to `\copy` a stripped file into lineitem. */
  copyCmd(file: string): string[];
}

/** Generates lineitem.tbl at `scale` into `work`, starts `cluster` with `settings`, creates the table. */
export async function lineitemBench(cluster: ManagedCluster, work: string, scale: number, settings: Record<string, string> = {}): Promise<LineitemBench> {
  const { files } = await generateDbt3({ scale, outDir: work, tables: ['lineitem'] });
  const lineitem = files[0]!;
  console.log(`# input: lineitem.tbl at scale ${scale}: ${lineitem.rows.toLocaleString('en-US')} rows, ${(lineitem.bytes / 1e6).toFixed(0)} MB`);
  const stripped = path.join(work, 'lineitem.psql');
  const halves: [string, string] = [path.join(work, 'half1.psql'), path.join(work, 'half2.psql')];
  await stripTrailingPipe(lineitem.path, stripped, { files: halves, lines: lineitem.rows });

  await cluster.start(settings);
  const url = cluster.url();
  const admin = new pg.Client(cluster.connection());
  await admin.connect();
  admin.on('error', (e) => console.error(`bench: the admin connection failed: ${e.message}`));
  await admin.query(createTableSql('lineitem')!);
  return {
    lineitem,
    stripped,
    halves,
    url,
    admin,
    async reset() {
      await admin.query('TRUNCATE lineitem');
      await admin.query('CHECKPOINT');
    },
    copyCmd: (file) => [url, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-c', `\\copy lineitem from '${file}' with (delimiter '|')`],
  };
}
