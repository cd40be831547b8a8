import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolveConnection } from '../../../src/core/connection-settings.js';
import { buildSessionSql, hostOfUrl, isLocalServer, lastBuildSql, MAX_BUILD_MEMORY_KB, sizeBuildSessions, type ServerBuildSettings } from '../../../src/dbt3/build-memory.js';
import type { Target } from '../../../src/cluster/target.js';

const GB = 1024 ** 3;
const DEFAULTS: ServerBuildSettings = {
  maintenanceWorkMemKb: 64 * 1024,
  workMemKb: 4 * 1024,
  sharedBuffersKb: 128 * 1024,
  effectiveCacheSizeKb: 4 * 1024 * 1024,
  hashMemMultiplier: 2,
  maxWorkerProcesses: 8,
  maxParallelWorkers: 8,
  maxParallelMaintenanceWorkers: 2,
};
const value = (s: ReturnType<typeof sizeBuildSessions>, name: string) => s.settings.find((x) => x.name === name)!;

describe('build session sizing', () => {
  // Table-driven: what the machine and the server have → what each build gets; the invariants are checked for every case.
  const cases: { name: string; server?: Partial<ServerBuildSettings>; memAvailableGb?: number; cores?: number; builds: number; buildMemoryGb?: number; mwmMb: number; set: boolean; parallel: number; last?: number }[] = [
    { name: 'a roomy local machine: 1GB each, the cap; the last sort gets the other core', memAvailableGb: 22, cores: 2, builds: 2, mwmMb: 1024, set: true, parallel: 0, last: 1 },
    { name: 'a small local machine: half of what is available, shared', memAvailableGb: 1, cores: 2, builds: 2, mwmMb: 256, set: true, parallel: 0, last: 1 },
    { name: 'one build on 4 cores: 3 parallel workers', memAvailableGb: 8, cores: 4, builds: 1, mwmMb: 1024, set: true, parallel: 3 },
    { name: '8 cores, 2 builds, but max_parallel_workers 2: one each, and the last sort two', server: { maxParallelWorkers: 2 }, memAvailableGb: 8, cores: 8, builds: 2, mwmMb: 1024, set: true, parallel: 1, last: 2 },
    { name: 'max_worker_processes 1 leaves none', server: { maxWorkerProcesses: 1 }, memAvailableGb: 8, cores: 8, builds: 1, mwmMb: 1024, set: true, parallel: 0 },
    { name: 'remote, default settings: effective_cache_size / 4', builds: 2, mwmMb: 512, set: true, parallel: 2 },
    { name: 'remote, big shared_buffers, 4 builds: max_parallel_workers shared out', server: { sharedBuffersKb: 4 * 1024 * 1024 }, builds: 4, mwmMb: 1024, set: true, parallel: 1 },
    { name: 'the user\'s 2GB is kept', server: { maintenanceWorkMemKb: 2 * 1024 * 1024 }, memAvailableGb: 22, cores: 2, builds: 2, mwmMb: 2048, set: false, parallel: 0, last: 1 },
    { name: '--build-memory 256MB over 2 builds', buildMemoryGb: 0.25, memAvailableGb: 22, cores: 2, builds: 2, mwmMb: 128, set: true, parallel: 0, last: 1 },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const server = { ...DEFAULTS, ...c.server };
      const s = sizeBuildSessions({
        server,
        machine: c.memAvailableGb === undefined ? {} : { memAvailableBytes: c.memAvailableGb * GB, cores: c.cores },
        buildsAtOnce: c.builds,
        ...(c.buildMemoryGb !== undefined ? { buildMemoryBytes: c.buildMemoryGb * GB } : {}),
      });
      const mwm = value(s, 'maintenance_work_mem');
      assert.equal(mwm.value, c.mwmMb * 1024);
      assert.equal(mwm.set, c.set);
      assert.equal(value(s, 'max_parallel_maintenance_workers').value, c.parallel);
      // The invariants: what pgsurge sets never exceeds its budget, the machine's half, 1GB a build; the parallel workers fit the server's limits.
      const limitKb = (c.buildMemoryGb ?? c.memAvailableGb ?? Infinity) * 1024 * 1024;
      for (const x of s.settings.filter((y) => y.set && y.name !== 'max_parallel_maintenance_workers')) {
        assert.ok(x.value <= MAX_BUILD_MEMORY_KB, `${x.name} ${x.value} kB over the cap`);
        if (c.memAvailableGb !== undefined && c.buildMemoryGb === undefined) assert.ok(x.value * c.builds <= limitKb / 2, `${x.name} × builds over half the machine's memory`);
        if (c.buildMemoryGb !== undefined) assert.ok(x.value * c.builds <= limitKb, `${x.name} × builds over --build-memory`);
      }
      const wm = value(s, 'work_mem');
      if (wm.set) assert.ok(wm.value * server.hashMemMultiplier <= mwm.value, 'a hash join stays under maintenance_work_mem');
      const parallel = value(s, 'max_parallel_maintenance_workers').value;
      assert.ok(parallel * c.builds <= Math.min(server.maxParallelWorkers, server.maxWorkerProcesses - 1) || parallel === 0);
      // The last sort: only where it has more than a build's share, within the server's limits and the cores (its leader is one).
      assert.equal(s.lastBuild?.maxParallelMaintenanceWorkers, c.last);
      if (s.lastBuild) {
        assert.ok(s.lastBuild.maxParallelMaintenanceWorkers <= Math.min(server.maxParallelWorkers, server.maxWorkerProcesses - 1));
        assert.ok(c.cores !== undefined && s.lastBuild.maxParallelMaintenanceWorkers <= c.cores - 1);
      }
    });
  }

  it('SETs only what pgsurge changes, memory in kB', () => {
    const s = sizeBuildSessions({ server: { ...DEFAULTS, workMemKb: 4 * 1024 * 1024 }, machine: { memAvailableBytes: 4 * GB, cores: 2 }, buildsAtOnce: 2 });
    assert.deepEqual(buildSessionSql(s), ["SET maintenance_work_mem = '1048576kB'", 'SET max_parallel_maintenance_workers = 0']);
  });

  it('the last sort: its workers SET before it, the session\'s own value back after', () => {
    const s = sizeBuildSessions({ server: DEFAULTS, machine: { memAvailableBytes: 4 * GB, cores: 2 }, buildsAtOnce: 2 });
    assert.deepEqual(lastBuildSql(s), { before: 'SET max_parallel_maintenance_workers = 1', after: 'SET max_parallel_maintenance_workers = 0' });
    assert.equal(lastBuildSql(sizeBuildSessions({ server: DEFAULTS, machine: {}, buildsAtOnce: 2 })), undefined, 'a remote server\'s cores are not known: its own setting');
  });

  it('a server on this machine: the managed cluster, a socket, localhost', () => {
    const t = (connectionString?: string): Target => ({ config: connectionString === undefined ? {} : { connectionString }, description: '', managed: undefined, release: async () => {} });
    assert.equal(isLocalServer(t('postgresql://postgres@/postgres?host=%2Ftmp%2Fsock&port=5432')), true);
    assert.equal(isLocalServer(t('postgresql://me@localhost:5433/db')), true);
    assert.equal(isLocalServer(t('postgresql://me:secret@db1.example.com/db')), false);
    assert.equal(isLocalServer(t()), true);
    // PGHOST is read where the target is resolved (in the CLI), into the config's host.
    const fromEnv = (env: NodeJS.ProcessEnv): Target => ({ config: resolveConnection(undefined, env).config, description: '', managed: undefined, release: async () => {} });
    assert.equal(isLocalServer(fromEnv({ PGHOST: 'db1', PGUSER: 'me', PGPASSFILE: '/nonexistent' })), false);
    assert.equal(isLocalServer(fromEnv({ PGHOST: 'localhost', PGUSER: 'me', PGPASSFILE: '/nonexistent' })), true);
    assert.equal(hostOfUrl('postgres://u@[::1]:5432/x'), '[::1]');
  });
});
