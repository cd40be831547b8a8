import assert from 'node:assert/strict';

/** One line of a reject file's `.log`: where the record was and why it was rejected. */
export interface RejectLogLine {
  readonly file: string;
  readonly line: number;
  readonly offset: number;
  readonly sqlstate: string;
  readonly column: string;
  readonly message: string;
}

const HEADER = 'file\tline\tbyte_offset\tsqlstate\tcolumn\tmessage';

/** A reject file's `.log`: its owner line (the load that wrote it), its header, then a line per rejected record. */
export function parseRejectLog(log: string): RejectLogLine[] {
  const [owner, header, ...lines] = log.trimEnd().split('\n');
  assert.match(owner!, /^# pgsurge load \S+$/, 'the log names the load that wrote it');
  assert.equal(header, HEADER);
  return lines.map((l) => {
    const [file, line, offset, sqlstate, column, ...message] = l.split('\t');
    return { file: file!, line: Number(line), offset: Number(offset), sqlstate: sqlstate!, column: column!, message: message.join('\t') };
  });
}

/** A table's counts in a load's printed summary (its table, or for a load of one table the one line `-q` prints): read, loaded, rejected, skipped. */
export function summaryCounts(stdout: string, table: string): { read: number; loaded: number; rejected: number; skipped: number } {
  const n = (s: string): number => Number(s.replace(/,/g, ''));
  const m = new RegExp(`^${table}\\s+([\\d,]+)\\s+([\\d,]+)\\s+([\\d,]+)\\s+([\\d,]+)`, 'm').exec(stdout);
  if (m) return { read: n(m[1]!), loaded: n(m[2]!), rejected: n(m[3]!), skipped: n(m[4]!) };
  const q = /^loaded ([\d,]+) of ([\d,]+) rows read(?: \(read [\d,]+ = loaded [\d,]+ \+ rejected ([\d,]+) \+ skipped ([\d,]+)\))? in /m.exec(stdout);
  assert.ok(q, `no summary line for ${table} in:\n${stdout}`);
  return { read: n(q[2]!), loaded: n(q[1]!), rejected: n(q[3] ?? '0'), skipped: n(q[4] ?? '0') };
}
