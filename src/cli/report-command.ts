import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { LoadError } from '../core/load-error.js';
import { mergeReports, reportProblem, type LoadReport } from '../report/report-data.js';
import { writeReport } from '../report/write-report.js';
import { parseReportPath } from './observe-options.js';

/** `pgsurge report <file.json>`: a saved JSON report → HTML (or CSV) again. */
export function registerReportCommand(program: Command): void {
  program
    .command('report')
    .description('turn saved JSON reports (from --report x.json) into a self-contained HTML page with charts, or CSV; several files are overlaid on the same axes')
    .argument('<file.json...>', 'reports written by --report … .json')
    .option('-o, --out <file>', 'the file to write: .html, .csv or .json (default: the first input with .html; required for several inputs)', parseReportPath)
    .option('--title <text>', 'title of the page (default: the report\'s, or the series names)')
    .action(async (files: string[], flags: { out?: string; title?: string }) => {
      const reports: LoadReport[] = [];
      for (const file of files) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(await fs.readFile(file, 'utf8'));
        } catch (error) {
          const e = error as NodeJS.ErrnoException;
          throw new LoadError('missing-file', `cannot read ${file}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`);
        }
        const problem = reportProblem(parsed);
        if (problem) throw new LoadError('bad-option', `${file} is not a report pgsurge can draw: ${problem}`, { hint: 'give .json files written by `--report <file>.json`' });
        reports.push(parsed as LoadReport);
      }
      if (files.length > 1 && flags.out === undefined) throw new LoadError('bad-option', 'several reports need --out <file.html> for the overlay');
      const first = files[0]!;
      const out = flags.out ?? path.join(path.dirname(first), `${path.basename(first, path.extname(first))}.html`);
      if (files.some((f) => path.resolve(f) === path.resolve(out))) throw new LoadError('bad-option', `--out ${out} would overwrite an input`);
      // two reports of one file's loads tell their series apart by the reports' file names
      const merged = mergeReports(reports, flags.title, files.map((f) => path.basename(f, path.extname(f))));
      // an overlay was made by this command; each series keeps its own
      const overlay = reports.length > 1 ? { ...merged, command: ['pgsurge', ...process.argv.slice(2)] } : merged;
      process.stdout.write(`${await writeReport(out, flags.title && reports.length === 1 ? { ...overlay, title: flags.title } : overlay)}\n`);
    });
}
