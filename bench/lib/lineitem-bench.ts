import path from 'node:path';
import pg from 'pg';
import type { ManagedCluster } from '../../src/cluster/managed-cluster.js';
import { createTableSql } from '../../src/datasets/table-ddl.js';
import { generateDbt3, type Dbt3File } from '../../src/datasets/dbt3/generate.js';
import { stripTrailingPipe } from './tbl-strip.js';
import { measureCpu } from './server-cpu.js';

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

/** One timed run: wall seconds, the server's and the client's CPU seconds (`measureCpu`). */
export interface CpuRun {
  readonly seconds: number;
  readonly serverCpu: number;
  readonly clientCpu: number;
}

/**
 * `n` interleaved rounds of `variants` (A B A B…), each run after `bench.reset()`, timed,
 * its CPU seconds measured and the table's row count checked against `expected`; `print`
 * shows each run as it ends.
 */
export async function cpuRounds(
  bench: Pick<LineitemBench, 'admin' | 'reset'>,
  postmaster: number,
  variants: Record<string, () => Promise<unknown>>,
  n: number,
  expected: number,
  print: (round: number, name: string, run: CpuRun) => void,
): Promise<Record<string, CpuRun[]>> {
  const runs: Record<string, CpuRun[]> = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  for (let round = 1; round <= n; round++) {
    for (const [name, fn] of Object.entries(variants)) {
      await bench.reset();
      const started = performance.now();
      const { serverCpu, clientCpu } = await measureCpu(postmaster, fn);
      const seconds = (performance.now() - started) / 1000;
      const count = Number((await bench.admin.query('SELECT count(*) AS n FROM lineitem')).rows[0].n);
      if (count !== expected) throw new Error(`${name} loaded ${count} rows, expected ${expected}`);
      const run = { seconds, serverCpu, clientCpu };
      runs[name]!.push(run);
      print(round, name, run);
    }
  }
  return runs;
}
