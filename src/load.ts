import { promises as fs } from 'node:fs';
import type pg from 'pg';
import type { Readable } from 'node:stream';
import type { Chunk, LoadTarget } from './batching/chunk.js';
import { ChunkQueue, type ChunkSource } from './batching/chunk-queue.js';
import { connect, type Target } from './db/target.js';
import { connectionFailure, copyColumnFromWhere, copyLineFromWhere, isServerError, LoadError } from './db/load-error.js';
import { prepareTable } from './db/table-check.js';
import { framerFor } from './framing/framer-for.js';
import { LoadCounters, type LoadSummary } from './metrics/load-counters.js';
import { lineAtOffset } from './source/line-numbers.js';
import { openInput } from './source/open-input.js';
import type { ChunkResult, ChunkWriter } from './writer/chunk-writer.js';
import { copyWriter } from './writer/copy-writer.js';

export interface LoadOptions {
  readonly workers: number;
  readonly chunkBytes: number;
  readonly create: boolean;
  readonly truncate: boolean;
  readonly stdin?: Readable;
  /** How a chunk reaches the server; COPY unless told otherwise. */
  readonly writer?: ChunkWriter;
  /** Load only each input's first n records (`compare --rows`). */
  readonly maxRows?: number;
}

/** What the load tells whoever watches it (the CLI's progress line, a test). */
export interface LoadReporter {
  start?(info: { inputs: readonly LoadTarget[]; totalBytes: number | undefined; workers: number; target: string }): void;
  chunkLoaded?(info: { chunk: Chunk; rows: number; result: ChunkResult; seconds: number; counters: LoadCounters }): void;
}

/**
 * The whole flow, top to bottom: check the inputs and tables, open the readers, start the
 * workers on a bounded queue, wait, first error wins, summary.
 */
export async function load(inputs: readonly LoadTarget[], options: LoadOptions, target: Target, reporter: LoadReporter = {}): Promise<LoadSummary> {
  const sizes = await checkInputs(inputs);
  await prepareTables(inputs, options, target);

  // Biggest input first, so the long pole starts early and the small ones fill in.
  const order = inputs.map((input, i) => ({ input, size: sizes[i] })).sort((a, b) => (b.size ?? Infinity) - (a.size ?? Infinity));
  const sources: ChunkSource[] = [];
  for (const { input } of order) {
    const opened = await openInput(input, { workers: options.workers, chunkBytes: options.chunkBytes, stdin: options.stdin, maxRows: options.maxRows });
    sources.push(...opened.sources);
  }
  const totalBytes = sizes.every((s) => s !== undefined) ? sizes.reduce<number>((a, s) => a + (s ?? 0), 0) : undefined;

  const counters = new LoadCounters();
  for (const input of inputs) counters.expect(input.table, input.file);
  const queue = new ChunkQueue(sources, options.workers);
  const clients = await openClients(target, options.workers).catch(async (error: unknown) => {
    await queue.close();
    throw error;
  });
  reporter.start?.({ inputs, totalBytes, workers: clients.length, target: target.description });

  const writer = options.writer ?? copyWriter;
  let firstError: unknown;
  const worker = async (client: pg.Client): Promise<void> => {
    await writer.prepare?.(client);
    for (;;) {
      const chunk = firstError === undefined ? await queue.take() : undefined;
      if (chunk === undefined) return;
      const startedAt = counters.now();
      let result: ChunkResult;
      try {
        result = await writer.write(client, chunk);
      } catch (error) {
        firstError ??= await describeChunkFailure(chunk, error);
        await queue.close();
        return;
      }
      const endedAt = counters.now();
      const rows = result.loaded;
      counters.add(chunk.target.table, chunk.target.file, rows, chunk.location.byteLength, startedAt, endedAt, result.skipped);
      reporter.chunkLoaded?.({ chunk, rows, result, seconds: (endedAt - startedAt) / 1000, counters });
    }
  };
  try {
    await Promise.all(
      clients.map((c) =>
        worker(c).catch(async (error: unknown) => {
          firstError ??= error;
          await queue.close();
        }),
      ),
    );
  } finally {
    await Promise.allSettled(clients.map((c) => c.end()));
  }
  if (firstError !== undefined) throw firstError;
  return counters.summary(clients.length, target.description);
}

/** Every input must exist and be readable before anything is written. */
async function checkInputs(inputs: readonly LoadTarget[]): Promise<(number | undefined)[]> {
  return Promise.all(
    inputs.map(async (input) => {
      if (input.file === '-') return undefined;
      try {
        const st = await fs.stat(input.file);
        if (st.isDirectory()) throw new LoadError('missing-file', `${input.file} is a directory, not a file`, { hint: 'for a folder of .tbl files use `pgsurge dbt3 load <dir>`' });
        await fs.access(input.file, fs.constants.R_OK);
        return st.isFile() ? st.size : undefined;
      } catch (error) {
        if (error instanceof LoadError) throw error;
        const code = (error as NodeJS.ErrnoException).code;
        const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (error as Error).message;
        throw new LoadError('missing-file', `cannot read ${input.file}: ${why}`, { hint: 'check the path; nothing was loaded' });
      }
    }),
  );
}

async function prepareTables(inputs: readonly LoadTarget[], options: LoadOptions, target: Target): Promise<void> {
  const client = await connect(target.config).catch((error: unknown) => {
    throw connectionFailure(error, target.description);
  });
  try {
    const seen = new Set<string>();
    for (const input of inputs) {
      const key = `${input.schema ?? ''}.${input.table}`;
      if (seen.has(key)) continue;
      seen.add(key);
      await prepareTable(client, input.table, input.schema, options);
    }
  } finally {
    await client.end();
  }
}

async function openClients(target: Target, n: number): Promise<pg.Client[]> {
  const settled = await Promise.allSettled(Array.from({ length: n }, () => connect(target.config)));
  const clients = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await Promise.allSettled(clients.map((c) => c.end()));
    throw connectionFailure(failed.reason, target.description);
  }
  return clients;
}

/** Names the file, the line and the server's message for a chunk the server refused. */
async function describeChunkFailure(chunk: Chunk, error: unknown): Promise<LoadError> {
  const { location } = chunk;
  if (!isServerError(error)) {
    return new LoadError('chunk-failed', `loading ${location.file} at byte ${location.byteOffset} failed: ${(error as Error).message}`, { location, cause: error });
  }
  const record = copyLineFromWhere(error.where);
  let line: number | undefined;
  if (record !== undefined) {
    const firstLine = location.firstLine ?? (location.file === '-' ? undefined : await lineAtOffset(location.file, location.byteOffset).catch(() => undefined));
    if (firstLine !== undefined) line = firstLine + framerFor(chunk.target.format).linesBeforeRecord(chunk.data, record);
  }
  const place = line !== undefined ? `${location.file}:${line}` : `${location.file} (bytes ${location.byteOffset}–${location.byteOffset + location.byteLength})`;
  const columnName = error.column ?? copyColumnFromWhere(error.where);
  const column = columnName ? ` (column ${columnName})` : '';
  return new LoadError('chunk-failed', `${place}: ${error.message}${column} [SQLSTATE ${error.code}]`, {
    location: { ...location, ...(line !== undefined ? { line } : {}) },
    server: error,
    hint: error.hint ?? 'fix the input line and load again; chunks committed before the error stay in the table',
    cause: error,
  });
}
