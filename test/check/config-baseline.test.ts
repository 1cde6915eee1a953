/** `.probelet.yaml` (strict, found upward), `--baseline` / `--write-baseline`, and the files a folder's walk leaves out. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fingerprint } from '../../src/check/baseline.js';
import { BIN, runCli } from '../cli/helpers.js';
import { check, deployment } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'probelet-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const path = join(dir, name);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
}

/** A Deployment with one error (unresolved readiness port) and the presence warnings. */
const BROKEN = deployment(`readinessProbe:\n  httpGet: { path: /ready, port: metrics }`);

describe('.probelet.yaml', () => {
  it('turns rules off, sets their severity and fail-on; the flags still win', async () => {
    const manifest = write('a/deploy.yaml', BROKEN);
    const config = write('a/.probelet.yaml', 'rules:\n  probe-port-unresolved: off\n  liveness-probe-missing: error\nfail-on: warning\n');
    const run = await runCli(['check', '--config', config, manifest, '-o', 'json']);
    const out = JSON.parse(run.stdout) as { findings: { rule: string; severity: string }[] };
    expect(out.findings.map((f) => f.rule)).not.toContain('probe-port-unresolved');
    expect(out.findings.find((f) => f.rule === 'liveness-probe-missing')?.severity).toBe('error');
    expect(run.code).toBe(1);
    const never = await runCli(['check', '--config', config, manifest, '--fail-on', 'never']);
    expect(never.code).toBe(0);
  });

  it('exclude: files of a folder matching a glob are not read, and are listed as skipped', async () => {
    write('b/app/deploy.yaml', deployment(`readinessProbe:\n  httpGet: { path: /ready, port: http }`));
    const test = write('b/charts/x/templates/tests/test-pod.yaml', BROKEN);
    const config = write('b/.probelet.yaml', 'exclude:\n  - "**/templates/tests/**"\n');
    const run = await runCli(['check', '--config', config, join(dir, 'b'), '-o', 'json']);
    const out = JSON.parse(run.stdout) as { findings: { file: string }[]; skipped: { file: string; reason: string }[] };
    expect(out.findings.map((f) => f.file)).not.toContain(test);
    expect(out.skipped).toContainEqual({ kind: null, name: null, file: test, line: null, reason: 'excluded by the configuration' });
  });

  it('startup-time and probe-p99 per workload, as the flags take them', async () => {
    const manifest = write('c/deploy.yaml', deployment(`livenessProbe:\n  httpGet: { path: /healthz, port: http }`));
    const config = write('c/.probelet.yaml', 'startup-time:\n  app/app: 5m\n');
    const run = await runCli(['check', '--config', config, manifest, '-o', 'json']);
    const rules = (JSON.parse(run.stdout) as { findings: { rule: string }[] }).findings.map((f) => f.rule);
    expect(rules).toContain('startup-time-exceeds-budget');
  });

  it('is read strictly: an unknown key or rule names its line and the nearest known name; a bad value says what is expected (exit 2)', async () => {
    const manifest = write('d/deploy.yaml', BROKEN);
    const config = write('d/.probelet.yaml', 'rules:\n  probe-port-unresolve: off\n  probes-missing: loud\nfail_on: warning\nexclude: tests/\n');
    const run = await runCli(['check', '--config', config, manifest]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${config}:2: rules.probe-port-unresolve: unknown rule "probe-port-unresolve": did you mean "probe-port-unresolved"?`);
    expect(run.stderr).toContain(`${config}:3: rules.probes-missing: expected one of off, on, error, warning, info, got "loud"`);
    expect(run.stderr).toContain(`${config}:4: fail_on: unknown key "fail_on": did you mean "fail-on"?`);
    expect(run.stderr).toContain(`${config}:5: exclude: expected a list of strings, got "tests/"`);
    expect(run.stdout).toBe('');
  });

  it('is found upward from the working directory (the real executable, run in a sub-folder)', async () => {
    write('e/.probelet.yaml', 'rules:\n  probe-port-unresolved: off\n  readiness-probe-missing: off\n  startup-probe-missing: off\n  liveness-probe-missing: off\n');
    const manifest = write('e/k8s/deploy.yaml', BROKEN);
    const child = spawn(process.execPath, [BIN, 'check', 'deploy.yaml', '-o', 'json'], { cwd: join(dir, 'e/k8s'), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => void (stdout += d.toString()));
    const [code] = (await once(child, 'exit')) as [number];
    expect((JSON.parse(stdout) as { findings: unknown[] }).findings).toEqual([]);
    expect(code).toBe(0);
    expect(manifest).toContain('e/k8s');
    const none = await runCli(['check', '--no-config', manifest]);
    expect(none.code).toBe(1);
  });
});

describe('--baseline / --write-baseline', () => {
  it('only findings not in the baseline fail; a line moved or containers reordered keep their fingerprint', async () => {
    const manifest = write('f/deploy.yaml', BROKEN);
    const baseline = join(dir, 'f/baseline.json');
    const written = await runCli(['check', manifest, '--write-baseline', baseline]);
    expect(written.code).toBe(0);
    expect(written.stderr).toMatch(/wrote \d+ findings to the baseline/);
    const entries = (JSON.parse(readFileSync(baseline, 'utf8')) as { findings: { rule: string; fingerprint: string }[] }).findings;
    expect(entries.map((e) => e.rule)).toContain('probe-port-unresolved');

    // Lines shifted by a comment: still the same findings, all in the baseline.
    writeFileSync(manifest, `# a comment\n# another\n${BROKEN}`);
    const same = await runCli(['check', manifest, '--baseline', baseline]);
    expect(same.code).toBe(0);
    expect(same.stdout).toMatch(/0 errors, 0 warnings, 0 info; \d+ suppressed/);

    // A new error (the liveness probe's port) fails, alone.
    writeFileSync(manifest, deployment(`readinessProbe:\n  httpGet: { path: /ready, port: metrics }\nlivenessProbe:\n  httpGet: { path: /healthz, port: admin }`));
    const fresh = await runCli(['check', manifest, '--baseline', baseline, '-o', 'json']);
    expect(fresh.code).toBe(1);
    const out = JSON.parse(fresh.stdout) as { findings: { rule: string; field: string }[]; suppressed: { suppression: { kind: string; by: string } }[] };
    expect(out.findings.filter((f) => f.rule === 'probe-port-unresolved').map((f) => f.field)).toEqual(['spec.template.spec.containers[0].livenessProbe.httpGet.port']);
    expect(out.suppressed[0]?.suppression).toMatchObject({ kind: 'external', by: `baseline ${baseline}` });
  });

  it('fingerprints: rule, object, container and field — not the line, not the container index', () => {
    const one = check(BROKEN).findings.find((f) => f.rule === 'probe-port-unresolved');
    const moved = check(deployment(`readinessProbe:\n  httpGet: { path: /ready, port: metrics }`, { podSpec: 'initContainers:\n  - name: first\n    image: x' }).replace('name: app\nspec:', 'name: app\n  labels: {a: b}\nspec:')).findings.find((f) => f.rule === 'probe-port-unresolved');
    expect(one && moved).toBeTruthy();
    expect(one?.line).not.toBe(moved?.line);
    if (one && moved) expect(fingerprint(moved)).toBe(fingerprint(one));
    if (one) expect(fingerprint({ ...one, object: { ...one.object, name: 'other' } })).not.toBe(fingerprint(one));
  });

  it('SARIF carries each fingerprint in partialFingerprints', async () => {
    const manifest = write('g/deploy.yaml', BROKEN);
    const sarif = JSON.parse((await runCli(['check', manifest, '-o', 'sarif'])).stdout) as { runs: { results: { ruleId: string; partialFingerprints?: Record<string, string> }[] }[] };
    const results = sarif.runs[0]?.results ?? [];
    expect(results.length).toBeGreaterThan(0);
    for (const r of results) expect(r.partialFingerprints?.['probelet/v1']).toMatch(/^[0-9a-f]{32}$/);
  });

  it('a baseline that is not one is refused (exit 2), naming how to write one', async () => {
    const manifest = write('h/deploy.yaml', BROKEN);
    const bad = write('h/baseline.json', '{"findings": 3}');
    const run = await runCli(['check', manifest, '--baseline', bad]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('not a probelet baseline');
    expect(run.stderr).toContain('--write-baseline');
  });
});

describe('files a folder holds that check does not read', () => {
  it('are listed in JSON skipped and named on stderr', async () => {
    write('i/deploy.yaml', deployment(`readinessProbe:\n  httpGet: { path: /ready, port: http }`));
    const golden = write('i/deploy.yaml.golden', BROKEN);
    write('i/.git/config', '[core]');
    const run = await runCli(['check', join(dir, 'i'), '-o', 'json', '--fail-on', 'never']);
    const out = JSON.parse(run.stdout) as { skipped: { file: string; reason: string }[] };
    expect(out.skipped).toEqual([{ kind: null, name: null, file: golden, line: null, reason: 'not *.yaml, *.yml or *.json' }]);
    expect(run.stderr).toContain(`skipped 1 file in the folders: ${golden} (not *.yaml, *.yml or *.json)`);
  });

  it('"the other objects were checked" only when some were', async () => {
    const only = write('j/typo.yaml', deployment(`readinessProbe:\n  httpGet: { path: /ready, port: http }\n  periodSecond: 5`));
    const run = await runCli(['check', only]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('1 problem in the input (above); nothing else was checked');
  });
});
