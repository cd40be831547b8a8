/**
 * Connections opened ahead of need (src/db/warm-connections.ts), against the real server:
 * they are taken by `connect` with the name it was asked for, are not seen under a load's
 * workers' prefix until taken, count for the preflight as connections it will not need to
 * open, and are closed when not taken (on time, and at the command's end).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { connect } from '../../src/db/target.js';
import { preflight } from '../../src/db/preflight.js';
import { closeWarmConnections, takeWarm, warmConnections, warmCount } from '../../src/db/warm-connections.js';
import { testClient, testUrl } from '../helpers/test-db.js';

/** The backends named `name`. */
async function named(admin: pg.Client, name: string): Promise<number> {
  const r = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [name]);
  return r.rows[0]!.n;
}

describe('connections opened ahead of need', () => {
  let admin: pg.Client;
  // A name of this file's own, so other files' sessions on the shared server are not counted.
  const config: pg.ClientConfig = { connectionString: testUrl(), application_name: 'pgsurge warm test' };

  before(async () => {
    admin = await testClient();
  });
  after(async () => {
    await closeWarmConnections();
    await admin.end();
  });

  it('are opened at once, taken under the name asked for, and the ones left are closed', async () => {
    warmConnections(config, 3);
    assert.equal(warmCount(config), 3);
    const a = await connect(config, 'pgsurge warm test w0');
    const b = await connect(config);
    try {
      // a was renamed; b kept the plain name; the third still waits under the plain name
      assert.equal((await a.query<{ n: string }>("SELECT current_setting('application_name') AS n")).rows[0]!.n, 'pgsurge warm test w0');
      assert.equal(await named(admin, 'pgsurge warm test w0'), 1);
      assert.equal(await named(admin, 'pgsurge warm test'), 2);
      assert.equal(warmCount(config), 1);
      await closeWarmConnections();
      assert.equal(warmCount(config), 0);
      // closed on the server too (a backend's exit is seen a moment later)
      for (let i = 0; i < 50 && (await named(admin, 'pgsurge warm test')) > 1; i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(await named(admin, 'pgsurge warm test'), 1);
      // none left: connect opens one as before
      assert.equal(await takeWarm(config), undefined);
      const c = await connect(config, 'pgsurge warm test w1');
      assert.equal(await named(admin, 'pgsurge warm test w1'), 1);
      await c.end();
    } finally {
      await a.end();
      await b.end();
    }
  });

  it('not taken in time: closed by themselves', async () => {
    warmConnections(config, 2, 200);
    assert.equal(warmCount(config), 2);
    for (let i = 0; i < 100 && warmCount(config) > 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(warmCount(config), 0);
    assert.equal(await takeWarm(config), undefined);
  });

  it('a server that refuses them: dropped, and connect gives the error it always gave', async () => {
    const refused: pg.ClientConfig = { host: '127.0.0.1', port: 1, database: 'x', user: 'nobody' };
    warmConnections(refused, 2);
    await assert.rejects(connect(refused), /ECONNREFUSED/);
    assert.equal(warmCount(refused), 0);
  });

  it('the preflight counts them as connections the workers will not need to open', async () => {
    warmConnections(config, 2);
    for (let i = 0; i < 100 && (await named(admin, 'pgsurge warm test')) < 2; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(await named(admin, 'pgsurge warm test'), 2);
    const inUse = async (warm: number): Promise<number> => {
      const error = await preflight(admin, [], { workers: 1_000_000, truncate: false, warm }).then(
        () => assert.fail('a million workers refused'),
        (e: unknown) => e as Error,
      );
      assert.match(error.message, /--workers 1000000 needs 1000000 more connections, and the server has \d+ free/);
      return Number(/(\d+) in use/.exec(error.message)?.[1]);
    };
    // Other test files use the same server: the two counts are taken again until no one else connected in between.
    let difference = 0;
    for (let attempt = 0; attempt < 10 && difference !== 2; attempt++) difference = (await inUse(0)) - (await inUse(warmCount(config)));
    assert.equal(difference, 2, 'the two opened ahead are not counted as in use');
    await closeWarmConnections();
  });
});
