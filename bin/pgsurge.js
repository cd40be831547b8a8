#!/usr/bin/env node
// The command's entry: everything else lives in the compiled TypeScript, bundled into one
// file by `npm run build` (scripts/bundle.js) so that it starts faster.
import { main } from '../dist/bundle/main.js';

process.exitCode = await main(process.argv);
