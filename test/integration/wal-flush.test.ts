/**
 * What the exactly-once loop counts on when a chunk's COMMIT did not wait for its flush:
 * that `flushWal` returns only once the WAL is on disk past that commit. A transaction
 * that only took an id committed without flushing (measured in a load: the flush position
 * was still before the held chunk's commit after "flushing"), so these tests commit the
 * way a chunk does, while another session keeps writing WAL (as the load's other work
 * does, so the walwriter is not idle and flushing everything at once), and check the
 * server's own flush position after the call.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { flushedPast, flushWal } from '../../src/writer/wal-flush.js';
import { sharedFlusher, WalFlusher } from '../../src/writer/wal-flusher.js';
import { freshSchema, testClient } from '../helpers/test-db.js';

const SCHEMA = 'wal_flush_test';

describe('flushing the WAL of commits that did not wait', () => {
  let client: pg.Client;
  let writer: pg.Client;
  let writing: Promise<void> | undefined;
  let stop = false;

  before(async () => {
    client = await testClient();
    writer = await testClient();
    await freshSchema(client, SCHEMA);
    await client.query(`CREATE TABLE ${SCHEMA}.t (n int, pad text)`);
    await client.query(`CREATE TABLE ${SCHEMA}.busy (n int, pad text)`);
    // WAL from elsewhere all along, in commits that do not wait either.
    await writer.query('SET synchronous_commit TO off');
    writing = (async () => {
      while (!stop) await writer.query(`INSERT INTO ${SCHEMA}.busy SELECT g, repeat('x', 200) FROM generate_series(1, 2000) g`);
    })();
  });

  after(async () => {
    stop = true;
    await writing;
    await writer.end();
    await client.query(`DROP SCHEMA ${SCHEMA} CASCADE`);
    await client.end();
  });

  /** Commits a row without waiting for the flush, as a chunk's deferred COMMIT does: the WAL position past its commit. */
  const commitWithoutWaiting = async (c: pg.Client): Promise<string> => {
    await c.query(`BEGIN; SET LOCAL synchronous_commit TO off; INSERT INTO ${SCHEMA}.t SELECT g, repeat('y', 100) FROM generate_series(1, 500) g; COMMIT`);
    return (await c.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0]!.lsn;
  };
  const flushedAt = async (c: pg.Client, lsn: string): Promise<boolean> =>
    (await c.query<{ done: boolean }>('SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn AS done', [lsn])).rows[0]!.done;

  it('flushWal returns with the WAL flushed past an earlier commit that did not wait, every time', async () => {
    for (let i = 0; i < 20; i++) {
      const lsn = await commitWithoutWaiting(client);
      await flushWal(client);
      assert.ok(await flushedAt(client, lsn), `round ${i + 1}: flushWal returned before the WAL was flushed to ${lsn}`);
    }
  });

  it('flushWal on another session flushes this one\'s commit too', async () => {
    const other = await testClient();
    try {
      for (let i = 0; i < 10; i++) {
        const lsn = await commitWithoutWaiting(client);
        await flushWal(other);
        assert.ok(await flushedAt(client, lsn), `round ${i + 1}`);
      }
    } finally {
      await other.end();
    }
  });

  it('flushedPast (where the message function is not allowed) waits until the server flushed that far', async () => {
    for (let i = 0; i < 5; i++) {
      const lsn = await commitWithoutWaiting(client);
      await flushedPast(client, lsn);
      assert.ok(await flushedAt(client, lsn), `round ${i + 1}`);
    }
    // A position the server will not reach soon: a clear error at the deadline, not a hang.
    await assert.rejects(flushedPast(client, 'FFFFFFFF/0', 200), /WAL flush did not reach FFFFFFFF\/0 within 200 ms/);
  });

  it('WalFlusher: after request(), the commit is flushed soon, on a session of its own; close() ends that session', async () => {
    let opened = 0;
    let session: pg.Client | undefined;
    const flusher = new WalFlusher(async () => {
      opened++;
      session = await testClient();
      await session.query("SET application_name TO 'pgsurge wal-flush-test f'");
      return session;
    });
    const lsn = await commitWithoutWaiting(client);
    flusher.request();
    flusher.request();
    for (let i = 0; i < 500 && flusher.flushes === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(flusher.flushes >= 1, 'the flusher flushed');
    assert.ok(await flushedAt(client, lsn), 'past the commit');
    await flusher.close();
    assert.equal(opened, 1, 'one session for all the requests');
    assert.ok(flusher.flushes >= 1 && flusher.flushes <= 2, `requests while one flush runs fold into one more (${flusher.flushes})`);
    const left = await client.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'pgsurge wal-flush-test f'");
    assert.equal(left.rows[0].n, 0, 'its session ended');
    flusher.request();
    assert.equal(opened, 1, 'closed: requests do nothing');
  });

  it('flushWal refuses to run inside a transaction (its COMMIT would commit the caller\'s work)', async () => {
    await client.query('BEGIN');
    try {
      await assert.rejects(flushWal(client), /flushWal called inside a transaction/);
    } finally {
      await client.query('ROLLBACK');
    }
  });

  it('sharedFlusher: loads of one process on one server share a flusher; the last release closes it', async () => {
    let opened = 0;
    const connect = async (): Promise<pg.Client> => {
      opened++;
      return testClient();
    };
    const a = sharedFlusher('wal-flush-test', connect);
    const b = sharedFlusher('wal-flush-test', connect);
    assert.equal(a.flusher, b.flusher);
    const lsn = await commitWithoutWaiting(client);
    a.flusher.request();
    for (let i = 0; i < 200 && !(await flushedAt(client, lsn)); i++) await new Promise((r) => setTimeout(r, 10));
    await a.release();
    b.flusher.request();
    assert.equal(opened, 1);
    await b.release();
    const c = sharedFlusher('wal-flush-test', connect);
    assert.notEqual(c.flusher, a.flusher, 'a new one after the last release');
    await c.release();
  });

  it('WalFlusher whose session cannot be opened stops quietly: nothing thrown, close() returns', async () => {
    const flusher = new WalFlusher(() => Promise.reject(new Error('no server')));
    flusher.request();
    await flusher.close();
    assert.equal(flusher.flushes, 0);
  });
});
