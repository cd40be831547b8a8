import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createTableSql } from '../../src/datasets/table-ddl.js';

/** The Citus coordinator the test runner started (its Citus phase); Citus tests need it. */
export function citusUrl(): string {
  const url = process.env.PGSURGE_TEST_CITUS_URL;
  if (!url) throw new Error('PGSURGE_TEST_CITUS_URL is not set: run the Citus tests with `node dist/test/run-tests.js --citus --only citus`, which starts a coordinator and two workers');
  return url;
}

export async function citusClient(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: citusUrl() });
  await client.connect();
  return client;
}

/** A fresh schema on the cluster (Citus propagates it to the workers). */
export async function freshCitusSchema(client: pg.Client, name: string): Promise<void> {
  await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
  await client.query(`CREATE SCHEMA "${name}"`);
}

/** The worker nodes as the coordinator knows them: socket directory and port. */
export async function workerNodes(client: pg.Client): Promise<{ host: string; port: number }[]> {
  const r = await client.query<{ nodename: string; nodeport: number }>("SELECT nodename, nodeport FROM pg_dist_node WHERE groupid <> 0 AND noderole = 'primary' ORDER BY nodeid");
  return r.rows.map((row) => ({ host: row.nodename, port: row.nodeport }));
}

/** The usual setup of a Citus test file: a client on the coordinator, a fresh schema, a temp folder. */
export async function openCitusSchema(schema: string, tmpPrefix: string): Promise<{ client: pg.Client; dir: string }> {
  const client = await citusClient();
  await freshCitusSchema(client, schema);
  return { client, dir: await mkdtemp(path.join(os.tmpdir(), tmpPrefix)) };
}

/** Undoes `openCitusSchema`. */
export async function closeCitusSchema(schema: string, client: pg.Client, dir: string): Promise<void> {
  await client.query(`DROP SCHEMA "${schema}" CASCADE`).catch(() => undefined);
  await client.end();
  await rm(dir, { recursive: true, force: true });
}

/** A lineitem-shaped table Citus holds: hash-distributed by l_orderkey in 8 shards, or a reference table on every node. */
export async function citusLineitem(client: pg.Client, schema: string, name: string, kind: 'distributed' | 'reference'): Promise<void> {
  await client.query(`DROP TABLE IF EXISTS ${schema}.${name}`);
  await client.query(createTableSql('lineitem', schema)!.replace(/\blineitem\b/, name));
  if (kind === 'distributed') await client.query(`SELECT create_distributed_table('${schema}.${name}', 'l_orderkey', shard_count => 8)`);
  else await client.query(`SELECT create_reference_table('${schema}.${name}')`);
}
