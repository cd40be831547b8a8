import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { LoadError } from '../db/load-error.js';
import { reportProblem, type LoadReport } from '../report/report-data.js';
import { writeReport } from '../report/write-report.js';
import { parseReportPath } from './observe-options.js';

/** `pgsurge report <file.json>`: a saved JSON report → HTML (or CSV) again. */
export function registerReportCommand(program: Command): void {
  program
    .command('report')
    .description('turn a saved JSON report (from --report x.json) into a self-contained HTML page with charts, or into CSV')
    .argument('<file.json>', 'a report written by --report … .json')
    .option('-o, --out <file>', 'the file to write: .html, .csv or .json (default: the input with .html)', parseReportPath)
    .action(async (file: string, flags: { out?: string }) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(await fs.readFile(file, 'utf8'));
      } catch (error) {
        const e = error as NodeJS.ErrnoException;
        throw new LoadError('missing-file', `cannot read ${file}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`);
      }
      const problem = reportProblem(parsed);
      if (problem) throw new LoadError('bad-option', `${file} is not a report pgsurge can draw: ${problem}`, { hint: 'give a .json file written by `--report <file>.json`' });
      const out = flags.out ?? path.join(path.dirname(file), `${path.basename(file, path.extname(file))}.html`);
      if (path.resolve(out) === path.resolve(file)) throw new LoadError('bad-option', `--out ${out} would overwrite the input`);
      process.stdout.write(`${await writeReport(out, parsed as LoadReport)}\n`);
    });
}
