import { LoadError } from '../core/load-error.js';
import { INSERT_STYLES, type InsertStyle } from '../writer/insert-writer.js';
import { LOAD_MODES, type LoadMode, type WriterSpec } from '../writer/writer-for.js';
import { isWireChoice, type WireChoice } from '../wire/wire-report.js';

/**
 * One way of loading the input that `pgsurge compare` measures. Fields left undefined take
 * the command's own options (`--workers`) or the writer's defaults; new kinds of variants
 * (durability settings, chunk sizes…) add a field and a letter in `MODIFIERS`.
 */
export interface Variant {
  /** As written in `--variants`, e.g. `insert:unnest:b5000`; unique in one comparison. */
  readonly label: string;
  readonly mode: LoadMode;
  /** INSERT only. */
  readonly style?: InsertStyle;
  readonly workers?: number;
  /** INSERT only. */
  readonly batchRows?: number;
  /** INSERT only; 0 = autocommit. */
  readonly commitEvery?: number;
  /** COPY only: `copy:binary`, `copy:text` (auto when absent). */
  readonly wire?: WireChoice;
}

/** The default: every mode but single-row INSERT, which is slow enough to need `--rows`. */
export const DEFAULT_VARIANTS = 'copy,insert:unnest,insert:values';

const SYNTAX = 'write copy or insert[:unnest|values|row], then any of w<workers>, b<batch rows>, c<commit every n batches> (insert only for b and c), and for copy a wire: text, binary or auto; e.g. copy:w2,copy:binary,insert:unnest:b5000';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Letter-prefixed numeric parts: the letter, the field, the smallest value, whether only INSERT has it. */
const MODIFIERS: Record<string, { field: 'workers' | 'batchRows' | 'commitEvery'; min: number; insertOnly: boolean; what: string }> = {
  w: { field: 'workers', min: 1, insertOnly: false, what: 'workers' },
  b: { field: 'batchRows', min: 1, insertOnly: true, what: 'batch rows' },
  c: { field: 'commitEvery', min: 0, insertOnly: true, what: 'commit every' },
};

/** `copy,copy:w2,insert:unnest:b5000` → variants; every mistake names the entry and the part. */
export function parseVariants(spec: string): Variant[] {
  const entries = spec.split(',').map((e) => e.trim());
  if (entries.length === 0 || entries.every((e) => e === '')) throw bad(spec, 'no variants given');
  const variants = entries.map((entry) => {
    if (entry === '') throw bad(spec, 'an empty entry (two commas in a row?)');
    return parseVariant(entry);
  });
  const seen = new Set<string>();
  for (const v of variants) {
    const key = variantKey(v);
    if (seen.has(key)) throw bad(v.label, 'the same variant twice');
    seen.add(key);
  }
  return variants;
}

function parseVariant(entry: string): Variant {
  const [mode, ...parts] = entry.split(':');
  if (!(LOAD_MODES as readonly string[]).includes(mode ?? '')) throw bad(entry, `unknown mode \`${mode}\``);
  const v: Mutable<Variant> = { label: entry, mode: mode as LoadMode };
  const given = new Set<string>();
  for (const part of parts) {
    if ((INSERT_STYLES as readonly string[]).includes(part)) {
      if (v.mode !== 'insert') throw bad(entry, `\`${part}\` is an INSERT style; COPY has none`);
      if (v.style !== undefined) throw bad(entry, `two INSERT styles`);
      v.style = part as InsertStyle;
      continue;
    }
    if (isWireChoice(part)) {
      if (v.mode !== 'copy') throw bad(entry, `\`${part}\` is a COPY wire; INSERT has none`);
      if (v.wire !== undefined) throw bad(entry, 'two wires');
      v.wire = part;
      continue;
    }
    const letter = part.charAt(0);
    const modifier = MODIFIERS[letter];
    const digits = part.slice(1);
    if (modifier === undefined || !/^\d+$/.test(digits)) throw bad(entry, `unknown part \`${part}\``);
    const value = Number(digits);
    if (value < modifier.min) throw bad(entry, `${modifier.what} must be at least ${modifier.min}, got \`${part}\``);
    if (modifier.insertOnly && v.mode !== 'insert') throw bad(entry, `\`${part}\` (${modifier.what}) applies only to insert`);
    if (given.has(letter)) throw bad(entry, `${modifier.what} given twice`);
    given.add(letter);
    v[modifier.field] = value;
  }
  if (v.mode === 'insert') v.style ??= 'unnest';
  return v;
}

function variantKey(v: Variant): string {
  return JSON.stringify([v.mode, v.style, v.workers, v.batchRows, v.commitEvery, v.wire ?? (v.mode === 'copy' ? 'auto' : undefined)]);
}

function bad(entry: string, why: string): LoadError {
  return new LoadError('bad-option', `Expected \`--variants\` to list load variants, got \`${entry}\`: ${why}`, { hint: SYNTAX });
}

/** What the writer needs from a variant. */
export function variantWriterSpec(v: Variant, onConflict: WriterSpec['onConflict']): WriterSpec {
  return {
    mode: v.mode,
    ...(v.style !== undefined ? { style: v.style } : {}),
    ...(v.batchRows !== undefined ? { batchRows: v.batchRows } : {}),
    ...(v.commitEvery !== undefined ? { commitEvery: v.commitEvery } : {}),
    ...(onConflict !== undefined ? { onConflict } : {}),
    ...(v.wire !== undefined ? { wire: v.wire } : {}),
  };
}
