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
// What still waits for stdout's reader when the command is done (a run's last view lines) is
// written as the reader takes it; a reader that goes away instead (EPIPE) only loses those
// lines, and the status stays the command's — not Node's stack trace and status 1.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') return;
  process.stderr.write(`probelet: writing the output failed: ${error.message}\n`);
  process.exitCode = 1;
});
