/**
 * The least a Node client can do to load a file: pg and pg-copy-streams, the file piped
 * as it is into `COPY … FROM STDIN` (64 KB reads, as a Unix socket takes them), one
 * statement, no framing, no counting, no transaction of its own. Beside psql `\copy` of
 * the same bytes it shows what Node and the protocol cost; beside pgsurge, what pgsurge
 * adds.
 *
 *   node dist/bench/copy-sender.js <url> <file> "<COPY … FROM STDIN …>"
 */
import './lib/usage.js';
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

const [url, file, sql] = process.argv.slice(2);
if (url === undefined || file === undefined || sql === undefined) throw new Error('usage: copy-sender <url> <file> <COPY sql>');
const client = new pg.Client({ connectionString: url, application_name: 'limit-node-sender' });
await client.connect();
try {
  const copy = client.query(copyFrom(sql));
  await pipeline(createReadStream(file, { highWaterMark: 64 * 1024 }), copy);
  console.log(copy.rowCount);
} finally {
  await client.end();
}
