#!/usr/bin/env node
// The command's entry: everything else lives in the compiled TypeScript.
import { main } from '../dist/src/cli/main.js';

process.exitCode = await main(process.argv);
