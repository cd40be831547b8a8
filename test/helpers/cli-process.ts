import { spawn, type ChildProcess } from 'node:child_process';
import { PGSURGE } from './test-db.js';

/** The real command line running in the background, for tests that kill, interrupt or wait on it. */
export interface RunningCli {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves when stderr matches (e.g. the `pgsurge: load <id>` start line). */
  waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  /** Resolves with the exit code (or the signal's name) once the process ends. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `stdin: 'pipe'` leaves the child's stdin open for the test to write (`child.stdin`). */
export function startCli(args: readonly string[], env: NodeJS.ProcessEnv = {}, stdin: 'ignore' | 'pipe' = 'ignore'): RunningCli {
  const child = spawn(process.execPath, [PGSURGE, ...args], { env: { ...process.env, ...env }, stdio: [stdin, 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
    for (const l of listeners) l();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(re, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const m = re.exec(err);
          if (m) {
            listeners.delete(check);
            clearTimeout(timer);
            resolve(m);
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`timed out waiting for ${re} in stderr:\n${err}`));
        }, timeoutMs);
        listeners.add(check);
        void exited.then(() => {
          if (listeners.has(check)) {
            listeners.delete(check);
            clearTimeout(timer);
            reject(new Error(`exited before ${re} appeared; stderr:\n${err}`));
          }
        });
        check();
      });
    },
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
