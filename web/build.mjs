/**
 * Bundles the dashboard (web/) into dist/web/: app.js (esbuild, one file, no imports left),
 * app.css and index.html copied. Run by `npm run build` after tsc; nothing is fetched at
 * run time.
 */
import { copyFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = (/** @type {string} */ path) => fileURLToPath(new URL(path, import.meta.url));
const out = here('../dist/web/');
await mkdir(out, { recursive: true });
await build({
  entryPoints: [here('./src/main.ts')],
  outfile: `${out}app.js`,
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  sourcemap: false,
  legalComments: 'none',
  logLevel: 'warning',
});
await copyFile(here('./index.html'), `${out}index.html`);
await copyFile(here('./app.css'), `${out}app.css`);
await copyFile(here('./favicon.svg'), `${out}favicon.svg`);
