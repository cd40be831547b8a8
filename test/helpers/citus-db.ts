import pg from 'pg';

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
