/**
 * The package's `install` script: builds the native spawn addon (binding.gyp, native/spawn.c)
 * with node-gyp, quietly. node-gyp prints some forty lines of `gyp info` and compiler lines on
 * success, which buried npm's own output; they are kept back, and only a failure is told, in
 * one line (with where the full log was left). A failed build never fails the install:
 * without the addon, containers and exec probes start through Node's spawn (slower, same
 * behaviour), see src/util/spawn-primitive.ts.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
// npm hands lifecycle scripts the node-gyp it bundles; outside npm, the one on PATH.
const bundled = process.env['npm_config_node_gyp'];
const [command, args] = bundled ? [process.execPath, [bundled, 'rebuild']] : ['node-gyp', ['rebuild']];
const result = spawnSync(command, args, { cwd: root, encoding: 'utf8', shell: !bundled, maxBuffer: 64 << 20 });

const logFile = `${root}build/native-build.log`;
if (result.status === 0) {
  rmSync(logFile, { force: true }); // a failed build's log would outlive the failure
} else {
  const log = [result.error ? String(result.error) : '', result.stdout ?? '', result.stderr ?? ''].join('\n');
  let where = '';
  try {
    mkdirSync(`${root}build`, { recursive: true });
    writeFileSync(logFile, log);
    where = ` (log: ${logFile})`;
  } catch {
    // Nowhere to keep the log: the line below still says what happened.
  }
  const reason = result.error ? result.error.message : lastErrorLine(log);
  process.stderr.write(
    `probelet: the native spawn addon did not build${reason ? ` (${reason})` : ''}${where}; ` +
      'containers and exec probes start through Node spawn instead (slower, same behaviour)\n',
  );
}

/** The line of node-gyp's output that says what went wrong, if one does. */
function lastErrorLine(log) {
  const lines = log.split('\n').map((l) => l.trim());
  const error = lines.filter((l) => /error/i.test(l) && !/^gyp ERR! (stack|System|command|cwd|node -v|node-gyp -v|not ok)/.test(l));
  return error[0]?.replace(/^gyp ERR! /, '').slice(0, 200) ?? '';
}
