import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hbaWithListen, parseListen, scramVerifier, serviceEntry, tcpUrl } from '../../../src/cluster/cluster-listen.js';

const INITDB_HBA = `# comments
local   all             all                                     trust
host    all             all             127.0.0.1/32            reject
host    all             all             ::1/128                 reject
`;

describe('cluster --listen', () => {
  it('reads [host:]port: a port alone listens on 127.0.0.1', () => {
    assert.deepEqual(parseListen('6543'), { host: '127.0.0.1', port: 6543 });
    assert.deepEqual(parseListen('0.0.0.0:6543'), { host: '0.0.0.0', port: 6543 });
    assert.deepEqual(parseListen('[::1]:6543'), { host: '::1', port: 6543 });
    assert.deepEqual(parseListen('db.local:5433'), { host: 'db.local', port: 5433 });
    assert.match(String(parseListen('70000')), /from 1 to 65535/);
    assert.match(String(parseListen('host:')), /\[host:\]port/);
    assert.match(String(parseListen('::1:6543')), /\[host:\]port/, 'an IPv6 address needs its brackets');
  });

  it("pg_hba: pgsurge's scram lines before initdb's reject lines (first match wins), loopback only unless the server listens beyond it; written twice, once; removed, gone", () => {
    const local = hbaWithListen(INITDB_HBA, '127.0.0.1');
    const hosts = local.split('\n').filter((l) => l.startsWith('host'));
    assert.deepEqual(hosts.map((l) => l.split(/\s+/).slice(3)), [['127.0.0.1/32', 'scram-sha-256'], ['::1/128', 'scram-sha-256'], ['127.0.0.1/32', 'reject'], ['::1/128', 'reject']]);
    assert.equal(hbaWithListen(local, '127.0.0.1'), local);
    const everywhere = hbaWithListen(local, '0.0.0.0');
    assert.deepEqual(everywhere.split('\n').filter((l) => l.startsWith('host') && l.includes('scram')).map((l) => l.split(/\s+/).slice(3)), [['all', 'scram-sha-256']]);
    assert.equal(hbaWithListen(everywhere, undefined), INITDB_HBA);
  });

  it('the SCRAM-SHA-256 verifier has the form PostgreSQL stores, and differs with the salt', () => {
    const salt = Buffer.alloc(16, 7);
    const v = scramVerifier('secret', salt);
    assert.match(v, /^SCRAM-SHA-256\$4096:[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}:[A-Za-z0-9+/=]{44}$/);
    assert.equal(v, scramVerifier('secret', salt));
    assert.notEqual(v, scramVerifier('secret'));
    assert.ok(!v.includes('secret'));
  });

  it('the URL and the service entry: a wildcard address is reached on loopback', () => {
    const state = { host: '0.0.0.0', port: 6543, password: 'pw-_x' };
    assert.equal(tcpUrl(state), 'postgresql://postgres:pw-_x@127.0.0.1:6543/postgres');
    assert.equal(tcpUrl(state, 'postgres', false), 'postgresql://postgres@127.0.0.1:6543/postgres');
    assert.equal(tcpUrl({ ...state, host: '::1' }), 'postgresql://postgres:pw-_x@[::1]:6543/postgres');
    assert.match(serviceEntry(state), /\n\[pgsurge\]\nhost=127\.0\.0\.1\nport=6543\nuser=postgres\ndbname=postgres\npassword=pw-_x\n$/);
  });
});
