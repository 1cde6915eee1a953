// `npm run oracle`: bundles test/oracle/main.ts with esbuild (a dev dependency the dashboard
// build already uses) into a temporary file beside it and runs it, passing the arguments on.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const out = fileURLToPath(new URL(`./.oracle-${process.pid}.mjs`, import.meta.url));
await build({
  entryPoints: [fileURLToPath(new URL('./main.ts', import.meta.url))],
  outfile: out,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
});
// Imported modules keep their own URLs; the bundle sits in test/oracle so `../../` still means the root.
process.on('exit', () => rmSync(out, { force: true }));
await import(pathToFileURL(out).href);
