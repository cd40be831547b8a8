import { execFile } from 'node:child_process';
import { reapedChildrenCpu } from './server-cpu.js';

/** How full the server's end of a load's Unix socket was, over the readings from its first non-empty one to its last. */
export interface SocketFill {
  readonly readings: number;
  /** Share of readings that found nothing queued for the server to read: a COPY run dry, or the time between statements. */
  readonly empty: number;
  readonly medianBytes: number;
  /** CPU seconds the readings (`ss`) took: this process's children, like the client's, so the caller takes them out of the client's. */
  readonly cpuSeconds: number;
}

/**
 * Reads the receive queue of the server's end of every connection on `socketPath`
 * (`ss -xn`, Recv-Q: bytes the client has written that the backend has not read yet),
 * every `everyMs`, keeping the fullest. A queue that is empty while a COPY runs is a
 * backend waiting for its client, whatever else the machine runs. Each reading is a
 * process (`ss`): a few milliseconds of CPU, so it is off unless asked for.
 */
export function watchSocketFill(socketPath: string, everyMs: number): { stop(): Promise<SocketFill> } {
  const values: number[] = [];
  let stopped = false;
  let inFlight: Promise<void> = Promise.resolve();
  const costs: number[] = [];
  const once = (): Promise<void> =>
    new Promise((resolve) => {
      const before = reapedChildrenCpu('self');
      execFile('ss', ['-xn'], { maxBuffer: 1 << 24 }, (error, stdout) => {
        if (!error) {
          let most = 0;
          for (const line of stdout.split('\n')) {
            const f = line.trim().split(/\s+/);
            if (f[1] === 'ESTAB' && f[4] === socketPath) most = Math.max(most, Number(f[2]));
          }
          values.push(most);
        }
        costs.push(reapedChildrenCpu('self') - before);
        resolve();
      });
    });
  const loop = async (): Promise<void> => {
    while (!stopped) {
      await once();
      await new Promise((r) => setTimeout(r, everyMs));
    }
  };
  inFlight = loop();
  return {
    async stop() {
      stopped = true;
      await inFlight;
      // A reading's cost is its ss's CPU, but for the one the client ended in (its CPU is reaped then too): the largest, left out.
      const cpuSeconds = costs.reduce((a, b) => a + b, 0) - Math.max(0, ...costs);
      const from = values.findIndex((v) => v > 0);
      if (from < 0) return { readings: 0, empty: NaN, medianBytes: 0, cpuSeconds };
      let to = values.length - 1;
      while (values[to] === 0) to--;
      const seen = values.slice(from, to + 1);
      const sorted = [...seen].sort((a, b) => a - b);
      return { readings: seen.length, empty: seen.filter((v) => v === 0).length / seen.length, medianBytes: sorted[Math.floor(sorted.length / 2)]!, cpuSeconds };
    },
  };
}
