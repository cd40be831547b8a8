import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { settingsFromArgs } from '../../../src/cluster/data-dir.js';
import { mountFor, parseMounts } from '../../../src/cluster/filesystem-info.js';
import { injectedWalMoveFailure } from '../../../src/cli/wal-commands.js';

describe('server command lines (postmaster.opts)', () => {
  const cases: { name: string; args: string[]; expected: Record<string, string> }[] = [
    { name: 'pg_ctl -o "-c k=v"', args: ['-k', '/tmp/s', '-c', 'fsync=off', '-c', 'work_mem=7MB'], expected: { fsync: 'off', work_mem: '7MB' } },
    { name: 'joined -ck=v and --k=v', args: ['-cfsync=off', '--shared-buffers=1GB'], expected: { fsync: 'off', shared_buffers: '1GB' } },
    { name: 'later wins', args: ['-c', 'fsync=off', '-c', 'fsync=on'], expected: { fsync: 'on' } },
    { name: 'Debian config_file', args: ['-c', 'config_file=/etc/postgresql/15/main/postgresql.conf'], expected: { config_file: '/etc/postgresql/15/main/postgresql.conf' } },
    { name: 'nothing', args: [], expected: {} },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(settingsFromArgs(c.args), c.expected));
});

describe('/proc/mounts', () => {
  const mounts = parseMounts('/dev/vda / ext4 rw 0 0\n/dev/vdb1 /mnt/wal\\040disk xfs rw 0 0\ntmpfs /mnt/wal\\040disk/tmp tmpfs rw 0 0\n');
  const cases: [string, string | undefined][] = [
    ['/var/lib/postgresql/data', '/dev/vda'],
    ['/mnt/wal disk/pg_wal', '/dev/vdb1'],
    ['/mnt/wal disk', '/dev/vdb1'],
    ['/mnt/wal diskette', '/dev/vda'],
    ['/mnt/wal disk/tmp/x', 'tmpfs'],
  ];
  for (const [p, device] of cases) it(`${p} is on ${device}`, () => assert.equal(mountFor(mounts, p)?.device, device));
  it('unescapes \\040', () => assert.equal(mounts[1]?.mountPoint, '/mnt/wal disk'));
});

describe('the test-only failure injection', () => {
  it('is read from PGSURGE_TEST_INJECT_FAILURE, and only for known steps', () => {
    assert.equal(injectedWalMoveFailure({ PGSURGE_TEST_INJECT_FAILURE: 'wal-move:copy' }), 'copy');
    assert.equal(injectedWalMoveFailure({ PGSURGE_TEST_INJECT_FAILURE: 'wal-move:start' }), 'start');
    assert.equal(injectedWalMoveFailure({ PGSURGE_TEST_INJECT_FAILURE: 'wal-move:rm' }), undefined);
    assert.equal(injectedWalMoveFailure({}), undefined);
  });
});
