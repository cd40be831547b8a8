/**
 * Run by `checkLocalWrites` as the data directory's owner (see there): connects through the
 * Unix socket, writes, CHECKPOINTs, prints `{"segment": …}`.
 */
import type { DataDirInfo } from './data-dir.js';
import { connectLocal } from './local-connection.js';
import { writeAndCheckpoint } from './write-check.js';

const { info, user } = JSON.parse(process.argv[2] ?? '{}') as { info: DataDirInfo; user: string | null };
try {
  const client = await connectLocal({ ...info, account: undefined }, user ?? undefined);
  try {
    process.stdout.write(JSON.stringify({ segment: await writeAndCheckpoint(client) }));
  } finally {
    await client.end();
  }
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exitCode = 1;
}
