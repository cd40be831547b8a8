/**
 * Generated DBT-3 data for the tests, made once per scale factor per test file, read as
 * rows of fields.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Dbt3Table } from '../../../src/datasets/dbt3-schema.js';
import { generateDbt3, type Dbt3GenerateOptions } from '../../../src/datasets/dbt3/generate.js';

export async function tempDir(prefix: string): Promise<string> {
  return mkdtemp(path.join(tmpdir(), `pgsurge-${prefix}-`));
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/** Generate into a fresh temp dir; returns the dir and the files by table. */
export async function generateTo(
  prefix: string,
  opts: Omit<Dbt3GenerateOptions, 'outDir'>,
): Promise<{ dir: string; files: Map<Dbt3Table, { path: string; rows: number; bytes: number }> }> {
  const dir = await tempDir(prefix);
  const { files } = await generateDbt3({ ...opts, outDir: dir });
  return { dir, files: new Map(files.map((f) => [f.table, f])) };
}

/** A .tbl file's rows as fields, the trailing empty field after the last `|` dropped. */
export async function readTbl(file: string): Promise<string[][]> {
  const text = await readFile(file, 'latin1');
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map((line) => {
    const fields = line.split('|');
    if (fields.pop() !== '') throw new Error(`line without a trailing |: ${line}`);
    return fields;
  });
}
