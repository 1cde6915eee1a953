#!/usr/bin/env node
// The `probelet` command. Runs the compiled CLI (npm run build) so that its exit
// status is its own, without npm's wrapper. A source checkout has no dist/ until it is
// built (`npm pack` builds it, through prepack): say so rather than fail on an import.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  // Without node_modules the build itself fails (no tsc): a fresh clone needs both steps.
  const steps = existsSync(new URL('../node_modules/typescript/', import.meta.url)) ? '`npm run build`' : '`npm ci` then `npm run build`';
  process.stderr.write(`probelet: ${root}dist/ is missing (a source checkout is not built): run ${steps} in ${root}, then try again\n`);
  process.exit(2);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
