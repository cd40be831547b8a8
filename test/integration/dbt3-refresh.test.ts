import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { kitRefresh } from '../../bench/lib/kit-refresh.js';
import { startCli, sleep } from '../helpers/cli-process.js';
import { closeTestSchema, digest, forgetLoads, freshSchema, openTestSchema, runCli, tableRecords, testClient, testUrl } from '../helpers/test-db.js';

/** pgsurge's refresh runs in one schema, the kit's (psql) in the other, on the same loaded data. */
const OURS = 'it_refresh_pgsurge';
const KIT = 'it_refresh_kit';
let client: pg.Client;
let dir: string;

async function lines(file: string): Promise<string[]> {
  return (await fs.readFile(path.join(dir, file), 'latin1')).split('\n').filter((l) => l !== '');
}

async function state(schema: string): Promise<{ orders: number; lineitem: number; ordersDigest: string; lineitemDigest: string }> {
  const o = await tableRecords(client, `${schema}.orders`);
  const l = await tableRecords(client, `${schema}.lineitem`);
  return { orders: o.length, lineitem: l.length, ordersDigest: digest(o), lineitemDigest: digest(l) };
}

async function ordersOid(schema: string): Promise<number> {
  return Number((await client.query(`SELECT '${schema}.orders'::regclass::oid AS oid`)).rows[0].oid);
}

async function refresh(set: number): Promise<{ total: { read: number; loaded: number; rejected: number; skipped: number }; refresh: { rf1: { rows: number }; rf2: { keys: number; orders: number; lineitem: number; earlier: boolean } } }> {
  const r = await runCli(['dbt3', 'refresh', dir, '--set', String(set), '--db', testUrl(), '--schema', OURS, '-w', '2', '--chunk-size', '1KB', '--json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!);
}

before(async () => {
  ({ client, dir } = await openTestSchema(OURS, 'pgsurge-it-refresh-'));
  await freshSchema(client, KIT);
  const gen = await runCli(['dbt3', 'gen', '--scale', '0.01', '--refresh', '3', '--out', dir]);
  assert.equal(gen.code, 0, gen.stderr);
  for (const schema of [OURS, KIT]) {
    const r = await runCli(['dbt3', 'load', dir, '--db', testUrl(), '--schema', schema, '-w', '2', '--json']);
    assert.equal(r.code, 0, r.stderr);
  }
});
after(async () => {
  const oid = await ordersOid(OURS);
  await forgetLoads(client, [1, 2, 3].flatMap((k) => [`dbt3-refresh-${k}-${oid}-rf1-orders`, `dbt3-refresh-${k}-${oid}-rf1-lineitem`, `dbt3-refresh-${k}-${oid}-rf2`]));
  await client.query(`DROP SCHEMA "${KIT}" CASCADE`);
  await closeTestSchema(OURS, client, dir);
});

describe('pgsurge dbt3 refresh', () => {
  it('RF1 and RF2 of sets 1 and 2 leave orders and lineitem as the kit\'s way with psql does, by count and digest', async () => {
    assert.deepEqual(await state(OURS), await state(KIT), 'the same load to start from');
    for (const set of [1, 2]) {
      const newOrders = await lines(`orders.tbl.u${set}`);
      const newLines = await lines(`lineitem.tbl.u${set}`);
      const keys = (await lines(`delete.${set}`)).map((l) => l.replace(/\|$/, ''));
      const linesOfDeleted = Number((await client.query(`SELECT count(*) AS n FROM ${OURS}.lineitem WHERE l_orderkey = ANY($1::bigint[])`, [keys])).rows[0].n);
      const before = await state(OURS);

      const ours = await refresh(set);
      kitRefresh(testUrl(), dir, set, KIT);

      assert.equal(ours.total.read, ours.total.loaded + ours.total.rejected + ours.total.skipped, 'rows read = loaded + rejected + skipped');
      assert.equal(ours.refresh.rf1.rows, newOrders.length + newLines.length);
      assert.equal(ours.total.rejected, 0);
      assert.deepEqual(ours.refresh.rf2, { ...ours.refresh.rf2, keys: keys.length, orders: keys.length, lineitem: linesOfDeleted, earlier: false });
      const after = await state(OURS);
      assert.equal(after.orders, before.orders + newOrders.length - keys.length, `orders after set ${set}`);
      assert.equal(after.lineitem, before.lineitem + newLines.length - linesOfDeleted, `lineitem after set ${set}`);
      assert.deepEqual(after, await state(KIT), `set ${set}: pgsurge's refresh equals the kit's`);
    }
  });

  it('runs a set once: run again, it loads and deletes nothing and says so', async () => {
    const before = await state(OURS);
    const again = await refresh(1);
    assert.equal(again.refresh.rf1.rows, 0);
    assert.equal(again.total.read, again.total.loaded + again.total.rejected + again.total.skipped);
    assert.equal(again.refresh.rf2.earlier, true);
    assert.equal(again.refresh.rf2.orders, 0);
    assert.deepEqual(await state(OURS), before);
    const text = await runCli(['dbt3', 'refresh', dir, '--set', '1', '--db', testUrl(), '--schema', OURS, '-q']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^refresh set 1: RF1 nothing to load .*; RF2 nothing to delete .*\n$/);
  });

  it('killed (kill -9) after RF1 and run again, deletes once and ends as the kit\'s way does', async () => {
    const before = await state(OURS);
    const rf2Id = `dbt3-refresh-3-${await ordersOid(OURS)}-rf2`;
    const waiting = `SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a USING (pid)
                      WHERE l.locktype = 'advisory' AND NOT l.granted AND a.datname = current_database() AND a.query LIKE '%pg_advisory_xact_lock%'`;
    // RF2 takes the set's lock first: held here, RF2 waits after RF1 has committed
    const holder = await testClient();
    try {
      await holder.query('SELECT pg_advisory_lock(hashtext($1))', [rf2Id]);
      const cli = startCli(['dbt3', 'refresh', dir, '--set', '3', '--db', testUrl(), '--schema', OURS, '-q']);
      for (let i = 0; (await client.query(waiting)).rowCount === 0; i++) {
        if (i > 1200) throw new Error(`RF2 never waited for the lock: ${cli.stderr()}`);
        await sleep(50);
      }
      cli.child.kill('SIGKILL');
      await cli.exited;
      await client.query(`SELECT pg_terminate_backend(pid) FROM (${waiting}) w`);
    } finally {
      await holder.end();
    }
    const newLines = (await lines('lineitem.tbl.u3')).length;
    const mid = await state(OURS);
    assert.equal(mid.orders, before.orders + 10, 'RF1 committed its orders');
    assert.equal(mid.lineitem, before.lineitem + newLines, 'and its lineitems; RF2 deleted nothing');

    const again = await refresh(3);
    assert.equal(again.refresh.rf1.rows, 0, 'RF1 is not loaded twice');
    assert.deepEqual([again.refresh.rf2.earlier, again.refresh.rf2.orders], [false, 10]);
    kitRefresh(testUrl(), dir, 3, KIT);
    assert.deepEqual(await state(OURS), await state(KIT));
  });

  it('stops with one clear line when a set\'s file is missing', async () => {
    const r = await runCli(['dbt3', 'refresh', dir, '--set', '4', '--db', testUrl(), '--schema', OURS]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /orders\.tbl\.u4 is missing/);
    assert.match(r.stderr, /--refresh/);
  });
});
