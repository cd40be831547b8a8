import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { EXIT, PartFailed, printError } from '../../../src/cli/errors.js';
import { rerunCommand, resumeCommand } from '../../../src/cli/resume-command.js';
import { LoadError } from '../../../src/core/load-error.js';

function printed(error: unknown): { code: number; text: string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (d: Buffer) => (text += d.toString()));
  const code = printError(error, false, stream);
  return { code, text };
}

describe("a part's error before it loads", () => {
  it('the rerun command is the command line as given (its --part, --load-id, --resume), the --db password masked', () => {
    const argv = ['load', '/data/li.tbl', '--part', '2/3', '--load-id', 'li-1', '--db', 'postgresql://me:secret@coord/db', '--resume', '--db=postgresql://me:pw@x/y'];
    assert.equal(rerunCommand(argv), "pgsurge load /data/li.tbl --part 2/3 --load-id li-1 --db 'postgresql://me:***@coord/db' --resume '--db=postgresql://me:***@x/y'");
    // The resume command of a stopped load still drops what it must (and adds --resume and the id).
    assert.equal(resumeCommand(['load', 'a.tbl', '--part', '1/2', '--load-id', 'x'], 'x'), 'pgsurge load a.tbl --part 1/2 --resume --load-id x');
  });

  it("names the part before pgsurge's message, the server's detail and hint after it, then the rerun command; the exit code is the error's", () => {
    const missing = printed(new PartFailed('2/3', new LoadError('missing-table', 'table "t" does not exist', { hint: 'create it first' }), 'pgsurge load t.tbl --part 2/3'));
    assert.equal(missing.text, 'pgsurge: part 2/3: table "t" does not exist\n  hint: create it first\n  rerun this part with: pgsurge load t.tbl --part 2/3\n');
    assert.equal(missing.code, EXIT.failed);
    const refused = printed(new PartFailed('1/4', new LoadError('bad-option', 'load x is running as a whole'), 'pgsurge load t.tbl --part 1/4'));
    assert.equal(refused.code, EXIT.usage);
    assert.match(refused.text, /^pgsurge: part 1\/4: load x is running as a whole\n/);
    const server = Object.assign(new Error('duplicate key value violates unique constraint "x"'), { code: '23505', detail: 'Key (a)=(1) already exists.' });
    assert.equal(printed(new PartFailed('3/3', server, 'pgsurge load t.tbl --part 3/3')).text, 'pgsurge: part 3/3: duplicate key value violates unique constraint "x"\n  detail: Key (a)=(1) already exists.\n  rerun this part with: pgsurge load t.tbl --part 3/3\n');
  });
});
