/**
 * The GitHub Action (action.yml) through a small harness: its check step's script is run as
 * the runner would run it (inputs as the step's env, GITHUB_ACTION_PATH the checkout) on a
 * repository with a bad manifest: it fails with annotations and SARIF, then passes after the
 * fix. The install step (npm ci + build of the action's checkout) is the one this repository's
 * own CI already runs, so it is not repeated here; the upload step is GitHub's own action.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../cli/helpers.js';
import { deployment } from './helpers.js';

interface Step {
  id?: string;
  run?: string;
  uses?: string;
  env?: Record<string, string>;
}
const action = yaml.load(readFileSync(join(REPO_ROOT, 'action.yml'), 'utf8')) as { inputs: Record<string, { default: string }>; runs: { using: string; steps: Step[] } };

/** `${{ inputs.x }}` and `${{ github.action_path }}` as the runner expands them. */
function expand(text: string, inputs: Record<string, string>): string {
  return text.replace(/\$\{\{\s*(inputs\.[\w-]+|github\.action_path)\s*\}\}/g, (_, name: string) => (name === 'github.action_path' ? REPO_ROOT : (inputs[name.slice('inputs.'.length)] ?? '')));
}

function runStep(step: Step, cwd: string, given: Record<string, string>): { status: number | null; stdout: string } {
  const inputs = { ...Object.fromEntries(Object.entries(action.inputs).map(([k, v]) => [k, v.default])), ...given };
  const env: Record<string, string> = { ...process.env as Record<string, string>, GITHUB_ACTION_PATH: REPO_ROOT };
  for (const [k, v] of Object.entries(step.env ?? {})) env[k] = expand(v, inputs);
  const result = spawnSync('bash', ['-c', expand(step.run ?? '', inputs)], { cwd, env, encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout };
}

const dir = mkdtempSync(join(tmpdir(), 'probelet-action-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Each step runs the built CLI a few times (about 6 s alone): a loaded machine may take several times that.
describe('action.yml (composite), its check step run as the runner runs it', { timeout: 120_000 }, () => {
  it('is a composite action: install, check, upload SARIF', () => {
    expect(action.runs.using).toBe('composite');
    expect(action.runs.steps.map((s) => s.id ?? s.uses)).toEqual(['install', 'check', 'github/codeql-action/upload-sarif@v3']);
  });

  it('fails on a bad manifest with annotations and SARIF, then passes after the fix', () => {
    const check = action.runs.steps.find((s) => s.id === 'check') as Step;
    const manifest = join(dir, 'deploy.yaml');
    writeFileSync(manifest, deployment(`readinessProbe:\n  httpGet: { path: /ready, port: metrics }`));
    const bad = runStep(check, dir, { paths: 'deploy.yaml' });
    expect(bad.status).toBe(1);
    expect(bad.stdout).toMatch(/^::error file=deploy\.yaml,line=\d+,col=\d+,title=probelet probe-port-unresolved::readinessProbe\.httpGet\.port "metrics"/m);
    const sarif = JSON.parse(readFileSync(join(dir, 'probelet.sarif'), 'utf8')) as { version: string; runs: { results: { ruleId: string }[] }[] };
    expect(sarif.version).toBe('2.1.0');
    expect(sarif.runs[0]?.results.map((r) => r.ruleId)).toContain('probe-port-unresolved');

    writeFileSync(manifest, deployment(`readinessProbe:\n  httpGet: { path: /ready, port: http }`));
    const good = runStep(check, dir, { paths: 'deploy.yaml' });
    expect(good.stdout).not.toMatch(/^::error/m);
    expect(good.status).toBe(0);
  });

  it('a misspelled field is an annotated input problem (exit 2)', () => {
    const check = action.runs.steps.find((s) => s.id === 'check') as Step;
    writeFileSync(join(dir, 'typo.yaml'), deployment(`readinessProbe:\n  httpGet: { path: /ready, port: http }\n  periodSecond: 5`));
    const run = runStep(check, dir, { paths: 'typo.yaml', sarif: 'typo.sarif' });
    expect(run.status).toBe(2);
    expect(run.stdout).toMatch(/^::error file=typo\.yaml,line=\d+,col=\d+,title=probelet input problem::spec\.template\.spec\.containers\[0\]\.readinessProbe\.periodSecond: unknown field "periodSecond" in Probe: did you mean "periodSeconds"\?/m);
  });
});
