import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { resumeCommand } from '../../../src/cli/resume-command.js';
import { parseDuration } from '../../../src/cli/parse-options.js';
import { countFields } from '../../../src/input/column-check.js';
import { backoffMs, isRetryable } from '../../../src/core/retry.js';
import { RejectBudget, rejectCause } from '../../../src/writer/rejects/reject-budget.js';
import { claimRejectPath, RejectFile, rejectFileOwner, rejectPathFor } from '../../../src/writer/rejects/reject-file.js';
import { LineIndex } from '../../../src/input/line-index.js';

describe('reject file', () => {
  it('writes rows verbatim, each with its own line ending and nothing added, and a tab-separated log, both mode 0600', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-rf-'));
    const f = new RejectFile(path.join(dir, 'x.rejects'));
    // A CR-only input's record ends in its CR, a CRLF input's in CRLF, and one ending in an escaped newline in the LF after it.
    const records = [Buffer.from('1|\xff|\n', 'latin1'), Buffer.from('x\ty\r'), Buffer.from('x\tc\\.\r\n'), Buffer.from('x\tc\r\\\n\n')];
    await f.append([
      { file: 'a.tbl', line: 7, byteOffset: 120, sqlstate: '22008', column: 'd', message: 'bad\tdate\nhere', record: records[0]! },
      { file: 'a.tbl', line: 9, byteOffset: 200, sqlstate: '22P04', column: undefined, message: 'extra data', record: records[1]! },
    ]);
    await f.append(records.slice(2).map((record, i) => ({ file: 'b.txt', line: i + 1, byteOffset: i, sqlstate: undefined, column: undefined, message: 'm', record })));
    await f.close();
    assert.deepEqual(await fs.readFile(f.path), Buffer.concat(records));
    assert.equal(await fs.readFile(f.logPath, 'utf8'), 'file\tline\tbyte_offset\tsqlstate\tcolumn\tmessage\na.tbl\t7\t120\t22008\td\tbad date here\na.tbl\t9\t200\t22P04\t\textra data\nb.txt\t1\t0\t\t\tm\nb.txt\t2\t1\t\t\tm\n');
    assert.equal((await fs.stat(f.path)).mode & 0o777, 0o600);
    assert.equal((await fs.stat(f.logPath)).mode & 0o777, 0o600);
    await fs.rm(dir, { recursive: true });
  });

  it('is named after the table and the load id, beside the input, in --reject-dir, or here for stdin', () => {
    const input = { table: 'lineitem', schema: undefined, format: 'tbl' as const, file: '/data/x/lineitem.tbl.3' };
    assert.equal(rejectPathFor(input, {}, 'lineitem-0a1b', '/cwd'), '/data/x/lineitem.lineitem-0a1b.rejects');
    assert.equal(rejectPathFor(input, { rejectDir: 'rj' }, 'mine', '/cwd'), '/cwd/rj/lineitem.mine.rejects');
    assert.equal(rejectPathFor(input, { rejectFile: '/tmp/r' }, 'mine', '/cwd'), '/tmp/r');
    assert.equal(rejectPathFor({ ...input, file: '-' }, {}, 'mine', '/cwd'), '/cwd/lineitem.mine.rejects');
    assert.equal(rejectPathFor(input, {}, '../up', '/cwd'), '/data/x/lineitem.___up.rejects', 'a --load-id does not steer the path');
  });

  it('a load takes a free reject file or its own, never another load\'s', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-rf3-'));
    const row = { file: 'a', line: 1, byteOffset: 0, sqlstate: '22008', column: undefined, message: 'm', record: Buffer.from('1|\n') };
    const named = path.join(dir, 't.a.rejects');
    assert.equal(await rejectFileOwner(named), 'free');
    const a = new RejectFile(named, 'a');
    await a.append([row]);
    await a.close();
    assert.deepEqual(await rejectFileOwner(named), { loadId: 'a' });
    assert.match(await fs.readFile(a.logPath, 'utf8'), /^# pgsurge load a\nfile\tline\t/);
    assert.equal(await claimRejectPath(named, { loadId: 'a', withLedger: true, explicit: false }), named, 'its own: rewritten from the ledger');
    assert.equal(await claimRejectPath(named, { loadId: 'a', withLedger: false, explicit: false }), path.join(dir, 't.a-2.rejects'), 'no ledger to rewrite it from');
    assert.equal(await claimRejectPath(named, { loadId: 'b', withLedger: true, explicit: false }), path.join(dir, 't.a-2.rejects'));
    await assert.rejects(claimRejectPath(named, { loadId: 'b', withLedger: true, explicit: true }), /already holds the rejected rows of load a/);
    await fs.writeFile(path.join(dir, 'user.rejects'), 'something of the user\'s\n');
    assert.equal(await rejectFileOwner(path.join(dir, 'user.rejects')), 'unknown');
    await assert.rejects(claimRejectPath(path.join(dir, 'user.rejects'), { loadId: 'b', withLedger: true, explicit: true }), /already holds rows pgsurge did not write for this load/);
    await fs.writeFile(path.join(dir, 'empty.rejects'), '');
    assert.equal(await claimRejectPath(path.join(dir, 'empty.rejects'), { loadId: 'b', withLedger: false, explicit: true }), path.join(dir, 'empty.rejects'));
    await fs.rm(dir, { recursive: true });
  });
});

describe('reject budget', () => {
  it('counts earlier rejects and only what commits', () => {
    const b = new RejectBudget(5, 3);
    assert.ok(b.fits(2));
    assert.ok(!b.fits(3));
    b.take(2);
    assert.ok(!b.fits(1));
    b.giveBack(2);
    assert.ok(b.fits(2));
    assert.match(b.exceeded().message, /more than 5 rows rejected/);
  });
});

describe('faults', () => {
  it('retries lost connections and restarts, not bad data or a full disk', () => {
    for (const code of ['57P01', '57P03', '08006', 'ECONNRESET', 'ECONNREFUSED', 'ENOENT', '40P01']) assert.ok(isRetryable({ code, message: '' }), code);
    assert.ok(isRetryable(new Error('Connection terminated unexpectedly')));
    for (const code of ['22008', '23505', '53100', '53200', '42P01']) assert.ok(!isRetryable({ code, message: 'x' }), code);
  });
  it('backs off exponentially up to 2 s, with jitter', () => {
    assert.equal(backoffMs(0, () => 1), 100);
    assert.equal(backoffMs(3, () => 1), 800);
    assert.equal(backoffMs(30, () => 1), 2000);
    assert.equal(backoffMs(30, () => 0), 1000);
  });
  it('parses --retry-for durations', () => {
    assert.equal(parseDuration('--retry-for', '30s'), 30_000);
    assert.equal(parseDuration('--retry-for', '2m'), 120_000);
    assert.equal(parseDuration('--retry-for', '500ms'), 500);
    assert.equal(parseDuration('--retry-for', '10'), 10_000);
    assert.throws(() => parseDuration('--retry-for', 'soon'), /Expected `--retry-for` to be a duration .*got `soon`/);
  });
});

describe('why rows were rejected', () => {
  it('a cause is short: the kind, the constraint and the SQLSTATE; else the server\'s message up to its first value', () => {
    assert.equal(rejectCause({ sqlstate: '23505', message: 'duplicate key value violates unique constraint "people_pkey" (Key (id)=(3) already exists.)' }), 'duplicate key on people_pkey (23505)');
    assert.equal(rejectCause({ sqlstate: '23503', message: 'insert or update on table "o" violates foreign key constraint "o_c_fkey" (Key (c)=(9) is not present in table "c".)' }), 'foreign key o_c_fkey (23503)');
    assert.equal(rejectCause({ sqlstate: '22P02', message: 'invalid input syntax for type integer: "x"' }), 'invalid input syntax for type integer (22P02)');
    assert.equal(rejectCause({ sqlstate: undefined, message: 'cannot be read as an NDJSON line (at character 3): Unexpected token' }), 'cannot be read as an NDJSON line');
  });

  it('a --max-rejects stop names the main cause among the committed rejects and the pending ones, with its share', () => {
    const b = new RejectBudget(3, 0);
    const dup = (k: number) => ({ sqlstate: '23505', message: `duplicate key value violates unique constraint "t_pkey" (Key (id)=(${k}) already exists.)` });
    b.take(2, [dup(1), { sqlstate: '22P02', message: 'invalid input syntax for type integer: "x"' }]);
    assert.match(b.exceeded([dup(2), dup(3)]).message, /^more than 3 rows rejected \(--max-rejects 3\): 3 of 4: duplicate key on t_pkey \(23505\); the load stopped/);
    // Earlier runs' rejects are counted but their causes are not known here: the share says "this run".
    assert.match(new RejectBudget(3, 2).exceeded([dup(1), dup(2)]).message, /: 2 of 2 this run: duplicate key on t_pkey \(23505\);/);
  });
});

describe('resume command', () => {
  it('drops --truncate and an old --load-id, masks the password, adds --resume --load-id', () => {
    const cmd = resumeCommand(['load', 'my file.tbl', '--truncate', '--load-id', 'old', '--db', 'postgresql://me:s3cret@h/db', '-w', '4'], 'lineitem-abc');
    assert.equal(cmd, "pgsurge load 'my file.tbl' -w 4 --db 'postgresql://me:***@h/db' --resume --load-id lineitem-abc".replace(" -w 4 --db 'postgresql://me:***@h/db'", " --db 'postgresql://me:***@h/db' -w 4"));
    assert.doesNotMatch(resumeCommand(['load', 'x', '--db=postgresql://me:s3cret@h/db'], 'id'), /s3cret/);
  });

  it('drops --again: resuming a load started with it goes on with that load, not another new one', () => {
    assert.equal(resumeCommand(['load', 'x.csv', '--again', '--on-conflict', 'skip'], 'x-1a2b'), 'pgsurge load x.csv --on-conflict skip --resume --load-id x-1a2b');
  });
});

describe('column count of the first record', () => {
  const cases: [string, 'tbl' | 'text' | 'csv', number][] = [
    ['1|a|b\n', 'tbl', 3],
    ['1|a\\|b|c\n', 'tbl', 3],
    ['a\tb\r\n', 'text', 2],
    ['1,"a,b",c\n', 'csv', 3],
    ['1,"a ""x"", y"\n', 'csv', 2],
  ];
  for (const [record, format, n] of cases) {
    it(`${JSON.stringify(record)} (${format}) has ${n} fields`, () => assert.equal(countFields(Buffer.from(record), format), n));
  }
});

describe('line index', () => {
  it('finds line numbers at offsets, scanning from the nearest known point', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-li-'));
    const file = path.join(dir, 'f');
    const lines = Array.from({ length: 1000 }, (_, i) => `line ${i}\n`);
    await fs.writeFile(file, lines.join(''));
    const idx = new LineIndex();
    const offsetOf = (i: number): number => lines.slice(0, i).join('').length;
    for (const i of [500, 10, 999, 0, 501]) assert.equal(await idx.lineAt(file, offsetOf(i)), i + 1);
    await fs.rm(dir, { recursive: true });
  });
});

describe('reject file across close and reopen', () => {
  it('appends after a close; clear() starts afresh', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-rf2-'));
    const f = new RejectFile(path.join(dir, 'x.rejects'));
    const row = (n: number) => ({ file: 'a', line: n, byteOffset: n, sqlstate: '22008', column: undefined, message: 'm', record: Buffer.from(`${n}|\n`) });
    await f.append([row(1)]);
    await f.close();
    await f.append([row(2)]);
    await f.close();
    assert.equal(await fs.readFile(f.path, 'utf8'), '1|\n2|\n');
    assert.equal((await fs.readFile(f.logPath, 'utf8')).split('\n').filter((l) => l.startsWith('file\t')).length, 1, 'one header');
    await f.clear();
    await f.append([row(3)]);
    await f.close();
    assert.equal(await fs.readFile(f.path, 'utf8'), '3|\n');
    assert.equal(f.written, 1);
    await fs.rm(dir, { recursive: true });
  });
});
