#!/usr/bin/env node
// The `probelet` command. Runs the compiled CLI (npm run build) so that its exit
// status is its own, without npm's wrapper.
import { main } from '../dist/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
