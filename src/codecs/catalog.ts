import type pg from 'pg';
import type { LoadTarget } from '../core/chunk.js';
import { copyColumns, readTableColumns } from '../core/table-columns.js';
import type { ColumnType, SessionFacts } from './field-encoder.js';

/** A column of the COPY's column list, with its type as the binary wire needs it. */
export interface WireColumn extends ColumnType {
  readonly name: string;
  /** The type as the user wrote it (`character(1)`, a domain's name), for messages. */
  readonly declared: string;
}

/**
 * The COPY's columns (the target's column list, or every column COPY fills without one:
 * not dropped, not generated), in order, each domain resolved to its base type (through
 * domains over domains) with the typmod that applies. Read once per table.
 */
export async function readWireColumns(client: pg.Client, target: LoadTarget): Promise<WireColumn[]> {
  const all = copyColumns(await readTableColumns(client, target.table, target.schema)).map((c) => ({
    name: c.name,
    declared: c.type,
    oid: c.storage.oid,
    typname: c.storage.typname,
    typmod: c.storage.typmod,
  }));
  if (target.columns === undefined || target.columns.length === 0) return all;
  const byName = new Map(all.map((c) => [c.name, c]));
  return target.columns.map((name) => {
    const c = byName.get(name);
    // The column plan checked the names; a column gone since would fail the COPY either way.
    if (c === undefined) throw new Error(`internal: column ${name} of ${target.table} is not in the catalog`);
    return c;
  });
}

/** The session's facts that change how input text is read; read once per connection. */
export async function readSessionFacts(client: pg.Client): Promise<SessionFacts> {
  const r = await client.query<{ v: string; tz: string; ds: string; enc: string }>(
    "SELECT current_setting('server_version_num') AS v, current_setting('TimeZone') AS tz, current_setting('DateStyle') AS ds, current_setting('server_encoding') AS enc",
  );
  const row = r.rows[0]!;
  return { serverVersionNum: Number(row.v), timeZone: row.tz, dateStyle: row.ds, serverEncoding: row.enc };
}
