/**
 * Opens an HTML report in a real headless browser (Debian's chromium) through the
 * DevTools protocol on a pipe, and checks what a reader would see: every chart drawn
 * (canvas pixels painted), no error in the console, no network request besides the page
 * itself. Saves a PNG screenshot.
 *
 *   node dist/bench/report-screenshot.js <report.html|report.json> [--out shot.png] [--width 1400] [--height 1000]
 *
 * With a .json report it writes the HTML next to it first (`pgsurge report`). Installs
 * chromium with apt-get when it is missing and this runs as root. Exit code 0 only when
 * every check passes.
 */
import './lib/usage.js';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Readable, Writable } from 'node:stream';
import { reportProblem, type LoadReport } from '../src/report/report-data.js';
import { writeReport } from '../src/report/write-report.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: string): string => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1]! : fallback;
};
const input = args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));
if (!input) {
  process.stderr.write('usage: node dist/bench/report-screenshot.js <report.html|report.json> [--out shot.png] [--width 1400] [--height 1000]\n');
  process.exit(2);
}
const width = Number(flag('--width', '1400'));
const height = Number(flag('--height', '1000'));

function findChromium(): string | undefined {
  for (const p of ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome']) if (existsSync(p)) return p;
  return undefined;
}

let chromium = findChromium();
if (!chromium && process.getuid?.() === 0) {
  process.stderr.write('chromium not found: apt-get install -y chromium (takes a few minutes)\n');
  spawnSync('apt-get', ['update'], { stdio: 'inherit' });
  spawnSync('apt-get', ['install', '-y', 'chromium'], { stdio: 'inherit' });
  chromium = findChromium();
}
if (!chromium) {
  process.stderr.write('no chromium: install it (Debian: apt-get install chromium) and run again\n');
  process.exit(1);
}

let htmlFile = path.resolve(input);
if (input.endsWith('.json')) {
  const parsed = JSON.parse(await fs.readFile(input, 'utf8')) as unknown;
  const problem = reportProblem(parsed);
  if (problem) throw new Error(`${input}: ${problem}`);
  htmlFile = await writeReport(input.replace(/\.json$/, '.html'), parsed as LoadReport);
}
const out = path.resolve(flag('--out', htmlFile.replace(/\.html?$/, '') + '.png'));
const pageUrl = pathToFileURL(htmlFile).href;

/** A minimal DevTools protocol client over --remote-debugging-pipe (fd 3 in, fd 4 out, NUL-separated JSON). */
class Cdp {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  private readonly listeners: ((m: any) => void)[] = [];
  private buffer = '';

  constructor(private readonly toBrowser: Writable, fromBrowser: Readable) {
    fromBrowser.on('data', (d: Buffer) => {
      this.buffer += d.toString('utf8');
      let end;
      while ((end = this.buffer.indexOf('\0')) >= 0) {
        const msg = JSON.parse(this.buffer.slice(0, end));
        this.buffer = this.buffer.slice(end + 1);
        if (msg.id !== undefined && this.pending.has(msg.id)) {
          const p = this.pending.get(msg.id)!;
          this.pending.delete(msg.id);
          if (msg.error) p.reject(new Error(`${msg.error.message} (${msg.error.code})`));
          else p.resolve(msg.result);
        } else {
          for (const l of this.listeners) l(msg);
        }
      }
    });
  }

  send(method: string, params: object = {}, sessionId?: string): Promise<any> {
    const id = this.nextId++;
    this.toBrowser.write(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }) + '\0');
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
  }

  on(listener: (m: any) => void): void {
    this.listeners.push(listener);
  }

  waitFor(method: string, timeoutMs: number): Promise<any> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${method}`)), timeoutMs);
      this.on((m) => {
        if (m.method === method) {
          clearTimeout(timer);
          resolve(m.params);
        }
      });
    });
  }
}

const userDataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'pgsurge-chromium-'));
const browser: ChildProcess = spawn(
  chromium,
  [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-extensions',
    `--user-data-dir=${userDataDir}`,
    '--remote-debugging-pipe',
    'about:blank',
  ],
  { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] },
);
let browserLog = '';
browser.stderr!.on('data', (d: Buffer) => (browserLog += d.toString()));

const problems: string[] = [];
const requests: string[] = [];
const consoleLines: string[] = [];
try {
  const cdp = new Cdp(browser.stdio[3] as Writable, browser.stdio[4] as Readable);
  cdp.on((m) => {
    const p = m.params;
    if (m.method === 'Network.requestWillBeSent') requests.push(p.request.url);
    if (m.method === 'Runtime.consoleAPICalled') {
      const text = p.args.map((a: any) => a.value ?? a.description ?? '').join(' ');
      consoleLines.push(`${p.type}: ${text}`);
      if (p.type === 'error' || p.type === 'assert') problems.push(`console.${p.type}: ${text}`);
    }
    if (m.method === 'Runtime.exceptionThrown') problems.push(`exception: ${p.exceptionDetails.exception?.description ?? p.exceptionDetails.text}`);
    if (m.method === 'Log.entryAdded' && (p.entry.level === 'error' || p.entry.level === 'warning')) problems.push(`log ${p.entry.level}: ${p.entry.text} ${p.entry.url ?? ''}`);
  });
  const { targetId } = await cdp.send('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await cdp.send('Target.attachToTarget', { targetId, flatten: true });
  for (const domain of ['Page', 'Runtime', 'Network', 'Log']) await cdp.send(`${domain}.enable`, {}, sessionId);
  await cdp.send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: false }, sessionId);
  const loaded = cdp.waitFor('Page.loadEventFired', 30_000);
  await cdp.send('Page.navigate', { url: pageUrl }, sessionId);
  await loaded;
  await new Promise((r) => setTimeout(r, 500)); // let a late error or request surface
  const check = await cdp.send(
    'Runtime.evaluate',
    {
      returnByValue: true,
      expression: `(() => ({
        charts: Number(document.body.dataset.charts),
        errors: document.getElementById('errors').textContent,
        canvases: [...document.querySelectorAll('canvas')].map((c) => {
          const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
          let painted = 0;
          for (let i = 3; i < d.length; i += 4) if (d[i] > 0) painted++;
          return { id: c.id, width: c.width, height: c.height, painted: painted / (c.width * c.height) };
        }),
        height: document.documentElement.scrollHeight,
      }))()`,
    },
    sessionId,
  );
  const page = check.result.value as { charts: number; errors: string; canvases: { id: string; width: number; height: number; painted: number }[]; height: number };
  // the whole page, not just the first screen
  await cdp.send('Emulation.setDeviceMetricsOverride', { width, height: Math.max(height, page.height), deviceScaleFactor: 1, mobile: false }, sessionId);
  const shot = await cdp.send('Page.captureScreenshot', { format: 'png' }, sessionId);
  await fs.writeFile(out, Buffer.from(shot.data, 'base64'));
  await cdp.send('Browser.close').catch(() => undefined);

  // Every canvas drawn: four charts, and a dbt3 load's Gantt chart of its timeline.
  const expected = page.canvases.length;
  if (page.charts !== expected) problems.push(`expected ${expected} charts drawn, the page says ${page.charts}`);
  const waitCharts = page.canvases.filter((c) => c.id.startsWith('waits-')).length;
  process.stdout.write(`wait-class charts: ${waitCharts}\n`);
  if (page.errors) problems.push(`page error: ${page.errors}`);
  for (const c of page.canvases) if (c.painted < 0.01) problems.push(`canvas #${c.id} is blank (${(100 * c.painted).toFixed(2)}% painted)`);
  const others = requests.filter((u) => u !== pageUrl);
  for (const u of others) problems.push(`network request: ${u}`);

  process.stdout.write(`chromium: ${spawnSync(chromium, ['--version'], { encoding: 'utf8' }).stdout.trim()}\n`);
  process.stdout.write(`page: ${pageUrl} (${((await fs.stat(htmlFile)).size / 1024).toFixed(0)} KB)\n`);
  process.stdout.write(`charts drawn: ${page.charts}; canvases: ${page.canvases.map((c) => `#${c.id} ${c.width}x${c.height} ${(100 * c.painted).toFixed(1)}% painted`).join(', ')}\n`);
  process.stdout.write(`requests: ${requests.length} (${requests.join(', ')}); console messages: ${consoleLines.length}\n`);
  process.stdout.write(`screenshot: ${out} (${((await fs.stat(out)).size / 1024).toFixed(0)} KB)\n`);
  if (problems.length > 0) {
    process.stdout.write(`FAILED:\n  ${problems.join('\n  ')}\n`);
    process.exitCode = 1;
  } else {
    process.stdout.write('OK: charts drawn, no console error, no network request\n');
  }
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n${browserLog.split('\n').slice(-10).join('\n')}\n`);
  process.exitCode = 1;
} finally {
  browser.kill();
  await fs.rm(userDataDir, { recursive: true, force: true }).catch(() => undefined);
}
