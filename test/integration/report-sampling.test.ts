import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { serverCopyStdin } from '../helpers/copy-oracle.js';
import { lineitemFields } from '../helpers/lineitem-data.js';
import { closeTestSchema, digest, openTestSchema, runCli, tableRecords, testUrl } from '../helpers/test-db.js';
import type { LoadReport } from '../../src/report/report-data.js';

const SCHEMA = 'it_report_sampling';
let client: pg.Client;
let dir: string;

before(async () => {
  ({ client, dir } = await openTestSchema(SCHEMA, 'pgsurge-it-report-sampling-'));
});
after(async () => {
  await closeTestSchema(SCHEMA, client, dir);
});

describe('the report of a short load', () => {
  it('a load of about a second has a curve of at least 30 points, or says it was too short; the table is the server\'s COPY of the same rows', async () => {
    const fields = lineitemFields(150_000);
    const file = path.join(dir, 'lineitem.tbl');
    await fs.writeFile(file, fields.map((f) => `${f.join('|')}|\n`).join(''));
    const json = path.join(dir, 'short.json');
    const r = await runCli(['load', file, '--create', '--db', testUrl(), '--schema', SCHEMA, '-w', '2', '--chunk-size', '256KB', '--json', '--report', json]);
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { event: string; total: { read: number; loaded: number; rejected: number; skipped: number } };
    assert.equal(summary.event, 'summary');
    assert.deepEqual([summary.total.read, summary.total.loaded, summary.total.rejected, summary.total.skipped], [150_000, 150_000, 0, 0], 'read = loaded + rejected + skipped');

    // PostgreSQL's own COPY of the same rows (without dbgen's trailing `|`) is what the table holds
    await client.query(`CREATE TABLE ${SCHEMA}.oracle (LIKE ${SCHEMA}.lineitem)`);
    const copied = await serverCopyStdin(client, `${SCHEMA}.oracle`, Buffer.from(fields.map((f) => `${f.join('|')}\n`).join('')), "(FORMAT text, DELIMITER '|')");
    assert.equal(copied.rows, 150_000, copied.error);
    assert.equal(digest(await tableRecords(client, `${SCHEMA}.lineitem`)), digest(await tableRecords(client, `${SCHEMA}.oracle`)), 'content digest');

    const report = JSON.parse(await fs.readFile(json, 'utf8')) as LoadReport;
    const [series] = report.series;
    assert.ok(series);
    assert.equal(series.name, 'lineitem.tbl', 'named after its file');
    const seconds = series.samples.at(-1)!.seconds;
    const points = series.intervals.length;
    // samples start 125 ms apart (a tick is skipped while a sample is in flight): 30 points in about 4 s
    assert.ok(points >= Math.min(30, Math.floor(seconds * 4)), `${points} intervals over ${seconds.toFixed(2)} s`);
    assert.equal(series.tooShort === true, points < 30, `tooShort is ${String(series.tooShort)} with ${points} intervals`);
    if (seconds >= 5) assert.ok(points >= 30, `${points} intervals over ${seconds.toFixed(2)} s`);
    assert.equal(series.samples.at(-1)!.rowsLoaded, 150_000, 'the last sample holds every row');
  });
});
