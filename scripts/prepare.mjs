/**
 * The package's `prepare` script: builds dist/ when a source checkout is installed without it.
 *
 * Why: installed from git (`npm install -g git+https://…`, and so pre-commit's `language: node`
 * hook, which installs the hook's repository with `npm install -g --install-links git+file://…`),
 * npm prepares its temporary clone with a nested `npm install` and then runs `prepare` — never
 * `prepack`, which is what builds dist/ for `npm pack` and `npm publish`. Without this the
 * command would only say "dist/ is missing".
 *
 * npm hands a global install's `global` setting down to that nested `npm install`
 * (npm_config_global in its environment; npm/cli#9406), which so installs the clone globally
 * rather than preparing it: into the very folder the outer install is filling, and this script
 * runs inside it, with the clone still without node_modules. Hence:
 * - the build tools are installed here first, into the clone, from the lockfile, without
 *   scripts. Only npm's temporary clone is touched, which no install is filling meanwhile
 *   (npm runs `prepare` after any install into it);
 * - package.json bundles one small dependency (`bundleDependencies`): npm unpacks a package
 *   that has a bundle — and so prepares it, nested install and all — before it unpacks any of
 *   its other dependencies, in the outer install and in the nested one. Without that both
 *   unpacked the same dependencies into the same folders at once and the install failed now
 *   and then (ENOTEMPTY, TAR_ENTRY_ERROR in @kubernetes/client-node). The bundled package is
 *   the smallest dependency with none of its own (@types/js-yaml, 9 KB); nothing else is
 *   bundled, in the git install or in the registry's tarball.
 *
 * Cheap where nothing is to be done:
 * - dist/ built already: nothing (a built checkout; the second `prepare` npm runs for a git
 *   install; `npm pack`, whose `prepack` built it just before);
 * - no sources (tsconfig.build.json absent): nothing — npm runs no `prepare` for a registry
 *   tarball anyway, which ships dist/ and no sources;
 * - `npm ci`: nothing — that is this repository's own install (CI, the GitHub Action, a
 *   contributor), which builds with `npm run build` right after; building here would build twice.
 * A failed build fails the install with tsc's words, rather than installing a command that
 * cannot run.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const built = existsSync(`${root}dist/cli/main.js`);
const sources = existsSync(`${root}tsconfig.build.json`);
if (built || !sources || process.env['npm_command'] === 'ci') process.exit(0);

process.stderr.write('probelet: building dist/ (a source checkout installed without it, e.g. from git)\n');
// npm hands lifecycle scripts its own CLI; outside npm, the one on PATH.
const npmCli = process.env['npm_execpath'];
/** Runs npm in the checkout; its stdout goes to stderr: what `npm pack` prints on stdout is the tarball's name, and tools read it. */
function npm(...args) {
  const [command, argv] = npmCli ? [process.execPath, [npmCli, ...args]] : ['npm', args];
  const result = spawnSync(command, argv, { cwd: root, stdio: ['ignore', process.stderr, process.stderr], shell: !npmCli });
  if (result.status !== 0) {
    process.stderr.write(`probelet: npm ${args.join(' ')} failed (${result.error ? result.error.message : `exit ${result.status ?? result.signal}`}); dist/ is missing\n`);
    process.exit(1);
  }
}
if (!existsSync(`${root}node_modules/typescript/package.json`)) {
  npm('ci', '--global=false', '--include=dev', '--ignore-scripts', '--no-audit', '--no-fund');
}
npm('run', '-s', 'build', '--global=false');
