import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatBuildSizing, formatTimeline } from '../../../src/cli/dbt3-commands.js';
import { resumeCommand } from '../../../src/cli/resume-command.js';
import { sizeBuildSessions } from '../../../src/dbt3/build-memory.js';

describe('dbt3 load on the command line', () => {
  it('the resume command: the same command without --replace, with --resume, the password masked', () => {
    assert.equal(resumeCommand(['dbt3', 'load', 'sf 1', '--replace', '--db', 'postgresql://me:s3cret@h/db', '-w', '2']), "pgsurge dbt3 load 'sf 1' --db 'postgresql://me:***@h/db' -w 2 --resume");
    assert.equal(resumeCommand(['dbt3', 'load', 'sf1', '--resume']), 'pgsurge dbt3 load sf1 --resume');
  });

  it('says what the build sessions run with, and which server settings were kept', () => {
    const sizing = sizeBuildSessions({
      server: { maintenanceWorkMemKb: 65536, workMemKb: 1024 * 1024, sharedBuffersKb: 131072, effectiveCacheSizeKb: 4194304, hashMemMultiplier: 2, maxWorkerProcesses: 8, maxParallelWorkers: 8, maxParallelMaintenanceWorkers: 2 },
      machine: { memAvailableBytes: 8 * 1024 ** 3, cores: 2 },
      buildsAtOnce: 2,
    });
    const text = formatBuildSizing(sizing);
    assert.match(text, /^build sessions: 2 at once, 4\.0 GB for all of them \(half of MemAvailable/);
    assert.match(text, /maintenance_work_mem = 1GB: /);
    assert.match(text, /work_mem = 1GB \(kept\): the server's 1GB is at least pgsurge's 256MB/);
    assert.match(text, /max_parallel_maintenance_workers = 0: 2 cores/);
  });

  it('the timeline as a table, a failed task marked', () => {
    const text = formatTimeline([
      { id: 'load lineitem', kind: 'load', table: 'lineitem', statement: 'COPY', slots: 2, start: 0.5, end: 4 },
      { id: 'primary key orders', kind: 'primary key', table: 'orders', statement: 'ALTER', slots: 1, start: 4, end: 4.25, failed: true },
    ]);
    assert.match(text, /load lineitem\s+0\.50\s+4\.00\s+3\.50\s+2/);
    assert.match(text, /primary key orders \(failed\)\s+4\.00\s+4\.25\s+0\.25\s+1/);
  });
});
