import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { streamCopy } from '../../src/writer/copy-writer.js';
import { closeTestSchema, digest, openTestSchema, tableRecords, testClient } from '../helpers/test-db.js';

/**
 * A chunk's COPY data goes out right behind its `BEGIN; COPY` query, without waiting for
 * the server's CopyInResponse (src/writer/eager-copy.ts). The server is the oracle: the
 * table holds what its own COPY makes of the bytes, and a COPY it refuses drops the bytes
 * sent with it and leaves the connection usable.
 */
const SCHEMA = 'it_eager_copy';
let client: pg.Client;
let dir: string;

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-eager-copy-'));
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

/** `n` records `id<TAB>note id` (~600 KB for 30,000: more than a Unix socket buffers). */
function records(n: number, from = 1): string[] {
  return Array.from({ length: n }, (_, i) => `${from + i}\tnote ${from + i}`);
}

/** Bytes the client has handed to its socket (sent, or queued in Node for it). */
function bytesWritten(c: pg.Client): number {
  return (c as unknown as { connection: { stream: { bytesWritten: number } } }).connection.stream.bytesWritten;
}

describe('COPY data sent with its query', () => {
  it('goes out before the server answers the COPY (here: while the COPY waits for a lock), and loads as the server COPYs it', async () => {
    await client.query(`CREATE TABLE ${SCHEMA}.locked (id bigint, note text)`);
    const rows = records(30_000);
    const data = Buffer.from(`${rows.join('\n')}\n`);
    const holder = await testClient();
    const loader = await testClient();
    try {
      await holder.query('BEGIN');
      await holder.query(`LOCK TABLE ${SCHEMA}.locked IN ACCESS EXCLUSIVE MODE`);
      const pid = (await loader.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const before = bytesWritten(loader);
      const copying = streamCopy(loader, `BEGIN; COPY ${SCHEMA}.locked FROM STDIN`, data);
      copying.catch(() => undefined);
      // the COPY is parsed and waits for the lock: it has not answered CopyInResponse yet
      for (let tries = 0; ; tries++) {
        const r = await client.query<{ w: string | null }>('SELECT wait_event_type AS w FROM pg_stat_activity WHERE pid = $1', [pid]);
        if (r.rows[0]?.w === 'Lock') break;
        assert.ok(tries < 200, 'the COPY waits for the table lock');
        await new Promise((r) => setTimeout(r, 10));
      }
      const sent = bytesWritten(loader) - before;
      assert.ok(sent > 100_000, `the data went out with the query: ${sent} bytes written before the server answered`);
      await holder.query('COMMIT');
      assert.equal(await copying, rows.length);
      await loader.query('COMMIT');
    } finally {
      await holder.end();
      await loader.end();
    }
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.locked`, '(FORMAT text)')), digest(rows));
  });

  it('a COPY the server refuses: the bytes sent with it are dropped, the error is the COPY\'s, and the next chunk on the same connection loads', async () => {
    await client.query(`CREATE TABLE ${SCHEMA}.refused (id bigint, note text)`);
    const bad = Buffer.from(`${records(100_000).join('\n')}\n`);
    const good = records(5000, 200_000);
    const loader = await testClient();
    try {
      const before = bytesWritten(loader);
      await assert.rejects(streamCopy(loader, `BEGIN; COPY ${SCHEMA}.refused (id, no_such_column) FROM STDIN`, bad), (e: Error & { code?: string }) => e.code === '42703');
      assert.ok(bytesWritten(loader) - before > 100_000, 'data went out behind the refused COPY');
      // the BEGIN before the COPY held: the transaction is failed (the status itself comes with the
      // ReadyForQuery, which the server sends after the error in a packet of its own: not read here)
      await assert.rejects(loader.query('SELECT 1'), (e: Error & { code?: string }) => e.code === '25P02');
      assert.equal(loader.getTransactionStatus(), 'E');
      await loader.query('ROLLBACK');
      assert.equal((await loader.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one, 1);
      assert.equal(await streamCopy(loader, `BEGIN; COPY ${SCHEMA}.refused FROM STDIN`, Buffer.from(`${good.join('\n')}\n`)), good.length);
      await loader.query('COMMIT');
    } finally {
      await loader.end();
    }
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.refused`, '(FORMAT text)')), digest(good));
  });
});
