import type pg from 'pg';
import type { Chunk } from '../../core/chunk.js';
import { createOnce } from '../../core/create-once.js';
import { LoadError } from '../../core/load-error.js';
import type { ByteRange } from '../../input/byte-ranges.js';
import { fileKeyOf, identityDifference, sameContent } from './file-identity.js';
import { formatCount } from '../../core/format-count.js';

/**
 * The ledger: which byte ranges of which input are in the table, committed in the same
 * transaction as their rows, so a crash at any moment leaves it exactly true, and a rerun
 * loads only what it does not cover. It lives in the target database, schema `pgsurge`,
 * created on first use.
 */
export const LEDGER_SCHEMA = 'pgsurge';

/** A refused row's columns, the same in the coordinator's ledger and in a Citus node's (src/writer/citus/node-ledger.ts). */
export const REJECT_ROW_COLUMNS = `line bigint,
     byte_offset bigint NOT NULL,
     sqlstate text,
     column_name text,
     message text NOT NULL,
     record bytea NOT NULL,
     rejected_at timestamptz NOT NULL DEFAULT clock_timestamp()`;

const DDL = [
  `CREATE SCHEMA IF NOT EXISTS ${LEDGER_SCHEMA}`,
  // One row per input of a load: what the file was when the load began.
  `CREATE TABLE IF NOT EXISTS ${LEDGER_SCHEMA}.load_files (
     load_id text NOT NULL,
     file text NOT NULL,
     table_name text NOT NULL,
     table_oid oid NOT NULL,
     file_identity text,
     started_at timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (load_id, file))`,
  // One row per committed chunk (or part of one), in the chunk's own transaction.
  `CREATE TABLE IF NOT EXISTS ${LEDGER_SCHEMA}.chunks (
     load_id text NOT NULL,
     file text NOT NULL,
     table_name text NOT NULL,
     table_oid oid NOT NULL,
     file_identity text,
     byte_start bigint NOT NULL,
     byte_end bigint NOT NULL,
     rows_loaded bigint NOT NULL,
     rows_rejected bigint NOT NULL,
     rows_skipped bigint NOT NULL,
     committed_at timestamptz NOT NULL DEFAULT clock_timestamp())`,
  // The table's file when the chunk committed: TRUNCATE (and VACUUM FULL, CLUSTER, ALTER
  // TABLE … TYPE) give a table a new one, so a resume can tell its rows may be gone. Added
  // to a ledger made by an earlier pgsurge only when missing: ALTER TABLE needs the owner
  // and locks the ledger even when there is nothing to add.
  `DO $$ BEGIN
     IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = '${LEDGER_SCHEMA}.chunks'::regclass AND attname = 'table_filenode' AND NOT attisdropped) THEN
       ALTER TABLE ${LEDGER_SCHEMA}.chunks ADD COLUMN table_filenode oid;
     END IF;
   END $$`,
  // Which part of a split load (`--part K/N`, as `K/N`) committed the chunk; NULL for a whole load.
  `DO $$ BEGIN
     IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = '${LEDGER_SCHEMA}.chunks'::regclass AND attname = 'part' AND NOT attisdropped) THEN
       ALTER TABLE ${LEDGER_SCHEMA}.chunks ADD COLUMN part text;
     END IF;
   END $$`,
  // The parts of a split load that have started, and the bytes of input each one owns: \`pgsurge status\` reads them.
  `CREATE TABLE IF NOT EXISTS ${LEDGER_SCHEMA}.load_parts (
     load_id text NOT NULL,
     part text NOT NULL,
     bytes_total bigint,
     started_at timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (load_id, part))`,
  // How each input is read (format, header, delimiters, NULL marker, encoding, skip/limit,
  // --on-conflict: `readOptionsOf` in src/load/load-rerun.ts), and when its load completed:
  // a rerun that reads it another way, or of a load that completed, is told apart from a resume.
  // NULL in rows an earlier pgsurge wrote: such a load resumes as it did.
  ...[
    ['read_options', 'text'],
    ['completed_at', 'timestamptz'],
  ].map(
    ([column, type]) => `DO $$ BEGIN
     IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = '${LEDGER_SCHEMA}.load_files'::regclass AND attname = '${column}' AND NOT attisdropped) THEN
       ALTER TABLE ${LEDGER_SCHEMA}.load_files ADD COLUMN ${column} ${type};
     END IF;
   END $$`,
  ),
  `CREATE INDEX IF NOT EXISTS chunks_by_range ON ${LEDGER_SCHEMA}.chunks (load_id, file, byte_start)`,
  `CREATE INDEX IF NOT EXISTS chunks_by_table ON ${LEDGER_SCHEMA}.chunks (table_oid)`,
  // Rows the server refused, with their bytes, committed with their chunk: the reject file is rebuilt from these.
  `CREATE TABLE IF NOT EXISTS ${LEDGER_SCHEMA}.rejects (
     load_id text NOT NULL,
     file text NOT NULL,
     table_oid oid NOT NULL,
     ${REJECT_ROW_COLUMNS})`,
  `CREATE INDEX IF NOT EXISTS rejects_by_load ON ${LEDGER_SCHEMA}.rejects (load_id, file, byte_offset)`,
  // A JSON array chunk's first element (1-based; NULL for other inputs), in both tables: its
  // byte range is the parser's block and may be another chunk's too, so this names it.
  ...['chunks', 'rejects'].map(
    (t) => `DO $$ BEGIN
     IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = '${LEDGER_SCHEMA}.${t}'::regclass AND attname = 'first_record' AND NOT attisdropped) THEN
       ALTER TABLE ${LEDGER_SCHEMA}.${t} ADD COLUMN first_record bigint;
     END IF;
   END $$`,
  ),
];

/**
 * Creates the ledger on first use (src/core/create-once.ts: any number of pgsurge processes
 * starting at once, one creates it and the others find it).
 */
export async function ensureLedger(client: pg.Client): Promise<void> {
  // Only what is missing is created: CREATE … IF NOT EXISTS checks the privilege to create
  // before it looks, so a user without CREATE on the database (or the schema) could not
  // use a ledger an owner made for it.
  let schemaThere = false;
  try {
    await createOnce(client, 'ledger', {
      async missing(c) {
        const have = await c.query<{ schema: boolean; complete: boolean }>(
          `SELECT to_regnamespace('${LEDGER_SCHEMA}') IS NOT NULL AS schema,
                  to_regclass('${LEDGER_SCHEMA}.load_files') IS NOT NULL AND to_regclass('${LEDGER_SCHEMA}.rejects') IS NOT NULL
                  AND to_regclass('${LEDGER_SCHEMA}.load_parts') IS NOT NULL
                  AND to_regclass('${LEDGER_SCHEMA}.chunks_by_range') IS NOT NULL AND to_regclass('${LEDGER_SCHEMA}.chunks_by_table') IS NOT NULL
                  AND to_regclass('${LEDGER_SCHEMA}.rejects_by_load') IS NOT NULL
                  AND EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('${LEDGER_SCHEMA}.chunks') AND attname = 'table_filenode' AND NOT attisdropped)
                  AND EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('${LEDGER_SCHEMA}.chunks') AND attname = 'part' AND NOT attisdropped)
                  AND (SELECT count(*) FROM pg_attribute WHERE attrelid IN (to_regclass('${LEDGER_SCHEMA}.chunks'), to_regclass('${LEDGER_SCHEMA}.rejects')) AND attname = 'first_record' AND NOT attisdropped) = 2
                  AND (SELECT count(*) FROM pg_attribute WHERE attrelid = to_regclass('${LEDGER_SCHEMA}.load_files') AND attname IN ('read_options', 'completed_at') AND NOT attisdropped) = 2 AS complete`,
        );
        schemaThere = have.rows[0]?.schema === true;
        return have.rows[0]?.complete !== true;
      },
      async create(c) {
        for (const sql of DDL) {
          if (schemaThere && sql === DDL[0]) continue;
          await c.query(sql);
        }
      },
    });
  } catch (error) {
    const e = error as { code?: string; message: string };
    if (e.code === '42501') {
      throw new LoadError('bad-option', `cannot create the load ledger (schema ${LEDGER_SCHEMA}) in the target database: ${e.message}`, {
        hint: `grant CREATE on the database to this user, or have an owner run CREATE SCHEMA ${LEDGER_SCHEMA}; GRANT USAGE, CREATE ON SCHEMA ${LEDGER_SCHEMA} TO <this user> (or --no-ledger)`,
        cause: error,
      });
    }
    throw error;
  }
}

/** One input of a load, as the ledger knows it. */
export interface LedgerInput {
  /** Absolute path, or `-` for stdin. */
  readonly file: string;
  /** The table's qualified name as resolved on the server. */
  readonly tableName: string;
  readonly tableOid: number;
  /** `size:mtime:hash`; undefined for stdin and pipes. */
  readonly identity: string | undefined;
  /** How the input is read (`readOptionsOf`, src/load/load-rerun.ts), as JSON. */
  readonly readOptions: string;
}

/** What earlier runs of a load committed for one input. */
export interface Covered {
  /** Committed byte ranges, sorted and merged. */
  readonly ranges: readonly ByteRange[];
  readonly loaded: number;
  readonly rejected: number;
  readonly skipped: number;
  /** When a run of the load ended with every input read (undefined: it has not, or an earlier pgsurge ran it). */
  readonly completedAt?: Date;
}

export const NOTHING_COVERED: Covered = { ranges: [], loaded: 0, rejected: 0, skipped: 0 };

/** What a rerun changes in the ledger before it loads (decided in src/load/load-rerun.ts), by absolute path. */
export interface RerunChanges {
  /** Files that grew since the load, their loaded part unchanged: the ledger takes their new identity, the rest of them loads. */
  readonly appended: ReadonlySet<string>;
  /** Files read another way than the load's earlier runs, which committed no row of them: those runs are forgotten. */
  readonly restart: ReadonlySet<string>;
}

/**
 * Registers the inputs of a load (or finds them from an earlier run) and returns, per
 * input, what is already committed. Refuses to resume onto a file that changed; forgets
 * ledger rows of a table that was dropped and created again since (they describe rows
 * that are gone).
 */
export async function openLoad(
  client: pg.Client,
  loadId: string,
  inputs: readonly LedgerInput[],
  options: { resume: boolean; part?: { label: string; shares: ReadonlyMap<string, ByteRange> }; rerun?: RerunChanges },
): Promise<Map<string, Covered>> {
  const known = await client.query<{ file: string; table_oid: number; file_identity: string | null; read_options: string | null; completed_at: Date | null }>(
    `SELECT file, table_oid::int8 AS table_oid, file_identity, read_options, completed_at FROM ${LEDGER_SCHEMA}.load_files WHERE load_id = $1`,
    [loadId],
  );
  if (options.resume && known.rows.length === 0) {
    throw new LoadError('bad-option', `there is no earlier load with id ${loadId} to resume`, {
      hint: 'check --load-id (the id is printed when a load starts and in its summary), or drop --resume to start a new load',
    });
  }
  const byFile = new Map(known.rows.map((r) => [r.file, r]));
  const covered = new Map<string, Covered>();
  for (const input of inputs) {
    let was = byFile.get(input.file);
    if (!was) {
      // The same file (device and inode) named by another path (a symlink, a hard link, a
      // moved file): its ledger rows follow it to this name, so it resumes, not loads again.
      const key = input.identity === undefined ? undefined : fileKeyOf(input.identity);
      const renamed = key === undefined ? undefined : known.rows.find((r) => r.file_identity !== null && fileKeyOf(r.file_identity) === key && !inputs.some((i) => i.file === r.file));
      if (renamed) {
        // routed_files too (a routed Citus load's): its nodes' part rows name the file by the generation kept there.
        for (const t of ['load_files', 'chunks', 'rejects', ...((await hasLedgerTable(client, 'routed_files')) ? ['routed_files'] : [])]) {
          await client.query(`UPDATE ${LEDGER_SCHEMA}.${t} SET file = $3 WHERE load_id = $1 AND file = $2`, [loadId, renamed.file, input.file]);
        }
        byFile.delete(renamed.file);
        was = { ...renamed, file: input.file };
        byFile.set(input.file, was);
      }
    }
    if (was && options.rerun?.restart.has(input.file)) {
      await forgetFile(client, loadId, input.file);
      was = undefined;
    }
    if (was && was.read_options !== null && was.read_options !== input.readOptions) {
      // src/load/load-rerun.ts refuses this with the options named; this is the ledger's own guard.
      throw new LoadError('bad-option', `${input.file} is read with other options than load ${loadId} began with`, { hint: 'rerun with the options it began with, or start a new load (--again, or --truncate)' });
    }
    if (was && was.file_identity !== null && input.identity !== undefined && options.rerun?.appended.has(input.file)) {
      // A part's share is cut from the size it reads now: the bytes between the shares cut from the old size and the new would be no part's.
      if (options.part) {
        throw new LoadError('bad-option', `${input.file} grew since load ${loadId} began reading it: --part ${options.part.label} would cut its share from the new size, and rows between the shares cut before and now would be read by no part; nothing was loaded`, {
          hint: 'run the load without --part: it reads what no part committed, the rows appended with it',
        });
      }
      // It grew, its loaded part unchanged: the load goes on to its end under its new identity.
      await client.query(`UPDATE ${LEDGER_SCHEMA}.load_files SET file_identity = $3, completed_at = NULL WHERE load_id = $1 AND file = $2`, [loadId, input.file, input.identity]);
      was = { ...was, file_identity: input.identity, completed_at: null };
    }
    if (was && was.file_identity !== null && input.identity !== undefined && !sameContent(was.file_identity, input.identity)) {
      throw new LoadError('bad-input', `${input.file} is not the file load ${loadId} began with: ${identityDifference(was.file_identity, input.identity)}`, {
        hint: 'resuming onto a different file would lose or double rows; start a new load (another --load-id, or --truncate)',
      });
    }
    if (was && Number(was.table_oid) !== input.tableOid) {
      await forgetFile(client, loadId, input.file);
    }
    if (was && Number(was.table_oid) === input.tableOid) await checkNotRewritten(client, loadId, input, options);
    if (!was || Number(was.table_oid) !== input.tableOid) {
      await client.query(
        `INSERT INTO ${LEDGER_SCHEMA}.load_files (load_id, file, table_name, table_oid, file_identity, read_options) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (load_id, file) DO UPDATE SET table_name = excluded.table_name, table_oid = excluded.table_oid, file_identity = excluded.file_identity,
           read_options = excluded.read_options, completed_at = NULL, started_at = now()`,
        [loadId, input.file, input.tableName, input.tableOid, input.identity ?? null, input.readOptions],
      );
      covered.set(input.file, NOTHING_COVERED);
      continue;
    }
    // A load an earlier pgsurge began: it keeps how this run reads the input from now on.
    if (was.read_options === null) await client.query(`UPDATE ${LEDGER_SCHEMA}.load_files SET read_options = $3 WHERE load_id = $1 AND file = $2`, [loadId, input.file, input.readOptions]);
    const ranges = await coveredRanges(client, loadId, input.file, options.part?.shares.get(input.file));
    covered.set(input.file, was.completed_at === null ? ranges : { ...ranges, completedAt: was.completed_at });
  }
  if (options.part) {
    const bytes = [...options.part.shares.values()].reduce((a, r) => a + (r.end - r.start), 0);
    await client.query(
      `INSERT INTO ${LEDGER_SCHEMA}.load_parts (load_id, part, bytes_total) VALUES ($1, $2, $3) ON CONFLICT (load_id, part) DO UPDATE SET bytes_total = excluded.bytes_total`,
      [loadId, options.part.label, bytes],
    );
  }
  return covered;
}

/**
 * The chunks an earlier run committed went into the table's file of that time; if the
 * table has another file now, it was emptied (TRUNCATE) or rewritten (VACUUM FULL,
 * CLUSTER, ALTER TABLE) behind the load's back, and resuming would skip rows that may no
 * longer be there. Refused, unless the user resumes on purpose (`--resume`).
 */
async function checkNotRewritten(client: pg.Client, loadId: string, input: LedgerInput, options: { resume: boolean }): Promise<void> {
  const r = await client.query<{ rows: string | null; current: string | null }>(
    `SELECT sum(rows_loaded)::text AS rows, pg_relation_filenode($3::oid)::text AS current FROM ${LEDGER_SCHEMA}.chunks
     WHERE load_id = $1 AND file = $2 AND table_filenode IS NOT NULL AND table_filenode IS DISTINCT FROM pg_relation_filenode($3::oid)`,
    [loadId, input.file, input.tableOid],
  );
  const rows = r.rows[0]?.rows;
  // No chunk of another file of the table, or only chunks that loaded nothing (every row rejected): nothing can be missing.
  if (rows === null || rows === undefined || Number(rows) === 0) return;
  if (options.resume) {
    await client.query(`UPDATE ${LEDGER_SCHEMA}.chunks SET table_filenode = pg_relation_filenode($3::oid) WHERE load_id = $1 AND file = $2 AND table_filenode IS NOT NULL`, [loadId, input.file, input.tableOid]);
    return;
  }
  throw new LoadError('bad-option', `${input.tableName} was emptied or rewritten since load ${loadId} put ${formatCount(Number(rows))} rows of ${input.file} into it (TRUNCATE, VACUUM FULL, CLUSTER or ALTER TABLE gave it a new file): resuming would skip rows it may no longer hold`, {
    hint: 'start over with --truncate (or another --load-id); if the rows are still there (VACUUM FULL, CLUSTER), resume anyway with --resume',
  });
}

/**
 * After pgsurge itself rewrites a table (ALTER TABLE … SET LOGGED / UNLOGGED), in the same
 * transaction: the ledger's chunks of it follow it to its new file.
 */
export async function followRewrite(client: pg.Client, tableName: string): Promise<void> {
  // No ledger here, one from an earlier pgsurge without the column, or one this user may
  // not write (a --no-ledger user): nothing to follow, and SET LOGGED must not fail for it.
  const exists = await client.query<{ ok: boolean }>(
    `SELECT CASE WHEN to_regclass('${LEDGER_SCHEMA}.chunks') IS NULL THEN false
                 ELSE has_schema_privilege('${LEDGER_SCHEMA}', 'USAGE')
                      AND has_table_privilege('${LEDGER_SCHEMA}.chunks', 'SELECT')
                      AND has_table_privilege('${LEDGER_SCHEMA}.chunks', 'UPDATE')
                      AND EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('${LEDGER_SCHEMA}.chunks') AND attname = 'table_filenode' AND NOT attisdropped) END AS ok`,
  );
  if (exists.rows[0]?.ok !== true) return;
  await client.query(`UPDATE ${LEDGER_SCHEMA}.chunks SET table_filenode = pg_relation_filenode(table_oid) WHERE table_oid = $1::regclass AND table_filenode IS NOT NULL`, [tableName]);
}

/** An earlier load of a file into a table, as a rerun weighs it (src/load/load-rerun.ts). */
export interface EarlierLoad {
  readonly loadId: string;
  /** The path it was loaded from. */
  readonly file: string;
  readonly identity: string;
  /** How it was read (JSON); null when an earlier pgsurge loaded it. */
  readonly readOptions: string | null;
  readonly startedAt: Date;
  readonly completedAt: Date | undefined;
  /** What its runs committed of this file. */
  readonly loaded: number;
  readonly rejected: number;
}

/**
 * The loads of this table that read this file, by its path or as the same file (device and
 * inode) under another, latest first: what they read it as, and what they committed of it.
 * `loadId` limits them to one load.
 */
export async function earlierLoadsOfFile(client: pg.Client, input: LedgerInput, loadId?: string): Promise<EarlierLoad[]> {
  const key = input.identity === undefined ? undefined : fileKeyOf(input.identity);
  const r = await client.query<{ load_id: string; file: string; file_identity: string; read_options: string | null; started_at: Date; completed_at: Date | null; loaded: string; rejected: string }>(
    `SELECT f.load_id, f.file, f.file_identity, f.read_options, f.started_at, f.completed_at,
            coalesce(sum(c.rows_loaded), 0)::text AS loaded, coalesce(sum(c.rows_rejected), 0)::text AS rejected
       FROM ${LEDGER_SCHEMA}.load_files f
       LEFT JOIN ${LEDGER_SCHEMA}.chunks c ON c.load_id = f.load_id AND c.file = f.file
      WHERE f.table_oid = $1 AND f.file_identity IS NOT NULL AND ($4::text IS NULL OR f.load_id = $4)
        AND (f.file = $2 OR ($3::text IS NOT NULL AND split_part(f.file_identity, ':', 4) || ':' || split_part(f.file_identity, ':', 5) = $3))
      GROUP BY f.load_id, f.file, f.file_identity, f.read_options, f.started_at, f.completed_at
      ORDER BY f.started_at DESC`,
    [input.tableOid, input.file, key ?? null, loadId ?? null],
  );
  return r.rows.map((row) => ({
    loadId: row.load_id,
    file: row.file,
    identity: row.file_identity,
    readOptions: row.read_options,
    startedAt: row.started_at,
    completedAt: row.completed_at ?? undefined,
    loaded: Number(row.loaded),
    rejected: Number(row.rejected),
  }));
}

/** A run that read every input to its end: the load is completed (a rerun loads nothing unless the files grew). */
export async function markCompleted(client: pg.Client, loadId: string, files: readonly string[]): Promise<void> {
  await client.query(`UPDATE ${LEDGER_SCHEMA}.load_files SET completed_at = now() WHERE load_id = $1 AND file = ANY($2::text[])`, [loadId, files]);
}

async function forgetFile(client: pg.Client, loadId: string, file: string): Promise<void> {
  await client.query(`DELETE FROM ${LEDGER_SCHEMA}.chunks WHERE load_id = $1 AND file = $2`, [loadId, file]);
  await client.query(`DELETE FROM ${LEDGER_SCHEMA}.rejects WHERE load_id = $1 AND file = $2`, [loadId, file]);
  // A routed Citus load's record of the file: the next run starts a new generation, so its nodes' part rows of this one count for nothing.
  if (await hasLedgerTable(client, 'routed_files')) await client.query(`DELETE FROM ${LEDGER_SCHEMA}.routed_files WHERE load_id = $1 AND file = $2`, [loadId, file]);
}

/** Whether the ledger has table `name` (those a routed Citus load adds exist only once one ran). */
async function hasLedgerTable(client: pg.Client, name: string): Promise<boolean> {
  const r = await client.query<{ ok: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS ok`, [`${LEDGER_SCHEMA}.${name}`]);
  return r.rows[0]?.ok === true;
}

/** `--truncate` empties a table: every ledger row about it, of any load, goes with its rows (call in the TRUNCATE's transaction). */
export async function forgetTable(client: pg.Client, tableOid: number): Promise<void> {
  // With --no-ledger the ledger may not exist; if it does, its rows about this table are void all the same.
  const exists = await client.query<{ ok: boolean }>(`SELECT to_regclass('${LEDGER_SCHEMA}.chunks') IS NOT NULL AS ok`);
  if (exists.rows[0]?.ok !== true) return;
  for (const t of ['chunks', 'rejects', 'load_files']) {
    await client.query(`DELETE FROM ${LEDGER_SCHEMA}.${t} WHERE table_oid = $1`, [tableOid]);
  }
  // A routed Citus load's record of the table's inputs: the next load of it starts a new
  // generation, so the part rows its nodes hold from before (rows now gone) count for nothing.
  if (await hasLedgerTable(client, 'routed_files')) await client.query(`DELETE FROM ${LEDGER_SCHEMA}.routed_files WHERE table_oid = $1`, [tableOid]);
}

/**
 * The committed ranges of a file (every run's and part's: a part never loads a range
 * another committed), and the rows of those inside `share`, the part's own.
 */
async function coveredRanges(client: pg.Client, loadId: string, file: string, share: ByteRange | undefined): Promise<Covered> {
  const r = await client.query<{ byte_start: string; byte_end: string; rows_loaded: string; rows_rejected: string; rows_skipped: string }>(
    `SELECT byte_start, byte_end, rows_loaded, rows_rejected, rows_skipped FROM ${LEDGER_SCHEMA}.chunks WHERE load_id = $1 AND file = $2 ORDER BY byte_start`,
    [loadId, file],
  );
  const ranges: ByteRange[] = [];
  let loaded = 0;
  let rejected = 0;
  let skipped = 0;
  for (const row of r.rows) {
    const start = Number(row.byte_start);
    const end = Number(row.byte_end);
    if (share === undefined || (start >= share.start && start < share.end)) {
      loaded += Number(row.rows_loaded);
      rejected += Number(row.rows_rejected);
      skipped += Number(row.rows_skipped);
    }
    const last = ranges[ranges.length - 1];
    if (last && start <= last.end) ranges[ranges.length - 1] = { start: last.start, end: Math.max(last.end, end) };
    else ranges.push({ start, end });
  }
  return { ranges, loaded, rejected, skipped };
}

/** A row the server refused, as the ledger and the reject file keep it. */
export interface RejectedRow {
  /** The path as the user named it (for the reject log). */
  readonly file: string;
  readonly line: number | undefined;
  readonly byteOffset: number;
  readonly sqlstate: string | undefined;
  readonly column: string | undefined;
  readonly message: string;
  /**
   * The row's bytes as read from the input, its line ending included (`\n`, `\r\n` or
   * `\r`, the input's own); the input's last record, when it has none, is given the
   * input's. The reject file writes them as they are.
   */
  readonly record: Buffer;
}

/** A row of the ledger's rejects table, as node-postgres returns it. */
export interface RejectRecord {
  line: string | null;
  byte_offset: string;
  sqlstate: string | null;
  column_name: string | null;
  message: string;
  record: Buffer;
}

export const REJECT_COLUMNS = 'line, byte_offset, sqlstate, column_name, message, record';

export function fromRejectRecord(row: RejectRecord): Omit<RejectedRow, 'file'> {
  return {
    line: row.line === null ? undefined : Number(row.line),
    byteOffset: Number(row.byte_offset),
    sqlstate: row.sqlstate ?? undefined,
    column: row.column_name ?? undefined,
    message: row.message,
    record: row.record,
  };
}

const CHUNK_COLUMNS = 'load_id, file, table_name, table_oid, file_identity, byte_start, byte_end, rows_loaded, rows_rejected, rows_skipped, part, first_record, table_filenode';

/** An integer as SQL text; anything else is a bug, not something to quote. */
function wholeNumber(n: number): string {
  if (!Number.isSafeInteger(n)) throw new Error(`internal: ${n} is not a whole number`);
  return String(n);
}

/** What the workers need of a ledger; `NO_LEDGER` for `--no-ledger`. */
export interface ChunkLedger {
  /**
   * The statement that records a chunk without rejects, values inlined, to send with the
   * chunk's COMMIT in one round trip; empty when nothing is recorded.
   */
  recordStatement(client: pg.Client, chunk: Chunk, counts: { loaded: number; skipped: number }): string;
  record(client: pg.Client, chunk: Chunk, counts: { loaded: number; rejected: number; skipped: number }, rejects: readonly RejectedRow[]): Promise<void>;
  committed(client: pg.Client, chunk: Chunk): Promise<{ loaded: number; rejected: number; skipped: number } | undefined>;
  rejectsOf(client: pg.Client, chunk: Chunk): Promise<RejectedRow[]>;
  earlierRejects(client: pg.Client, file: string): Promise<Omit<RejectedRow, 'file'>[]>;
}

/**
 * `--no-ledger`: nothing recorded, so nothing to resume from, and a chunk whose COMMIT
 * reply was lost cannot be told apart from one that failed (it is loaded again).
 */
export const NO_LEDGER: ChunkLedger = {
  recordStatement: () => '',
  record: async () => undefined,
  committed: async () => undefined,
  rejectsOf: async () => [],
  earlierRejects: async () => [],
};

/** Where a load's ledger rows go; one per load, shared by its workers. */
export class LedgerWriter implements ChunkLedger {
  constructor(
    readonly loadId: string,
    /** Input path as named → its ledger entry. */
    private readonly inputs: ReadonlyMap<string, LedgerInput>,
    /** `K/N` for a part of a split load (`--part`): its chunk rows say so, and its rejects are those of its shares. */
    private readonly part?: { readonly label: string; readonly shares: ReadonlyMap<string, ByteRange> },
  ) {}

  private input(chunk: Chunk): LedgerInput {
    const input = this.inputs.get(chunk.target.file);
    if (!input) throw new Error(`internal: no ledger entry for ${chunk.target.file}`);
    return input;
  }

  /** The chunk row's values, in `CHUNK_COLUMNS` order up to `first_record` (`table_filenode` is the server's). */
  private chunkRow(chunk: Chunk, counts: { loaded: number; rejected: number; skipped: number }): (string | number | undefined)[] {
    const input = this.input(chunk);
    const { byteOffset, byteLength, firstRecord } = chunk.location;
    return [this.loadId, input.file, input.tableName, input.tableOid, input.identity, byteOffset, byteOffset + byteLength, counts.loaded, counts.rejected, counts.skipped, this.part?.label, firstRecord];
  }

  /** The chunk's ledger row, inlined (see `ChunkLedger.recordStatement`). */
  recordStatement(client: pg.Client, chunk: Chunk, counts: { loaded: number; skipped: number }): string {
    const values = this.chunkRow(chunk, { ...counts, rejected: 0 }).map((v) => (v === undefined ? 'NULL' : typeof v === 'number' ? wholeNumber(v) : client.escapeLiteral(v)));
    // values[3] is table_oid, as $4 is in `record`.
    return `INSERT INTO ${LEDGER_SCHEMA}.chunks (${CHUNK_COLUMNS}) VALUES (${values.join(', ')}, pg_relation_filenode(${values[3]}::oid))`;
  }

  /** Records a chunk inside its open transaction. */
  async record(client: pg.Client, chunk: Chunk, counts: { loaded: number; rejected: number; skipped: number }, rejects: readonly RejectedRow[]): Promise<void> {
    const input = this.input(chunk);
    await client.query(
      `INSERT INTO ${LEDGER_SCHEMA}.chunks (${CHUNK_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, pg_relation_filenode($4::oid))`,
      this.chunkRow(chunk, counts).map((v) => v ?? null),
    );
    for (const r of rejects) {
      await client.query(
        `INSERT INTO ${LEDGER_SCHEMA}.rejects (load_id, file, table_oid, line, byte_offset, sqlstate, column_name, message, record, first_record) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [this.loadId, input.file, input.tableOid, r.line ?? null, r.byteOffset, r.sqlstate ?? null, r.column ?? null, r.message, r.record, chunk.location.firstRecord ?? null],
      );
    }
  }

  /**
   * After a connection died around COMMIT: did the chunk make it? The ledger row answers,
   * so a chunk whose COMMIT reply was lost is not loaded twice.
   */
  async committed(client: pg.Client, chunk: Chunk): Promise<{ loaded: number; rejected: number; skipped: number } | undefined> {
    const input = this.input(chunk);
    const { byteOffset, byteLength, firstRecord } = chunk.location;
    // A JSON array chunk is named by its first element too: its byte range may be another's.
    const r = await client.query<{ rows_loaded: string; rows_rejected: string; rows_skipped: string }>(
      `SELECT rows_loaded, rows_rejected, rows_skipped FROM ${LEDGER_SCHEMA}.chunks
        WHERE load_id = $1 AND file = $2 AND byte_start = $3 AND byte_end = $4 AND first_record IS NOT DISTINCT FROM $5`,
      [this.loadId, input.file, byteOffset, byteOffset + byteLength, firstRecord ?? null],
    );
    const row = r.rows[0];
    return row ? { loaded: Number(row.rows_loaded), rejected: Number(row.rows_rejected), skipped: Number(row.rows_skipped) } : undefined;
  }

  /** The rejected rows the ledger holds for a committed chunk. */
  async rejectsOf(client: pg.Client, chunk: Chunk): Promise<RejectedRow[]> {
    const input = this.input(chunk);
    const { byteOffset, byteLength, firstRecord } = chunk.location;
    // A JSON array chunk's rejects carry its first element (their byte offsets are not the file's).
    const r =
      firstRecord === undefined
        ? await client.query<RejectRecord>(
            `SELECT ${REJECT_COLUMNS} FROM ${LEDGER_SCHEMA}.rejects
              WHERE load_id = $1 AND file = $2 AND byte_offset >= $3 AND byte_offset < $4 ORDER BY byte_offset`,
            [this.loadId, input.file, byteOffset, byteOffset + byteLength],
          )
        : await client.query<RejectRecord>(`SELECT ${REJECT_COLUMNS} FROM ${LEDGER_SCHEMA}.rejects WHERE load_id = $1 AND file = $2 AND first_record = $3 ORDER BY byte_offset`, [
            this.loadId,
            input.file,
            firstRecord,
          ]);
    return r.rows.map((row) => ({ file: chunk.location.file, ...fromRejectRecord(row) }));
  }

  /** Rows earlier runs of this load rejected, oldest input position first: the reject file is rebuilt from them. */
  async earlierRejects(client: pg.Client, file: string): Promise<Omit<RejectedRow, 'file'>[]> {
    const input = this.inputs.get(file);
    if (!input) return [];
    // A part's reject file holds the rows of its own share only.
    const share = this.part?.shares.get(file) ?? { start: 0, end: Number.MAX_SAFE_INTEGER };
    const r = await client.query<RejectRecord>(
      `SELECT ${REJECT_COLUMNS} FROM ${LEDGER_SCHEMA}.rejects WHERE load_id = $1 AND file = $2 AND byte_offset >= $3 AND byte_offset < $4 ORDER BY byte_offset`,
      [this.loadId, input.file, share.start, share.end],
    );
    return r.rows.map(fromRejectRecord);
  }
}

/**
 * An unlogged table that crash recovery emptied: it keeps its file (so `checkNotRewritten`
 * cannot tell), but every row the ledger says went into that file is gone. True when the
 * table is unlogged, holds no row, and the ledger counts rows loaded into its current file.
 */
export async function unloggedTableReset(client: pg.Client, tableOid: number, tableName: string): Promise<number> {
  const r = await client.query<{ u: boolean }>("SELECT relpersistence = 'u' AS u FROM pg_class WHERE oid = $1", [tableOid]);
  if (r.rows[0]?.u !== true) return 0;
  const exists = await client.query<{ ok: boolean }>(`SELECT to_regclass('${LEDGER_SCHEMA}.chunks') IS NOT NULL AS ok`);
  if (exists.rows[0]?.ok !== true) return 0;
  const empty = (await client.query<{ e: boolean }>(`SELECT NOT EXISTS (SELECT 1 FROM ${tableName}) AS e`)).rows[0]?.e === true;
  if (!empty) return 0;
  const rows = await client.query<{ n: string }>(
    `SELECT coalesce(sum(rows_loaded), 0)::text AS n FROM ${LEDGER_SCHEMA}.chunks WHERE table_oid = $1 AND table_filenode IS NOT DISTINCT FROM pg_relation_filenode($1::oid)`,
    [tableOid],
  );
  return Number(rows.rows[0]?.n ?? 0);
}

/** What the ledger holds of a load, all its runs and inputs together. */
export async function ledgerTotals(client: pg.Client, loadId: string): Promise<{ loaded: number; rejected: number; skipped: number }> {
  const r = await client.query<{ l: string; r: string; s: string }>(
    `SELECT coalesce(sum(rows_loaded), 0)::text AS l, coalesce(sum(rows_rejected), 0)::text AS r, coalesce(sum(rows_skipped), 0)::text AS s FROM ${LEDGER_SCHEMA}.chunks WHERE load_id = $1`,
    [loadId],
  );
  const row = r.rows[0]!;
  return { loaded: Number(row.l), rejected: Number(row.r), skipped: Number(row.s) };
}
