import type pg from 'pg';
import type { LoadTarget } from '../core/chunk.js';
import { qualifiedName, quoteIdent } from '../core/identifiers.js';
import { tableColumns } from '../core/table-columns.js';
import type { ChunkWriter } from './chunk-writer.js';
import { copySql, copyWriter, streamCopy } from './copy-writer.js';

const STAGE = 'pgsurge_stage';

/**
 * COPY with `--on-conflict skip`: COPY has no ON CONFLICT, so each chunk is copied into a
 * temporary staging table (created once per transaction, dropped at its commit or
 * rollback, emptied between the parts of a chunk whose bad rows are being isolated), then
 * moved with `INSERT … SELECT … ON CONFLICT DO NOTHING`, all in the chunk's transaction.
 * Rows the server left out (a duplicate of a row already in the table, or of an earlier
 * row in the same load) are counted as skipped: COPY's row count minus INSERT's.
 */
export function copySkipConflictsWriter(): ChunkWriter {
  const columnLists = new WeakMap<pg.Client, Map<string, string[]>>();

  async function columnNames(client: pg.Client, target: LoadTarget): Promise<string[]> {
    let byTable = columnLists.get(client);
    if (byTable === undefined) columnLists.set(client, (byTable = new Map()));
    const key = qualifiedName(target.table, target.schema);
    let list = byTable.get(key);
    if (list === undefined) {
      list = (await tableColumns(client, target.table, target.schema)).map((c) => c.name);
      byTable.set(key, list);
    }
    return list;
  }

  return {
    name: 'copy',
    failedRecord: copyWriter.failedRecord!,
    async writeRows(client, chunk) {
      const table = qualifiedName(chunk.target.table, chunk.target.schema);
      const names = await columnNames(client, chunk.target);
      const cols = names.map(quoteIdent).join(', ');
      const stage = qualifiedName(STAGE, 'pg_temp');
      // A deadlock between workers moving the same new keys fails the chunk's transaction: the worker runs it again.
      await client.query(`CREATE TEMP TABLE IF NOT EXISTS ${quoteIdent(STAGE)} (LIKE ${table} INCLUDING DEFAULTS) ON COMMIT DROP`);
      await client.query(`TRUNCATE ${stage}`);
      const columns = chunk.target.columns ?? names;
      const read = await streamCopy(client, copySql({ ...chunk.target, table: STAGE, schema: 'pg_temp' }, columns), chunk.data);
      const moved = await client.query(`INSERT INTO ${table} (${cols}) SELECT ${cols} FROM ${stage} ON CONFLICT DO NOTHING`);
      const loaded = moved.rowCount ?? 0;
      return { loaded, skipped: read - loaded };
    },
  };
}
