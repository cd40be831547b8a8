import { promises as fs } from 'node:fs';
import path from 'node:path';
import { reportCsv } from './report-csv.js';
import type { LoadReport } from './report-data.js';
import { reportHtml } from './report-html.js';

export const REPORT_KINDS = ['json', 'csv', 'html'] as const;
export type ReportKind = (typeof REPORT_KINDS)[number];

/** `.json`, `.csv`, `.html`/`.htm` → the kind; undefined for anything else. */
export function reportKind(file: string): ReportKind | undefined {
  const ext = path.extname(file).toLowerCase();
  return ext === '.json' ? 'json' : ext === '.csv' ? 'csv' : ext === '.html' || ext === '.htm' ? 'html' : undefined;
}

export async function renderReport(report: LoadReport, kind: ReportKind): Promise<string> {
  switch (kind) {
    case 'json':
      return `${JSON.stringify(report, null, 2)}\n`;
    case 'csv':
      return reportCsv(report);
    case 'html':
      return reportHtml(report);
  }
}

/** Writes the report in the format its extension names; returns the absolute path. */
export async function writeReport(file: string, report: LoadReport): Promise<string> {
  const kind = reportKind(file);
  if (kind === undefined) throw new Error(`cannot tell the report format of ${file}: use .json, .csv or .html`);
  const full = path.resolve(file);
  await fs.writeFile(full, await renderReport(report, kind));
  return full;
}
