/**
 * The install script (native/build.mjs) on a copy of the addon's sources: quiet when the
 * addon builds (node-gyp printed some forty lines of `gyp info`), one line and a log file when
 * it does not, and never a failed install.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// npm hands node-gyp to scripts (and to `npx vitest`); without it there is nothing to test with.
const nodeGyp = process.env['npm_config_node_gyp'];

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function copyOfSources(): string {
  dir = mkdtempSync(join(tmpdir(), 'native-build-'));
  mkdirSync(join(dir, 'native'));
  for (const file of ['binding.gyp', 'native/build.mjs', 'native/spawn.c']) copyFileSync(join(ROOT, file), join(dir, file));
  return dir;
}

function install(cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['native/build.mjs'], { cwd, env, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe.runIf(nodeGyp !== undefined && process.platform === 'linux')('native/build.mjs (the install script)', () => {
  it('prints nothing when the addon builds', async () => {
    const copy = copyOfSources();
    expect(await install(copy, process.env)).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(existsSync(join(copy, 'build/Release/probelet_spawn.node'))).toBe(true);
  }, 130_000);

  it('says in one line that it did not build, keeps the log, and exits 0', async () => {
    const copy = copyOfSources();
    const run = await install(copy, { ...process.env, CC: '/bin/false', CXX: '/bin/false' });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('');
    const log = join(copy, 'build/native-build.log');
    expect(run.stderr).toMatch(
      new RegExp(`^probelet: the native spawn addon did not build \\(.+\\) \\(log: ${log.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\); containers and exec probes start through Node spawn instead \\(slower, same behaviour\\)\\n$`),
    );
    expect(readFileSync(log, 'utf8')).toContain('gyp');
  }, 130_000);
});
