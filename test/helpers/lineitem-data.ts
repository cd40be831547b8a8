/**
 * lineitem-shaped test data built from fields, so the same rows can be written as `.tbl`
 * or CSV, damaged in known ways, and compared with what the table holds.
 */

/** Deterministic PRNG (mulberry32), so a failing run can be repeated from its seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function lineitemFields(n: number, options: { newlines?: boolean } = {}): string[][] {
  const rows: string[][] = [];
  for (let i = 1; i <= n; i++) {
    const day = String((i % 28) + 1).padStart(2, '0');
    const comment = (i % 5 === 0 ? 'héllo wörld ' : 'c') + (options.newlines && i % 7 === 0 ? 'two\nlines ' : '') + 'x'.repeat(i % 20);
    rows.push([String(i), String(i % 200), String(i % 10), String((i % 7) + 1), `${(i % 50) + 1}.00`, (i * 7.31).toFixed(2), `0.0${i % 10}`, `0.0${i % 8}`, 'RAN'[i % 3]!, 'OF'[i % 2]!, `1995-03-${day}`, `1995-04-${day}`, `1995-05-${day}`, 'DELIVER IN PERSON', 'TRUCK', comment]);
  }
  return rows;
}

/** One `.tbl` line, with dbgen's trailing `|`. */
export function tblLine(fields: readonly string[]): Buffer {
  return Buffer.from(fields.join('|') + '|\n');
}

function csvField(f: string): string {
  return /[",\n]/.test(f) ? `"${f.replace(/"/g, '""')}"` : f;
}

export function csvLine(fields: readonly string[]): Buffer {
  return Buffer.from(fields.map(csvField).join(',') + '\n');
}

/** A row as the table renders it in COPY text format with `|` (what `tableRecords` returns). */
export function tableRecord(fields: readonly string[]): string {
  return fields.map((f) => f.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')).join('|');
}

export const DAMAGE_KINDS = ['extra column', 'missing column', 'bad date', 'bad number', 'overlong varchar', 'invalid UTF-8'] as const;
export type DamageKind = (typeof DAMAGE_KINDS)[number] | 'stray quotes';

/** A damaged record's bytes, as the given writer would have written the row, then spoiled. */
export function damage(fields: readonly string[], kind: DamageKind, write: (f: readonly string[]) => Buffer): Buffer {
  const f = [...fields];
  switch (kind) {
    case 'extra column':
      return write([...f, 'extra']);
    case 'missing column':
      return write(f.slice(0, -1));
    case 'bad date':
      f[10] = '1995-13-01';
      return write(f);
    case 'bad number':
      f[4] = '12x.00';
      return write(f);
    case 'overlong varchar':
      f[15] = 'y'.repeat(60);
      return write(f);
    case 'invalid UTF-8': {
      const b = write(f);
      const at = b.lastIndexOf(Buffer.from('x')) >= 0 ? b.lastIndexOf(Buffer.from('x')) : b.length - 3;
      return Buffer.concat([b.subarray(0, at), Buffer.from([0xff, 0xfe]), b.subarray(at)]);
    }
    case 'stray quotes': {
      // Quotes around a delimiter make two fields one: CSV itself stays in step, the row has a column too few.
      const b = write(f).toString();
      const first = b.indexOf(',');
      const second = b.indexOf(',', first + 1);
      return Buffer.from(b.slice(0, first + 1) + '"' + b.slice(first + 1, second) + ',' + b.slice(second + 1).replace(',', '",'));
    }
  }
}
