import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { citusLineitem, citusUrl, closeCitusSchema, openCitusSchema, workerNodes } from '../helpers/citus-db.js';
import { lineitemFields, tableRecord, tblLine } from '../helpers/lineitem-data.js';
import { digest, runCli, tableRecords } from '../helpers/test-db.js';

/**
 * The documented way to spread one load over several hosts — the same command with
 * `--part 1/N` … `N/N` started at once — against a Citus cluster that has no ledger yet:
 * every part finds or creates the ledger (schema `pgsurge` on the coordinator and its
 * copy on the workers, `routed_files`, each node's `node_parts`) without tripping over
 * the others, and the table ends equal to the input. Repeated, since a race shows only
 * some of the time.
 */
const SCHEMA = 'ct_parts_at_once';
const PARTS = 4;
const TRIALS = 5;
let client: pg.Client;
let dir: string;

before(async () => {
  ({ client, dir } = await openCitusSchema(SCHEMA, 'pgsurge-ct-parts-at-once-'));
});
after(async () => {
  await dropLedgers();
  await closeCitusSchema(SCHEMA, client, dir);
});

/** No ledger anywhere: schema pgsurge dropped on the coordinator (Citus drops it on the workers) and checked gone on each worker. */
async function dropLedgers(): Promise<void> {
  await client.query('DROP SCHEMA IF EXISTS pgsurge CASCADE');
  for (const w of await workerNodes(client)) {
    const node = new pg.Client({ host: w.host, port: w.port, user: 'postgres', database: 'postgres' });
    await node.connect();
    try {
      await node.query('DROP SCHEMA IF EXISTS pgsurge CASCADE');
      const left = await node.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = 'pgsurge'");
      assert.equal(left.rows[0]!.n, 0, `worker ${w.host}:${w.port} still has schema pgsurge`);
    } finally {
      await node.end();
    }
  }
}

describe('--part K/N started at once on Citus with no ledger yet', () => {
  it(`${PARTS} parts at once, ${TRIALS} times, each on a cluster without a ledger: every part exits 0 and the distributed table equals the input`, async () => {
    const fields = lineitemFields(4000);
    const file = path.join(dir, 'at-once.tbl');
    await fs.writeFile(file, Buffer.concat(fields.map(tblLine)));
    const expected = digest(fields.map(tableRecord));
    for (let trial = 1; trial <= TRIALS; trial++) {
      await dropLedgers();
      await citusLineitem(client, SCHEMA, 'at_once', 'distributed');
      const loadId = `ct-at-once-${trial}`;
      const runs = await Promise.all(
        Array.from({ length: PARTS }, (_, i) =>
          runCli(['load', file, '-t', 'at_once', '--part', `${i + 1}/${PARTS}`, '--load-id', loadId, '-w', '2', '--chunk-size', '16KB', '--citus-route', 'auto', '--db', citusUrl(), '--schema', SCHEMA]),
        ),
      );
      runs.forEach((r, i) => assert.equal(r.code, 0, `trial ${trial}, part ${i + 1}/${PARTS}: exit ${r.code}\n${r.stderr}`));
      // Routed by pgsurge, not through the coordinator: the race is on the routed load's ledger.
      for (const r of runs) assert.match(r.stderr, /rows routed to the shards by pgsurge/);
      const count = (await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${SCHEMA}.at_once`)).rows[0]!.n;
      assert.deepEqual({ trial, count, digest: digest(await tableRecords(client, `${SCHEMA}.at_once`)) }, { trial, count: fields.length, digest: expected });
    }
  });
});
