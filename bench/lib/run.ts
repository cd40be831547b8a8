import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface RunResult {
  readonly seconds: number;
  /** Peak resident set of the child in bytes (VmHWM, polled from /proc), when it could be read. */
  readonly peakRss: number | undefined;
  readonly stdout: string;
}

function vmHwm(pid: number): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Runs a command to completion, timing it and following its peak RSS; fails loudly on a non-zero exit. */
export function run(cmd: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let peak: number | undefined;
    const poll = setInterval(() => {
      const v = child.pid ? vmHwm(child.pid) : undefined;
      if (v !== undefined) peak = Math.max(peak ?? 0, v);
    }, 20);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', () => {
      const v = child.pid ? vmHwm(child.pid) : undefined;
      if (v !== undefined) peak = Math.max(peak ?? 0, v);
    });
    child.on('close', (code) => {
      clearInterval(poll);
      const seconds = (performance.now() - started) / 1000;
      if (code !== 0) reject(new Error(`${cmd} ${args.join(' ')} exited ${code}:\n${stderr}`));
      else resolve({ seconds, peakRss: peak, stdout });
    });
  });
}
