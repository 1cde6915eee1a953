/**
 * `probelet check` as users run it: exit codes, every output format in its exact shape,
 * --explain, --disable, annotations, stdin (through the real executable), and a broken file
 * beside good ones.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCheck, type CheckFlags } from '../../src/cli/check/check.js';
import { BIN, REPO_ROOT, runCli } from '../cli/helpers.js';
import { loadManifests } from '../../src/api/documents.js';
import { podTemplateHash } from '../../src/api/workloads.js';
import { expectValidSarif, type SarifLog } from './sarif.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/check/', import.meta.url));
const GOOD = `${FIXTURES}good.yaml`;
const PORT_ERROR = `${FIXTURES}port-error.yaml`;
const BROKEN = `${FIXTURES}broken.yaml`;

describe('probelet check: exit status', () => {
  it('0 when nothing reaches --fail-on (default error), with the info findings printed', async () => {
    const run = await runCli(['check', GOOD]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Deployment shop/web');
    expect(run.stdout).toMatch(/^0 errors, /m);
    expect(run.stdout).toContain('skipped 1 object without a pod template (Service)');
  });

  it('1 for an error finding; --fail-on never makes it 0; --fail-on info counts info', async () => {
    expect((await runCli(['check', PORT_ERROR])).code).toBe(1);
    expect((await runCli(['check', '--fail-on', 'never', PORT_ERROR])).code).toBe(0);
    const infoOnly = await runCli(['check', '--fail-on', 'info', '--disable', 'probe-port-unresolved', PORT_ERROR]);
    expect(infoOnly.stdout).toMatch(/ info probe-port-numeric|info startup-probe-missing/);
    expect(infoOnly.code).toBe(1);
    expect((await runCli(['check', '--fail-on', 'warning', '--disable', 'probe-port-unresolved', PORT_ERROR])).code).toBe(0);
  });

  it('prints each finding as file:line:col severity rule message, grouped under file and object', async () => {
    const run = await runCli(['check', PORT_ERROR]);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toBe(PORT_ERROR);
    expect(lines[1]).toBe('  Pod api');
    expect(lines).toContain(
      `    ${PORT_ERROR}:13:34 error probe-port-unresolved readinessProbe.httpGet.port "http" is not a port of container "api": every probe errors ("port http not found") and is discarded, so the readiness probe never turns the container Ready`,
    );
  });

  it('2 for a broken file beside a good one: the problem with file:line on stderr, the other file still checked', async () => {
    const run = await runCli(['check', BROKEN, PORT_ERROR]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(new RegExp(`^${BROKEN.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:\\d+:\\d+: document 1: `));
    expect(run.stderr).toContain('1 problem in the input');
    expect(run.stdout).toContain('error probe-port-unresolved');
  });

  it('2 for a file that cannot be read, and for a wrong type, naming the field and line', async () => {
    // A path the user typed that cannot be read: exit 2 before anything is checked.
    const missing = await runCli(['check', `${FIXTURES}nope.yaml`, GOOD]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('nope.yaml: cannot read: no such file or directory\nprobelet: nothing was started');
    expect(missing.stdout).toBe('');

    let stdout = '';
    let stderr = '';
    const io = { stdout: (s: string) => void (stdout += s), stderr: (s: string) => void (stderr += s) };
    const text = 'apiVersion: v1\nkind: Pod\nmetadata: { name: p }\nspec:\n  containers:\n    - name: a\n      image: x\n      readinessProbe:\n        periodSeconds: "10"\n        tcpSocket: { port: 80 }\n';
    const code = await runCheck(['-'], flags(), io, { readStdin: async () => text });
    expect(code).toBe(2);
    expect(stderr).toContain('<stdin>:9:9: document 1: spec.containers[0].readinessProbe.periodSeconds: expected an integer, got "10"');
    // Nothing was checked (the one object could not be read): no "0 errors" that reads as a pass.
    expect(stdout).not.toContain('0 errors');
  });

  it('2 for an unrendered Helm template, with the hint to render it', async () => {
    let stderr = '';
    const io = { stdout: () => undefined, stderr: (s: string) => void (stderr += s) };
    const text = 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n  labels: {{- include "x" . | nindent 4 }}\n';
    expect(await runCheck(['-'], flags(), io, { readStdin: async () => text })).toBe(2);
    expect(stderr).toContain('render it first');
  });

  it('2 for bad flags: unknown rule, bad --startup-time, no path', async () => {
    const unknown = await runCli(['check', '--disable', 'no-such-rule', GOOD]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--disable: unknown rule "no-such-rule"');
    const badTime = await runCli(['check', '--startup-time', 'web', GOOD]);
    expect(badTime.code).toBe(2);
    expect(badTime.stderr).toContain('--startup-time: expected [POD/]CONTAINER=DURATION');
    expect((await runCli(['check', '--startup-time', 'web=soon', GOOD])).stderr).toContain('invalid duration "soon"');
    expect((await runCli(['check', '--startup-time', 'web=1m30s', GOOD])).code).toBe(0);
    expect((await runCli(['check'])).code).toBe(2);
    expect((await runCli(['check', '-o', 'xml', GOOD])).code).toBe(2);
  });
});

describe('probelet check: figures per pod (--startup-time, --probe-p99 POD/CONTAINER)', () => {
  const SAME = `${FIXTURES}same-container-name.yaml`;
  async function check(over: Partial<CheckFlags>): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const io = { stdout: (s: string) => void (stdout += s), stderr: (s: string) => void (stderr += s) };
    const code = await runCheck([SAME], flags({ output: 'json', ...over }), io);
    return { code, stdout, stderr };
  }
  const exceeded = (stdout: string): string[] =>
    (JSON.parse(stdout) as { findings: { rule: string; object: { name: string } }[] }).findings
      .filter((f) => f.rule === 'startup-time-exceeds-budget')
      .map((f) => f.object.name);

  it('a bare container name applies to every container of that name; web/app and api/app to one each', async () => {
    expect(exceeded((await check({ startupTime: ['app=90s'] })).stdout).sort()).toEqual(['api', 'web']);
    const one = await check({ startupTime: ['api/app=90s'] });
    expect(one.stderr).toBe('');
    expect(exceeded(one.stdout)).toEqual(['api']);
    // The pod-qualified key wins over the bare name.
    expect(exceeded((await check({ startupTime: ['app=90s', 'web/app=5s'] })).stdout)).toEqual(['api']);
  });

  it('takes the pod names probelet run prints (web-<pod-template-hash>-xxxxx), as its suggested line uses them', async () => {
    const load = await loadManifests([SAME]);
    const web = load.objects.find((o) => o.name === 'web');
    const template = (web?.value['spec'] as { template: unknown }).template;
    const pod = `web-${podTemplateHash(template)}-x2b4q`;
    const run = await check({ startupTime: [`${pod}/app=90s`], probeP99: [`${pod}/app.liveness=0.9s`] });
    expect(run.stderr).toBe('');
    expect(exceeded(run.stdout)).toEqual(['web']);
    const near = (JSON.parse(run.stdout) as { findings: { rule: string; object: { name: string } }[] }).findings.filter((f) => f.rule === 'probe-near-timeout');
    expect(near.map((f) => f.object.name)).toEqual(['web']);
  });

  it('says which keys found no container, and still checks everything', async () => {
    const run = await check({ startupTime: ['db/app=90s', 'nope=1s'], probeP99: ['web/app.liveness=0.1s'] });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('probelet: --startup-time db/app: no container of that name in the input');
    expect(run.stderr).toContain('probelet: --startup-time nope: no container of that name in the input');
    expect(run.stderr).not.toContain('web/app.liveness');
    expect(exceeded(run.stdout)).toEqual([]);
  });

  it('says when a --probe-p99 key names a container without that probe (its figure would never be read)', async () => {
    // Both apps have a liveness probe and nothing else.
    const run = await check({ probeP99: ['web/app.readiness=0.9s', 'app.startup=0.9s', 'api/app.liveness=0.9s'] });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe(
      'probelet: --probe-p99 web/app.readiness: web/app has no readiness probe in the input; ignored\n' +
        'probelet: --probe-p99 app.startup: app has no startup probe in the input; ignored\n',
    );
  });

  it('a key names a container for --startup-time and a container\'s probe for --probe-p99, each under its own flag', async () => {
    // Not a container: its value would never be used, so it must not pass for one.
    const run = await check({ startupTime: ['app.startup=90s'], probeP99: ['app.liveness=0.1s', 'nope.liveness=0.9s'] });
    expect(run.stderr).toContain('probelet: --startup-time app.startup: no container of that name in the input');
    expect(run.stderr).toContain('probelet: --probe-p99 nope.liveness: no container of that name in the input');
    expect(run.stderr).not.toContain('app.liveness');
    expect(exceeded(run.stdout)).toEqual([]);
  });

  it('a malformed or repeated key is a usage error that shows the form', async () => {
    for (const startupTime of [['web/=90s'], ['/app=90s'], ['app=90s', 'app=1s']]) {
      await expect(check({ startupTime })).rejects.toThrow(/--startup-time: (expected \[POD\/\]CONTAINER=DURATION|app is given twice)/);
    }
    await expect(check({ probeP99: ['web/.liveness=1s'] })).rejects.toThrow('--probe-p99: expected [POD/]CONTAINER.PROBE=DURATION');
  });

  it('a broken input: its problem first, then the keys that found nothing in what could be read', async () => {
    let stderr = '';
    const io = { stdout: () => undefined, stderr: (s: string) => void (stderr += s) };
    await runCheck([SAME, BROKEN], flags({ output: 'json', startupTime: ['nope=1s'] }), io);
    const problem = stderr.indexOf(BROKEN);
    const key = stderr.indexOf('--startup-time nope: no container of that name in the input that could be read');
    expect(problem).toBeGreaterThanOrEqual(0);
    expect(key).toBeGreaterThan(problem);
  });
});

describe('probelet check: --explain and suppression', () => {
  it('--explain prints what, why with the upstream issue, fix, example and the equivalents', async () => {
    const run = await runCli(['check', '--explain', 'probe-port-unresolved']);
    expect(run.code).toBe(0);
    for (const part of ['probe-port-unresolved (error)', 'What:', 'Why:', 'kubernetes/kubernetes #139283', 'Fix:', 'Example:', 'kube-linter liveness-port']) {
      expect(run.stdout).toContain(part);
    }
    expect((await runCli(['check', '--explain', 'invalid'])).stdout).toContain('must be 1');
    const unknown = await runCli(['check', '--explain', 'nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('rules: invalid, probe-port-unresolved');
  });

  it('--disable with a comma list, and the probelet.dev/ignore annotation, silence a rule', async () => {
    const disabled = await runCli(['check', '--disable', 'probe-port-unresolved,startup-probe-missing', '--disable', 'probe-port-numeric', PORT_ERROR]);
    expect(disabled.code).toBe(0);
    expect(disabled.stdout).not.toMatch(/probe-port-unresolved|startup-probe-missing|probe-port-numeric/);

    const annotated = readFileSync(PORT_ERROR, 'utf8').replace('  name: api\n', '  name: api\n  annotations:\n    probelet.dev/ignore: probe-port-unresolved\n');
    let stdout = '';
    const io = { stdout: (s: string) => void (stdout += s), stderr: () => undefined };
    expect(await runCheck(['-'], flags(), io, { readStdin: async () => annotated })).toBe(0);
    expect(stdout).not.toContain('probe-port-unresolved');
  });
});

describe('probelet check: input problems in every output', () => {
  /** A gRPC probe on a named port: the apiserver refuses it (a number only), at line 9. */
  const GRPC_NAMED = 'apiVersion: v1\nkind: Pod\nmetadata: { name: p }\nspec:\n  containers:\n    - name: a\n      image: x\n      livenessProbe:\n        grpc: { port: grpc }\n---\napiVersion: v1\nkind: Service\nmetadata: { name: s }\nspec: { ports: [{ port: 80 }] }\n';
  const run = async (over: Partial<CheckFlags>): Promise<{ code: number; stdout: string }> => {
    let stdout = '';
    const io = { stdout: (t: string) => void (stdout += t), stderr: () => undefined };
    const code = await runCheck(['-'], flags(over), io, { readStdin: async () => GRPC_NAMED });
    return { code, stdout };
  };

  it('-o json carries each problem (file, line, column, document, field, message) and the objects skipped', async () => {
    const { code, stdout } = await run({ output: 'json', failOn: 'never' });
    expect(code).toBe(2); // whatever --fail-on says
    const out = JSON.parse(stdout) as { problems: Record<string, unknown>[]; skipped: Record<string, unknown>[] };
    expect(out.problems).toEqual([
      {
        file: '<stdin>',
        line: 9,
        column: expect.any(Number) as number,
        document: 1,
        field: 'spec.containers[0].livenessProbe.grpc.port',
        message: expect.stringContaining('gRPC probes take a port number only') as string,
      },
    ]);
    expect(out.skipped).toEqual([{ kind: 'Service', name: 's', file: '<stdin>', line: 11, reason: 'no pod template' }]);
  });

  it('-o json|sarif: a file that cannot be read stops check before anything is checked (exit 2), and the document is still written with the problem, so an upload step never gets an empty file', async () => {
    const missing = `${FIXTURES}nope.yaml`;
    const run = await runCli(['check', '-o', 'json', missing, GOOD]);
    expect(run.code).toBe(2);
    const out = JSON.parse(run.stdout) as { findings: unknown[]; problems: unknown[] };
    expect(out.findings).toEqual([]);
    expect(out.problems).toEqual([{ file: missing, line: null, column: null, document: null, field: null, message: 'cannot read: no such file or directory' }]);
    expect(run.stderr).toContain('cannot read');
    const sarif = await runCli(['check', '-o', 'sarif', missing]);
    expect(sarif.code).toBe(2);
    const log = JSON.parse(sarif.stdout) as SarifLog;
    expect(log.runs[0]?.results.map((r) => [r.ruleId, r.level, r.message.text])).toEqual([['invalid', 'error', 'cannot read: no such file or directory']]);
  });

  it('-o sarif carries each problem as an error of the invalid rule at its place', async () => {
    const { code, stdout } = await run({ output: 'sarif' });
    expect(code).toBe(2);
    const log = JSON.parse(stdout) as SarifLog;
    const [runObj] = log.runs;
    const invalid = runObj?.results.filter((r) => r.ruleId === 'invalid') ?? [];
    expect(invalid).toHaveLength(1);
    expect(invalid[0]?.level).toBe('error');
    expect(runObj?.tool.driver.rules[invalid[0]?.ruleIndex ?? -1]?.id).toBe('invalid');
    expect(invalid[0]?.message.text).toContain('spec.containers[0].livenessProbe.grpc.port: ');
    expect(invalid[0]?.locations[0]?.physicalLocation).toMatchObject({ artifactLocation: { uri: 'stdin' }, region: { startLine: 9 } });
  });
});

describe('probelet check: the text output and --rules', () => {
  it('ends with a count per rule, worst first, before the totals', async () => {
    const run = await runCli(['check', PORT_ERROR]);
    const lines = run.stdout.trimEnd().split('\n');
    const at = lines.indexOf('by rule:');
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toMatch(/^ +1 {2}error +probe-port-unresolved$/);
    expect(lines.at(-1)).toMatch(/^1 error, \d+ warnings?, \d+ info$/);
  });

  it('--rules lists every rule with its severity and why, and the rules each one stands for', async () => {
    let stdout = '';
    const io = { stdout: (t: string) => void (stdout += t), stderr: () => undefined };
    expect(await runCheck([], flags({ rules: true }), io)).toBe(0);
    const { ruleInfos } = await import('../../src/check/rules/index.js');
    for (const r of ruleInfos) expect(stdout).toMatch(new RegExp(`^${r.id} +${r.severity} +\\S`, 'm'));
    expect(stdout).toMatch(/^liveness-delay-as-startup .*\(reported instead of startup-probe-missing for the same container\)$/m);
  });
});

describe('probelet check: machine-readable outputs', () => {
  it('-o json has exactly the documented shape', async () => {
    const run = await runCli(['check', '-o', 'json', PORT_ERROR, GOOD]);
    expect(run.code).toBe(1);
    const out = JSON.parse(run.stdout) as { findings: Record<string, unknown>[]; containers: Record<string, unknown>[] };
    expect(Object.keys(out)).toEqual(['findings', 'containers', 'problems', 'skipped', 'suppressed', 'summary', 'notes']);
    const finding = out.findings.find((f) => f['rule'] === 'probe-port-unresolved');
    expect(finding).toEqual({
      rule: 'probe-port-unresolved',
      severity: 'error',
      file: PORT_ERROR,
      line: 13,
      column: 34,
      object: { apiVersion: 'v1', kind: 'Pod', namespace: '', name: 'api' },
      container: 'api',
      field: 'spec.containers[0].readinessProbe.httpGet.port',
      message: expect.stringContaining('"http" is not a port of container "api"'),
      fingerprint: expect.stringMatching(/^[0-9a-f]{32}$/),
      template: null,
    });
    for (const f of out.findings) {
      expect(Object.keys(f)).toEqual(['rule', 'severity', 'file', 'line', 'column', 'object', 'container', 'field', 'message', 'fingerprint', 'template']);
    }
    expect((out as unknown as { summary: unknown }).summary).toEqual({ error: 1, warning: expect.any(Number), info: expect.any(Number), suppressed: 0, problems: 0, notes: 0 });
    expect(out.containers.map((c) => [c['file'], c['container']])).toEqual([
      [PORT_ERROR, 'api'],
      [GOOD, 'web'],
    ]);
    for (const c of out.containers) {
      expect(Object.keys(c)).toEqual(['file', 'object', 'container', 'probes', 'startupBudgetSeconds', 'earliestReadySeconds', 'hangToKillSeconds', 'hangToNotReadySeconds']);
      expect(Object.keys(c['object'] as object)).toEqual(['apiVersion', 'kind', 'namespace', 'name']);
      for (const key of ['startupBudgetSeconds', 'earliestReadySeconds', 'hangToKillSeconds', 'hangToNotReadySeconds']) {
        expect(c[key] === null || typeof c[key] === 'number').toBe(true);
      }
    }
  });

  it('-o sarif is SARIF 2.1.0 with the fields the spec requires, rules with help text, results with physical locations', async () => {
    const run = await runCli(['check', '-o', 'sarif', PORT_ERROR]);
    const log = JSON.parse(run.stdout) as SarifLog;
    expectValidSarif(log);
    const results = log.runs[0]?.results ?? [];
    expect(results.length).toBeGreaterThan(0);
    for (const r of results) {
      const loc = r.locations[0]?.physicalLocation;
      expect(loc?.artifactLocation.uri).toBe(`file://${PORT_ERROR}`);
      expect(loc?.region.startColumn).toBeGreaterThanOrEqual(1);
    }
    expect(results.find((r) => r.ruleId === 'probe-port-unresolved')?.level).toBe('error');
  });
});

describe('probelet check on the real executable', () => {
  it('reads - from standard input, as in `kubectl get deploy -o yaml | probelet check -`', async () => {
    const child = spawn(process.execPath, [BIN, 'check', '-o', 'json', '-'], { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stdin.end(readFileSync(PORT_ERROR));
    const [code] = (await once(child, 'close')) as [number];
    expect(code).toBe(1);
    const out = JSON.parse(stdout) as { findings: { file: string; rule: string }[] };
    expect(out.findings.find((f) => f.rule === 'probe-port-unresolved')?.file).toBe('<stdin>');
  });
});

function flags(over: Partial<CheckFlags> = {}): CheckFlags {
  return { output: 'text', failOn: 'error', startupTime: [], disable: [], ...over };
}
