import { promises as fs } from 'node:fs';
import type pg from 'pg';
import type { LoadTarget } from '../core/chunk.js';
import { LoadError } from '../core/load-error.js';
import type { ByteRange } from '../input/byte-ranges.js';
import { readOnce } from '../input/file-blocks.js';
import { readsInRanges } from '../input/open-input.js';
import { partRange, type LoadPart } from '../input/load-part.js';
import { fileLineEnd, recordEndRuleFor } from '../input/byte-ranges.js';

/** What `--part` cannot work with, refused before anything changes (exit 2). */
export function checkPartOptions(inputs: readonly LoadTarget[], options: { truncate: boolean; ledger?: boolean }): void {
  if (options.truncate) {
    throw new LoadError('bad-option', '--truncate cannot be given with --part: each part would empty the table under the others', {
      hint: 'empty the table once before starting the parts (TRUNCATE, or a load with --truncate of nothing), then start them without it',
    });
  }
  for (const input of inputs) {
    if (!readsInRanges(input)) {
      throw new LoadError('bad-option', `--part needs inputs that can be cut into byte ranges (tbl, text or NDJSON files); ${input.file} cannot be: ${whyNotInRanges(input)}`, {
        hint: 'split the input into files and give each part its own, or load it without --part',
      });
    }
  }
}

/** Why an input is read from its start by one reader, in the words of the input itself. */
function whyNotInRanges(input: LoadTarget): string {
  const options = input.input ?? {};
  if (input.file === '-') return 'it is stdin';
  if (readOnce(input.file)) return 'it is a pipe or device, read once as it streams';
  if (options.skip !== undefined || options.limit !== undefined) return `--skip and --limit count records from the start`;
  switch (input.format) {
    case 'parquet':
      return 'it is Parquet, read by row group, not by byte range';
    case 'csv':
      return 'it is CSV, read from its start';
    case 'json':
      return 'it is a JSON array, read from its start';
    default:
      return 'it is compressed';
  }
}

/** Each input's share for this part (path as named → record-aligned byte range). */
export async function partShares(inputs: readonly LoadTarget[], sizes: readonly (number | undefined)[], part: LoadPart): Promise<Map<string, ByteRange>> {
  const shares = new Map<string, ByteRange>();
  for (const [i, input] of inputs.entries()) {
    const size = sizes[i];
    if (size === undefined) throw new LoadError('bad-option', `--part needs regular files; ${input.file} is not one`, { hint: 'load it without --part' });
    const fh = await fs.open(input.file, 'r');
    try {
      const lineEnd = await fileLineEnd(fh, input);
      shares.set(input.file, await partRange(fh, size, part, recordEndRuleFor({ ...input, ...(lineEnd ? { lineEnd } : {}) })));
    } finally {
      await fh.close();
    }
  }
  return shares;
}

/** `lineitem.rejects` → `lineitem.part2of3.rejects` for part 2/3: parts on one host write files of their own. */
export function partRejectPath(file: string, part: LoadPart | undefined): string {
  if (!part) return file;
  const tag = `part${part.k}of${part.n}`;
  return file.endsWith('.rejects') ? `${file.slice(0, -'.rejects'.length)}.${tag}.rejects` : `${file}.${tag}`;
}

/**
 * The advisory locks a load holds on its control connection for as long as it runs (two
 * runs of one load, or of one part, at once would load rows twice). A whole load holds its
 * id's lock exclusively; a part holds it shared, so its sibling parts run beside it but a
 * whole run of the same id cannot, and its own part's lock exclusively.
 */
export const LOCK_SQL = {
  whole: "SELECT pg_try_advisory_lock(hashtext('pgsurge'), hashtext($1)) AS ok",
  shared: "SELECT pg_try_advisory_lock_shared(hashtext('pgsurge'), hashtext($1)) AS ok",
  part: "SELECT pg_try_advisory_lock(hashtext('pgsurge part'), hashtext($1 || ' ' || $2)) AS ok",
} as const;

export async function lockLoad(control: pg.Client, loadId: string, part: string | undefined): Promise<void> {
  const ok = async (sql: string, params: string[]): Promise<boolean> => (await control.query<{ ok: boolean }>(sql, params)).rows[0]?.ok === true;
  if (part === undefined) {
    if (!(await ok(LOCK_SQL.whole, [loadId]))) {
      throw new LoadError('bad-option', `load ${loadId} is running in another pgsurge right now (the whole load, or parts of it)`, { hint: 'wait for it to end, or give this load another --load-id' });
    }
    return;
  }
  if (!(await ok(LOCK_SQL.shared, [loadId]))) {
    throw new LoadError('bad-option', `load ${loadId} is running as a whole (without --part) in another pgsurge right now`, { hint: 'wait for it to end, or give the parts another --load-id' });
  }
  if (!(await ok(LOCK_SQL.part, [loadId, part]))) {
    throw new LoadError('bad-option', `part ${part} of load ${loadId} is running in another pgsurge right now`, { hint: 'wait for it to end; the other parts can run beside it' });
  }
}

