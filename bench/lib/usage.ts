import { readFileSync } from 'node:fs';

/*
 * `--help` (or `-h`) for every bench: print the bench's own opening comment (what it
 * measures and its command line, kept in the compiled file) and exit 0, instead of running
 * the bench. Imported first, for its effect, by each script under bench/.
 */

/** The text of a script's opening doc comment, without its stars; '' when it has none. */
export function openingComment(source: string): string {
  const match = /^(?:#![^\n]*\n)?\s*\/\*\*([\s\S]*?)\*\//.exec(source);
  if (match === null) return '';
  return match[1]!
    .split('\n')
    .map((line) => line.replace(/^\s*\* ?/, ''))
    .join('\n')
    .trim();
}

const asked = process.argv.slice(2).some((a) => a === '--help' || a === '-h');
if (asked && process.argv[1] !== undefined) {
  const text = openingComment(readFileSync(process.argv[1], 'utf8'));
  console.log(text === '' ? `no description in ${process.argv[1]}` : text);
  process.exit(0);
}
