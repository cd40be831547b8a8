import type pg from 'pg';
import type { LoadTarget } from '../core/chunk.js';
import { formatCount } from '../core/format-count.js';
import { LoadError } from '../core/load-error.js';
import { compressionOf } from '../input/file-blocks.js';
import { earlierLoadsOfFile, type EarlierLoad, type LedgerInput, type RerunChanges } from '../writer/ledger/ledger.js';
import { grewFrom, identityDifference, sameContent } from '../writer/ledger/file-identity.js';
import { DEFAULT_ON_CONFLICT, type OnConflict } from '../writer/on-conflict.js';

/**
 * How an input is read, as the ledger keeps it: the options that decide which bytes are
 * which rows and what a row does to the table (format, header, columns, delimiter, quote,
 * escape, NULL marker, encoding, compression, JSON mapping, skip, limit, --on-conflict,
 * `--mode delete` (its rows' keys are deleted, not loaded), and
 * the DateStyle and the JSON keys' columns `--create` made: which date a day-first or
 * month-first value makes, which column a key fills), and `more` (the writer's own: an
 * upsert's `--key`, `--update-columns` and the file's place among the files), as a flag → value JSON object of those given (the format and --on-conflict always), keys sorted.
 */
export function readOptionsOf(input: LoadTarget, onConflict: OnConflict | undefined, deletes = false, tableColumns?: readonly string[], more: Readonly<Record<string, string | undefined>> = {}): string {
  const o = input.input ?? {};
  // `--columns` naming every column COPY fills, in the table's order, reads the file as no `--columns` does.
  const everyColumn = o.columns !== undefined && tableColumns !== undefined && o.columns.join(',') === tableColumns.join(',');
  const given: Record<string, string | undefined> = {
    '--format': input.format,
    '--header': o.header,
    '--columns': everyColumn ? undefined : o.columns?.join(','),
    '--delimiter': o.delimiter,
    '--quote': o.quote,
    '--escape': o.escape,
    '--null': o.null,
    '--encoding': o.encoding,
    '--compression': o.compression,
    '--json-path': o.jsonPath,
    '--ignore-extra-keys': o.ignoreExtraKeys ? 'yes' : undefined,
    '--missing': o.missing,
    '--skip': o.skip === undefined ? undefined : String(o.skip),
    '--limit': o.limit === undefined ? undefined : String(o.limit),
    '--mode': deletes ? 'delete' : undefined,
    '--on-conflict': onConflict ?? DEFAULT_ON_CONFLICT,
    DateStyle: input.described?.datestyle,
    'JSON keys': o.keys === undefined ? undefined : JSON.stringify(Object.entries(o.keys).sort(([a], [b]) => (a < b ? -1 : 1))),
    ...more,
  };
  return JSON.stringify(Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : 1))));
}

/** The options that differ, as `--header: not given → match`. */
export function readOptionChanges(was: string, now: string): string[] {
  const a = JSON.parse(was) as Record<string, string>;
  const b = JSON.parse(now) as Record<string, string>;
  const shown = (v: string | undefined): string => (v === undefined ? 'not given' : JSON.stringify(v).replace(/^"([A-Za-z0-9_.,-]+)"$/, '$1'));
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].sort().filter((k) => a[k] !== b[k]).map((k) => `${k}: ${shown(a[k])} → ${shown(b[k])}`);
}

/** An input as a rerun weighs it: its ledger entry, and whether rows appended to it can be loaded alone. */
export interface RerunInput extends LedgerInput {
  readonly target: LoadTarget;
}

/**
 * Whether a file that grew can be loaded from where its load ended: records framed by lines,
 * read as they are on disk (not compressed: the ledger's byte ranges are the decompressed
 * input's), without `--limit` (which counts records from the start).
 */
function appendable(input: RerunInput): boolean {
  const t = input.target;
  return ['tbl', 'text', 'csv', 'ndjson'].includes(t.format) && compressionOf(t) === undefined && t.input?.limit === undefined;
}

/** How an earlier load of a file relates to this run's reading of it. */
async function relation(load: EarlierLoad, input: RerunInput): Promise<'same' | 'grew' | 'options' | 'changed'> {
  const sameOptions = load.readOptions === null || load.readOptions === input.readOptions;
  // No identity: a pipe or device now where the file was, whose bytes nothing may read before the load (nor compare).
  if (input.identity === undefined) return 'changed';
  const content = sameContent(load.identity, input.identity) ? 'same' : appendable(input) && (await grewFrom(load.identity, input.file, ['tbl', 'text'].includes(input.target.format))) ? 'grew' : 'changed';
  if (content === 'changed') return 'changed';
  return sameOptions ? content : 'options';
}

/**
 * The load this run goes on with when its own (default) id has no ledger rows: an earlier
 * load of these same files into these tables, read the same way, whose files are as it left
 * them or grew since (the latest, when several fit; a load begun by an earlier pgsurge,
 * whose ids came from the path, is one). Undefined when none fits: this is a new load. A
 * new load of a file whose earlier load committed rows is refused, before anything is
 * loaded, when it reads it another way or its loaded part changed: it would put its rows
 * in beside theirs. `again` (`--again`) asks for exactly that.
 */
export async function earlierLoadToContinue(control: pg.Client, inputs: readonly RerunInput[], again: boolean): Promise<string | undefined> {
  if (again) return undefined;
  const seen = await Promise.all(inputs.map((i) => earlierLoadsOfFile(control, i)));
  // stdin has no identity: a load of it is a new one each time; a file named beside it loaded before is refused below.
  const fromStdin = inputs.some((i) => i.identity === undefined);
  let candidates: Map<string, Date> | undefined = fromStdin ? new Map() : undefined;
  for (const [n, input] of inputs.entries()) {
    if (fromStdin) break;
    const fits = new Map<string, Date>();
    for (const load of seen[n]!) {
      const r = await relation(load, input);
      if (r === 'same' || r === 'grew') fits.set(load.loadId, load.startedAt);
    }
    candidates = candidates === undefined ? fits : new Map([...candidates].filter(([id]) => fits.has(id)));
  }
  const latest = [...(candidates ?? [])].sort((a, b) => b[1].getTime() - a[1].getTime())[0];
  if (latest) return latest[0];
  // A delete puts no row in: a new one of keys loaded before (another way, or as rows) doubles nothing.
  if (inputs.every((i) => (JSON.parse(i.readOptions) as Record<string, string>)['--mode'] === 'delete')) return undefined;
  for (const [n, input] of inputs.entries()) {
    // Rows gone with the table's (TRUNCATE in psql, DELETE): a new load puts nothing in beside them.
    if (seen[n]!.every((load) => load.loaded === 0) || !(await hasRows(control, input.tableName))) continue;
    for (const load of seen[n]!) {
      if (load.loaded === 0) continue;
      // 'same' or 'grew' here: that load read this file with other files than this command names (no one load fits them all).
      const r = await relation(load, input);
      throw refusal(r === 'same' || r === 'grew' ? 'files' : r, load, input);
    }
  }
  return undefined;
}

/**
 * What this run of load `loadId` changes in the ledger before loading: files that grew
 * since, their loaded part unchanged (the rest of them loads), and files now read another
 * way whose earlier runs committed no row (forgotten: a new load of them). A file now read
 * another way of which rows were committed is refused, naming the options.
 */
export async function rerunChanges(control: pg.Client, loadId: string, inputs: readonly RerunInput[]): Promise<RerunChanges> {
  const appended = new Set<string>();
  const restart = new Set<string>();
  for (const input of inputs) {
    const load = (await earlierLoadsOfFile(control, input, loadId))[0];
    if (!load) continue;
    const optionsDiffer = load.readOptions !== null && load.readOptions !== input.readOptions;
    if (optionsDiffer) {
      if (load.loaded > 0) throw refusal('options', load, input);
      restart.add(input.file);
      continue;
    }
    if (input.identity !== undefined && !sameContent(load.identity, input.identity) && (await relation(load, input)) === 'grew') appended.add(input.file);
  }
  return { appended, restart };
}

/** Whether the table holds a row; true when this user may not look (only INSERT granted): the refusal is the safe side. */
async function hasRows(control: pg.Client, tableName: string): Promise<boolean> {
  try {
    return (await control.query<{ e: boolean }>(`SELECT EXISTS (SELECT 1 FROM ${tableName}) AS e`)).rows[0]?.e === true;
  } catch {
    return true;
  }
}

/** `2026-12-06 03:10:11 UTC`. */
function when(at: Date): string {
  return at.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

function refusal(why: 'options' | 'changed' | 'files', load: EarlierLoad, input: RerunInput): LoadError {
  const committed = `its runs committed ${formatCount(load.loaded)} row${load.loaded === 1 ? '' : 's'} of it${load.rejected > 0 ? ` (and rejected ${formatCount(load.rejected)})` : ''}${load.completedAt ? `, completed ${when(load.completedAt)}` : ''}`;
  const what =
    why === 'options'
      ? `${input.file} was loaded into ${input.tableName} by load ${load.loadId} read with other options (${readOptionChanges(load.readOptions!, input.readOptions).join('; ')}); ${committed}`
      : why === 'files'
        ? `${input.file} was loaded into ${input.tableName} by load ${load.loadId}, with other files than this command names; ${committed}`
        : input.identity === undefined
          ? `${input.file} changed since load ${load.loadId} put it into ${input.tableName} (it is now a pipe or device, read once as it streams); ${committed}`
          : `${input.file} changed since load ${load.loadId} put it into ${input.tableName} (${identityDifference(load.identity, input.identity)}${Number(input.identity.split(':')[0]) > Number(load.identity.split(':')[0]) ? ', and the part loaded is not as it was' : ''}); ${committed}`;
  const old = why === 'options' ? 'rerun with the options it was loaded with to finish that load; ' : why === 'files' ? 'rerun that load\'s command (its files) to finish it; ' : '';
  return new LoadError('bad-option', `${what}: loading it again would put its rows in beside those; nothing was loaded`, {
    hint: `${old}--truncate empties the table and loads the file anew; --again loads it again on top of the rows already there (a new load)`,
  });
}
