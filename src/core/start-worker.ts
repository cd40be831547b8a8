import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker thread started with the process's Node flags where a thread can take them.
 * `node --trace-gc pgsurge …` (or any flag that is the process's, not a thread's) makes
 * `new Worker` throw ERR_WORKER_INVALID_EXEC_ARGV with those flags: the thread then starts
 * with none of them instead of failing the command. `--input-type`, which `node -e`
 * callers pass, is never a thread's.
 */
export function startWorker(url: URL, options: Omit<WorkerOptions, 'execArgv'>, execArgv: readonly string[] = process.execArgv): Worker {
  const flags = execArgv.filter((a) => !a.startsWith('--input-type'));
  try {
    return new Worker(url, { ...options, execArgv: flags });
  } catch (error) {
    if ((error as { code?: string }).code !== 'ERR_WORKER_INVALID_EXEC_ARGV' || flags.length === 0) throw error;
    return new Worker(url, { ...options, execArgv: [] });
  }
}
