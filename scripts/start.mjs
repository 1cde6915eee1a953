// `npm start`: builds probelet when its sources are newer than dist/ (saying so first: the build
// takes seconds with nothing else on screen), then runs the demo pod and exits with its status.
//
// Why a script and not `npm run build && node bin/probelet.js …`: on Ctrl-C the terminal sends
// SIGINT to the whole foreground process group, and npm forwards the SIGINT it got to its child
// too. probelet would get it twice — "Ctrl-C again kills them at once", exit 130 — and the shell
// between npm and node dies of it, so npm exits 130 where the README says 0. So this script
// (exec'd by npm: it is npm's child) ignores SIGINT, probelet, its child in the same process
// group, gets the terminal's one, and npm exits with probelet's status. A SIGTERM sent to npm
// alone (`kill <npm>`) is forwarded to probelet, which stops the same way.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));

/** The newest modification time (ms) of the files under `dir`, 0 if none. */
function newest(dir) {
  let max = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    max = Math.max(max, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return max;
}

/** dist/ is older than a source of the build (src/, web/, the build's config) or missing. */
function stale() {
  const built = ['dist/index.js', 'dist/web/app.js'].map((f) => join(root, f));
  if (!built.every((f) => existsSync(f))) return true;
  const builtAt = Math.min(...built.map((f) => statSync(f).mtimeMs));
  const sources = Math.max(
    newest(join(root, 'src')),
    newest(join(root, 'web')),
    ...['package.json', 'tsconfig.json', 'tsconfig.build.json'].map((f) => statSync(join(root, f)).mtimeMs),
  );
  return sources > builtAt;
}

process.on('SIGINT', () => {}); // the terminal's Ctrl-C reaches probelet itself (see above)

if (stale()) {
  process.stderr.write('npm start: building probelet (npm run build; about 10-20 s) …\n');
  const build = spawnSync('npm', ['run', '-s', 'build'], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 130);
}

const probelet = spawn(process.execPath, [join(root, 'bin/probelet.js'), 'run', 'examples/demo/pod.yaml', ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
});
process.on('SIGTERM', () => probelet.kill('SIGTERM'));
probelet.on('exit', (code, signal) => process.exit(code ?? 128 + (signal === null ? 0 : constants.signals[signal])));
