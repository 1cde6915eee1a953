/**
 * The pre-commit hook (.pre-commit-hooks.yaml) through the real `pre-commit` (PyPI, installed
 * by .ci/run) on a temporary git repository with a bad manifest: `pre-commit run --all-files`
 * fails, then passes after the fix. The repository's config is `repo: local` with the hook as
 * published (id, files, exclude, require_serial and the entry's arguments read from
 * .pre-commit-hooks.yaml) but `language: system` running this checkout's built bin: the
 * published `language: node` would have pre-commit npm-install and build the package, which
 * this repository's own CI already does. `npm run build` first. Without pre-commit the test says
 * so in its name; under CI (PROBELET_REQUIRE_PRECOMMIT=1) it fails instead.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, REPO_ROOT } from '../cli/helpers.js';
import { deployment } from './helpers.js';

const PRE_COMMIT = process.env['PROBELET_PRE_COMMIT'] ?? 'pre-commit';
const INSTALLED = spawnSync(PRE_COMMIT, ['--version'], { stdio: 'ignore' }).status === 0;
if (!INSTALLED && process.env['PROBELET_REQUIRE_PRECOMMIT'] === '1') throw new Error(`${PRE_COMMIT} is not installed: pip install pre-commit (.ci/run installs it in a venv)`);

interface Hook {
  id: string;
  entry: string;
  language: string;
  files?: string;
  exclude?: string;
  require_serial?: boolean;
  [key: string]: unknown;
}
const published = yaml.load(readFileSync(join(REPO_ROOT, '.pre-commit-hooks.yaml'), 'utf8')) as Hook[];

/** The published hook as a `repo: local` hook running this checkout's bin. */
function localConfig(): string {
  const hook = published.find((h) => h.id === 'probelet-check');
  if (!hook) throw new Error('.pre-commit-hooks.yaml has no probelet-check hook');
  const [command, ...args] = hook.entry.split(' ');
  expect(command).toBe('probelet');
  const local = { ...hook, entry: [process.execPath, BIN, ...args].join(' '), language: 'system' };
  return yaml.dump({ repos: [{ repo: 'local', hooks: [local] }] });
}

const dir = mkdtempSync(join(tmpdir(), 'probelet-pre-commit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function git(...args: string[]): void {
  const run = spawnSync('git', args, { cwd: join(dir, 'repo'), encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`git ${args.join(' ')}: ${run.stderr}`);
}

/** `pre-commit run --all-files` in the repository, with its cache in the temporary folder. */
function preCommit(): { status: number | null; output: string } {
  const env = { ...process.env, PRE_COMMIT_HOME: join(dir, 'cache'), PRE_COMMIT_COLOR: 'never', SKIP: '' };
  const run = spawnSync(PRE_COMMIT, ['run', '--all-files'], { cwd: join(dir, 'repo'), env, encoding: 'utf8', timeout: 120_000 });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe.skipIf(!INSTALLED)(`pre-commit hook probelet-check${INSTALLED ? '' : ' (skipped: pre-commit is not installed here; CI installs it)'}`, () => {
  it('fails on a bad manifest, passes after the fix; non-manifests and chart files pass', () => {
    const repo = join(dir, 'repo');
    spawnSync('git', ['init', '-q', repo]);
    git('config', 'user.email', 'test@example.invalid');
    git('config', 'user.name', 'test');
    writeFileSync(join(repo, '.pre-commit-config.yaml'), localConfig());
    writeFileSync(join(repo, 'deploy.yaml'), deployment(`readinessProbe:\n  httpGet: { path: /ready, port: metrics }`));
    // Neither is a Kubernetes object: one is skipped by the hook's exclude, one by --skip-non-manifests.
    writeFileSync(join(repo, 'values.yaml'), 'replicaCount: 1\n');
    writeFileSync(join(repo, 'settings.yml'), 'color: blue\n');
    git('add', '-A');

    const bad = preCommit();
    expect(bad.output).toMatch(/probelet check\.+Failed/);
    expect(bad.output).toContain('error probe-port-unresolved readinessProbe.httpGet.port "metrics"');
    expect(bad.status).toBe(1);

    writeFileSync(join(repo, 'deploy.yaml'), deployment(`readinessProbe:\n  httpGet: { path: /ready, port: http }`));
    git('add', '-A');
    const good = preCommit();
    expect(good.output).toMatch(/probelet check\.+Passed/);
    expect(good.status).toBe(0);
  });
});
