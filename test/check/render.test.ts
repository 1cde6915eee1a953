/**
 * `check --helm` and `check --kustomize` with the real tools: the same findings as rendering
 * by hand and piping into `check -`, each naming the chart template it came from. Where the
 * tool is not installed the test says so in its name, and fails instead under CI
 * (PROBELET_REQUIRE_HELM; kubectl is always there in CI, from the cluster build).
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCheck, type CheckFlags } from '../../src/cli/check/check.js';
import { runCli } from '../cli/helpers.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/check/', import.meta.url));
const CHART = `${FIXTURES}helm/web`;
const OVERLAY = `${FIXTURES}kustomize/overlay`;
/** Published charts vendored as test data with their licence (test/fixtures/charts/README.md). */
const CHARTS = fileURLToPath(new URL('../fixtures/charts/', import.meta.url));

function installed(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const HELM = installed('helm', ['version', '--short']);
const KUBECTL = installed('kubectl', ['version', '--client']);
if (!HELM && process.env['PROBELET_REQUIRE_HELM'] === '1') throw new Error('helm is not on PATH: bash cluster/build-helm.sh, then eval "$(npm run -s cluster:env)"');

interface Found {
  findings: { rule: string; severity: string; container: string | null; field: string; line: number; message: string; template: string | null }[];
}

async function checkJson(paths: string[], flags: Partial<CheckFlags>, stdin?: string): Promise<{ code: number; out: Found; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io = { stdout: (s: string) => void (stdout += s), stderr: (s: string) => void (stderr += s) };
  const code = await runCheck(paths, { output: 'json', startupTime: [], disable: [], config: false, ...flags }, io, stdin === undefined ? {} : { readStdin: async () => stdin });
  return { code, out: JSON.parse(stdout) as Found, stderr };
}

const same = (f: Found['findings'][number]): unknown[] => [f.rule, f.field, f.line, f.message];

describe.skipIf(!HELM)(`check --helm${HELM ? '' : ' (skipped: helm is not installed here; CI builds it)'}`, () => {
  it('gives the findings of `helm template | check -`, each naming its template', async () => {
    const rendered = execFileSync('helm', ['template', 'probelet', CHART], { encoding: 'utf8' });
    const piped = await checkJson(['-'], {}, rendered);
    const viaHelm = await checkJson([], { helm: CHART });
    expect(viaHelm.out.findings.map(same)).toEqual(piped.out.findings.map(same));
    expect(viaHelm.out.findings.length).toBeGreaterThan(0);
    for (const f of viaHelm.out.findings) expect(f.template).toBe(`${CHART}/templates/deployment.yaml`);
  });

  it('--set and -f go to helm: a values change changes the findings', async () => {
    const broken = await checkJson([], { helm: CHART, set: ['probePort=metrics'] });
    expect(broken.code).toBe(1);
    expect(broken.out.findings.filter((f) => f.rule === 'probe-port-unresolved')).toHaveLength(2);
    const text = await runCli(['check', '--helm', CHART, '--set', 'probePort=metrics', '--no-config']);
    expect(text.stdout).toContain(`(${CHART}/templates/deployment.yaml) error probe-port-unresolved`);
    const sarif = await runCli(['check', '--helm', CHART, '--set', 'probePort=metrics', '-o', 'sarif', '--no-config']);
    const result = (JSON.parse(sarif.stdout) as { runs: { results: { ruleId: string; locations: { physicalLocation: { artifactLocation: { uri: string } } }[]; relatedLocations?: { physicalLocation: { region: { startLine: number } } }[] }[] }[] }).runs[0]?.results.find((r) => r.ruleId === 'probe-port-unresolved');
    expect(result?.locations[0]?.physicalLocation.artifactLocation.uri).toBe(`file://${CHART}/templates/deployment.yaml`);
    expect(result?.relatedLocations?.[0]?.physicalLocation.region.startLine).toBeGreaterThan(0);
  });
});

/**
 * Each chart's findings with its default values, pinned: [rule, severity, container, field,
 * rendered line, template]. Each was read against the kubelet's semantics (none is false):
 * node-exporter and blackbox-exporter probe the same path on the same port with the same
 * timing for liveness and readiness, so a hang restarts the container when it takes it out of
 * service; kube-state-metrics guesses its start-up with liveness initialDelaySeconds 5 and no
 * startup probe (killed when not answering within 35 s; 24 s, not 25, can already be too long
 * because the worker compares the age from a startedAt cut to the whole second), and its
 * liveness (/livez) and readiness (/readyz) trip after a hang within the same window.
 */
const PUBLISHED: Record<string, [string, string, string, string, number, string][]> = {
  'prometheus-node-exporter': [
    ['probes-identical', 'warning', 'node-exporter', 'spec.template.spec.containers[0].livenessProbe', 108, 'daemonset.yaml'],
    ['startup-probe-missing', 'info', 'node-exporter', 'spec.template.spec.containers[0].livenessProbe', 108, 'daemonset.yaml'],
  ],
  'kube-state-metrics': [
    ['liveness-delay-as-startup', 'warning', 'kube-state-metrics', 'spec.template.spec.containers[0].livenessProbe.initialDelaySeconds', 285, 'deployment.yaml'],
    ['liveness-before-readiness', 'info', 'kube-state-metrics', 'spec.template.spec.containers[0].livenessProbe.failureThreshold', 280, 'deployment.yaml'],
  ],
  'prometheus-blackbox-exporter': [
    ['probes-identical', 'warning', 'blackbox-exporter', 'spec.template.spec.containers[0].livenessProbe', 122, 'deployment.yaml'],
    ['startup-probe-missing', 'info', 'blackbox-exporter', 'spec.template.spec.containers[0].livenessProbe', 122, 'deployment.yaml'],
  ],
};

describe.skipIf(!HELM)(`check --helm on published charts${HELM ? '' : ' (skipped: helm is not installed here; CI builds it)'}`, () => {
  it.each(Object.keys(PUBLISHED))('%s: the findings of `helm template | check -`, pinned, each naming its template', async (name) => {
    const chart = `${CHARTS}${name}`;
    const rendered = execFileSync('helm', ['template', 'probelet', chart], { encoding: 'utf8' });
    const piped = await checkJson(['-'], {}, rendered);
    const viaHelm = await checkJson([], { helm: chart });
    expect(viaHelm.stderr).toBe('');
    expect(viaHelm.code).toBe(0);
    expect(viaHelm.out.findings.map(same)).toEqual(piped.out.findings.map(same));
    expect(viaHelm.out.findings.map((f) => [f.rule, f.severity, f.container, f.field, f.line, f.template])).toEqual(
      PUBLISHED[name]?.map(([rule, severity, container, field, line, template]) => [rule, severity, container, field, line, `${chart}/templates/${template}`]),
    );
  });
});

describe.skipIf(!KUBECTL)(`check --kustomize${KUBECTL ? '' : ' (skipped: neither kustomize nor kubectl is installed here)'}`, () => {
  it('gives the findings of `kubectl kustomize | check -`', async () => {
    const rendered = execFileSync('kubectl', ['kustomize', OVERLAY], { encoding: 'utf8' });
    const piped = await checkJson(['-'], {}, rendered);
    const viaKustomize = await checkJson([], { kustomize: OVERLAY });
    expect(viaKustomize.out.findings.map(same)).toEqual(piped.out.findings.map(same));
    expect(viaKustomize.out.findings.map((f) => f.rule)).toContain('probe-port-unresolved');
  });
});

describe('when the tool is missing', () => {
  it('--helm says how to get helm (exit 2)', async () => {
    const saved = process.env['PROBELET_HELM'];
    process.env['PROBELET_HELM'] = '/nonexistent/helm';
    try {
      const run = await runCli(['check', '--helm', CHART, '--no-config']);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('helm is not installed: install helm 3 (https://helm.sh/docs/intro/install/');
    } finally {
      if (saved === undefined) delete process.env['PROBELET_HELM'];
      else process.env['PROBELET_HELM'] = saved;
    }
  });
});
