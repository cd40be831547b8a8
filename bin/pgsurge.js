#!/usr/bin/env node
// The command's entry: everything else lives in the compiled TypeScript, bundled into one
// file by `npm run build` (scripts/bundle.js) so that it starts faster. The bundle is
// minified; with --verbose, stack traces go through its source map to dist/src.
if (process.argv.includes('--verbose')) process.setSourceMapsEnabled(true);
const { main } = await import('../dist/bundle/main.js');

const code = await main(process.argv);
// The command is done: an input it stopped reading (a pipe whose writer has not closed it,
// after Ctrl-C or an error) must not hold the process open. What it printed is flushed
// first (a pipe is written asynchronously on some systems).
await Promise.all([process.stdout, process.stderr].map((s) => new Promise((resolve) => s.write('', resolve))));
process.exit(code);
