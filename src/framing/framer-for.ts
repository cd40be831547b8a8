import { CsvFramer } from './csv-framer.js';
import type { Format } from './formats.js';
import type { Framer } from './framer.js';
import { LineFramer } from './line-framer.js';
import { TblFramer } from './tbl-framer.js';

export function framerFor(format: Format): Framer {
  switch (format) {
    case 'tbl':
      return new TblFramer();
    case 'text':
      return new LineFramer();
    case 'csv':
      return new CsvFramer();
  }
}
