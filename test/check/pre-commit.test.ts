/**
 * The pre-commit hook (.pre-commit-hooks.yaml) through the real `pre-commit` (PyPI, installed
 * by .ci/run) on temporary git repositories with a bad manifest: `pre-commit run --all-files`
 * fails, then passes after the fix. Twice:
 *
 * - as users configure it, `repo:` this repository (a bare clone of this checkout, `rev:` its
 *   HEAD commit — so what is tested is what is committed): pre-commit installs the published
 *   `language: node` hook with `npm install -g git+file://…`, which builds dist/ through the
 *   package's `prepare` script (scripts/prepare.mjs) — the one build of the test, slow (npm
 *   installs the dependencies from its cache, tsc, the native addon); the hook's environment
 *   is kept in the test's PRE_COMMIT_HOME, so the second run reuses it. npm's debug log of
 *   that install shows that it unpacked the package before any of its dependencies (see
 *   {@link unpackOrder}: what keeps npm's nested install from racing it);
 * - as `repo: local` (`language: system`) running this checkout's built bin, the hook's
 *   other settings read from .pre-commit-hooks.yaml: `npm run build` first.
 *
 * Without pre-commit the tests say so in their name; under CI (PROBELET_REQUIRE_PRECOMMIT=1)
 * they fail instead.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

function gitOutput(cwd: string, ...args: string[]): string {
  const run = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`git ${args.join(' ')}: ${run.stderr}`);
  return run.stdout.trim();
}

function git(cwd: string, ...args: string[]): void {
  gitOutput(cwd, ...args);
}

/** Where npm writes its debug logs during the tests (with timing lines: `npm_config_timing`). */
const npmLogs = join(dir, 'npm-logs');

/**
 * `pre-commit run --all-files` in the repository, with its cache (the hooks' environments) in
 * the temporary folder; npm prefers its own cache for the hook's dependencies and logs into
 * {@link npmLogs}.
 */
function preCommit(repo: string, timeoutMs: number): { status: number | null; output: string } {
  const npmEnv = { npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_logs_dir: npmLogs, npm_config_logs_max: '100', npm_config_timing: 'true' };
  const env = { ...process.env, PRE_COMMIT_HOME: join(dir, 'cache'), PRE_COMMIT_COLOR: 'never', SKIP: '', ...npmEnv };
  const run = spawnSync(PRE_COMMIT, ['run', '--all-files'], { cwd: repo, env, encoding: 'utf8', timeout: timeoutMs });
  return { status: run.status, output: `${run.stdout}${run.stderr}${run.error ? String(run.error) : ''}` };
}

/** A git repository holding `config` as .pre-commit-config.yaml, a bad manifest, and two files that are no manifest. */
function badRepository(name: string, config: string): string {
  const repo = join(dir, name);
  git(dir, 'init', '-q', repo);
  git(repo, 'config', 'user.email', 'test@example.invalid');
  git(repo, 'config', 'user.name', 'test');
  writeFileSync(join(repo, '.pre-commit-config.yaml'), config);
  writeFileSync(join(repo, 'deploy.yaml'), deployment(`readinessProbe:\n  httpGet: { path: /ready, port: metrics }`));
  // Neither is a Kubernetes object: one is skipped by the hook's exclude, one by --skip-non-manifests.
  writeFileSync(join(repo, 'values.yaml'), 'replicaCount: 1\n');
  writeFileSync(join(repo, 'settings.yml'), 'color: blue\n');
  git(repo, 'add', '-A');
  return repo;
}

/** The bad run fails naming the finding; after the fix the run passes. */
function failsThenPasses(repo: string, firstTimeoutMs: number): void {
  const bad = preCommit(repo, firstTimeoutMs);
  expect(bad.output).toMatch(/probelet check\.+Failed/);
  expect(bad.output).toContain('error probe-port-unresolved readinessProbe.httpGet.port "metrics"');
  expect(bad.status).toBe(1);

  writeFileSync(join(repo, 'deploy.yaml'), deployment(`readinessProbe:\n  httpGet: { path: /ready, port: http }`));
  git(repo, 'add', '-A');
  const good = preCommit(repo, 120_000);
  expect(good.output).toMatch(/probelet check\.+Passed/);
  expect(good.status).toBe(0);
}

/**
 * In what order the outer `npm install -g git+file://…` (pre-commit's, found by its argv
 * among the debug logs in {@link npmLogs}) finished unpacking probelet and its dependencies:
 * their locations (`node_modules/probelet`, `node_modules/probelet/node_modules/…`), from
 * its `timing reifyNode:…` lines. npm prepares a git dependency (clone, a nested `npm
 * install`, `prepare`) while it unpacks it; the nested install inherits the outer one's
 * `global` and installs the package into the same folder (npm/cli#9406). Unless the package
 * is unpacked before any of its dependencies (package.json's `bundleDependencies` makes npm
 * do so), the two installs unpack the same dependencies into the same folders at once:
 * ENOTEMPTY, TAR_ENTRY_ERROR.
 */
function unpackOrder(): string[] {
  const outer = readdirSync(npmLogs)
    .filter((name) => name.endsWith('-debug-0.log'))
    .map((name) => readFileSync(join(npmLogs, name), 'utf8'))
    .filter((log) => log.split('\n').some((line) => line.includes(' verbose argv ') && line.includes('"--install-links"') && line.includes('"git+file:')));
  expect(outer).toHaveLength(1);
  const order: string[] = [];
  for (const line of (outer[0] ?? '').split('\n')) {
    const location = / timing reifyNode:(node_modules\/probelet(?:\/node_modules\/\S+)?) Completed in /.exec(line)?.[1];
    if (location !== undefined) order.push(location);
  }
  return order;
}

/**
 * Installing the hook from git builds the package once, and npm installs it twice (its nested
 * install, then the outer one): 10 to 12 minutes measured on a loaded 2-core machine.
 */
const INSTALL_TIMEOUT_MS = 1_200_000;

describe.skipIf(!INSTALLED)(`pre-commit hook probelet-check${INSTALLED ? '' : ' (skipped: pre-commit is not installed here; CI installs it)'}`, () => {
  it(
    'as published, from `repo:` this repository at a commit (npm installs it from git and builds it, the package before its dependencies): fails on a bad manifest, passes after the fix',
    () => {
      const rev = gitOutput(REPO_ROOT, 'rev-parse', 'HEAD');
      const upstream = join(dir, 'probelet.git');
      git(dir, 'clone', '-q', '--bare', REPO_ROOT, upstream);
      const repo = badRepository('remote', yaml.dump({ repos: [{ repo: upstream, rev, hooks: [{ id: 'probelet-check' }] }] }));
      failsThenPasses(repo, INSTALL_TIMEOUT_MS);
      const order = unpackOrder();
      expect(order[0]).toBe('node_modules/probelet');
      expect(order.length).toBeGreaterThan(1);
    },
    INSTALL_TIMEOUT_MS + 180_000,
  );

  it('as `repo: local` on the built bin: fails on a bad manifest, passes after the fix; non-manifests and chart files pass', () => {
    failsThenPasses(badRepository('local', localConfig()), 120_000);
  });
});
