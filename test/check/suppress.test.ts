/** Suppressions: counted, listed on request, in JSON and SARIF — never lost; other linters' annotations read. */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../cli/helpers.js';
import { check, deployment, GOOD_PROBES } from './helpers.js';

const annotated = (annotations: string, body = `livenessProbe:\n  httpGet: { path: /healthz, port: http }`): string =>
  deployment(body).replace('name: app\nspec:', `name: app\n  annotations:\n${annotations}\nspec:`);

describe('suppressions in the manifest', () => {
  it('probelet.dev/ignore with a reason after ";": the finding moves to suppressed, with who and why', () => {
    const result = check(annotated('    probelet.dev/ignore: "readiness-probe-missing; a queue worker, never behind a Service"'));
    expect(result.findings.map((f) => f.rule)).not.toContain('readiness-probe-missing');
    expect(result.suppressed.map((f) => [f.rule, f.suppression])).toEqual([
      ['readiness-probe-missing', { kind: 'inSource', by: 'probelet.dev/ignore', justification: 'a queue worker, never behind a Service' }],
    ]);
  });

  it('probelet.dev/ignore.CONTAINER covers that container only', () => {
    const twoContainers = deployment(`livenessProbe:\n  httpGet: { path: /healthz, port: http }`, {
      podSpec: 'initContainers:\n  - name: proxy\n    image: example/proxy\n    restartPolicy: Always\n    livenessProbe: { tcpSocket: { port: 15000 } }',
    }).replace('name: app\nspec:', 'name: app\n  annotations:\n    probelet.dev/ignore.proxy: readiness-probe-missing\nspec:');
    const result = check(twoContainers);
    expect(result.suppressed.map((f) => [f.rule, f.container])).toEqual([['readiness-probe-missing', 'proxy']]);
    expect(result.findings.filter((f) => f.rule === 'readiness-probe-missing').map((f) => f.container)).toEqual(['app']);
  });

  it("kube-linter's ignore-check and Checkov's skip annotations, where they mean the same check", () => {
    const kubeLinter = check(annotated('    ignore-check.kube-linter.io/no-readiness-probe: "batch worker"'));
    expect(kubeLinter.suppressed.map((f) => [f.rule, f.suppression?.by, f.suppression?.justification])).toEqual([
      ['readiness-probe-missing', 'ignore-check.kube-linter.io/no-readiness-probe', 'batch worker'],
    ]);
    const checkov = check(annotated('    checkov.io/skip1: CKV_K8S_9=batch worker', ''));
    expect(checkov.suppressed).toEqual([]); // no probe at all: probes-missing needs both presence checks skipped
    const both = check(annotated('    checkov.io/skip1: CKV_K8S_9=batch worker\n    checkov.io/skip2: CKV_K8S_8=batch worker', ''));
    expect(both.suppressed.map((f) => f.rule)).toEqual(['probes-missing']);
    expect(both.findings.map((f) => f.rule)).not.toContain('probes-missing');
  });

  it("kube-linter's readiness-port covers the readiness probe's port findings, not the liveness probe's", () => {
    const body = `readinessProbe:\n  httpGet: { path: /ready, port: metrics }\nlivenessProbe:\n  httpGet: { path: /healthz, port: admin }`;
    const result = check(annotated('    ignore-check.kube-linter.io/readiness-port: ""', body));
    expect(result.suppressed.map((f) => f.field)).toEqual(['spec.template.spec.containers[0].readinessProbe.httpGet.port']);
    expect(result.findings.filter((f) => f.rule === 'probe-port-unresolved').map((f) => f.field)).toEqual(['spec.template.spec.containers[0].livenessProbe.httpGet.port']);
  });

  it('a suppressed rule of a fold group lets the next one stand in (as --disable does)', () => {
    const delayed = `readinessProbe:\n  httpGet: { path: /healthz, port: http }\nlivenessProbe:\n  httpGet: { path: /healthz, port: http }\n  initialDelaySeconds: 30`;
    const result = check(annotated('    probelet.dev/ignore: liveness-delay-as-startup', delayed));
    expect(result.suppressed.map((f) => f.rule)).toEqual(['liveness-delay-as-startup']);
    expect(result.findings.map((f) => f.rule)).toContain('startup-probe-missing');
  });
});

describe('a suppression that suppresses nothing is reported, never ignored', () => {
  const typo = '    probelet.dev/ignore: "readines-probe-missing; a queue worker"';

  it('an unknown rule id: a warning note naming the annotation and the nearest rule id; the finding it meant stands', () => {
    const result = check(annotated(typo));
    expect(result.notes).toEqual([
      {
        severity: 'warning',
        file: 'test.yaml',
        line: 6,
        column: 5,
        object: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: '', name: 'app' },
        field: 'metadata.annotations[probelet.dev/ignore]',
        message: 'unknown rule "readines-probe-missing" (did you mean "readiness-probe-missing"?): it suppresses nothing (probelet check --rules lists the rules)',
      },
    ]);
    expect(result.findings.map((f) => f.rule)).toContain('readiness-probe-missing');
    expect(result.suppressed).toEqual([]);
  });

  it("on the pod template's metadata, .CONTAINER naming no container, and the input rule `invalid`", () => {
    const onTemplate = deployment(`livenessProbe:\n  httpGet: { path: /healthz, port: http }`).replace(
      'labels: { app: app }',
      'labels: { app: app }\n      annotations:\n        probelet.dev/ignore.ap: readiness-probe-missing\n        probelet.dev/ignore: "invalid, probe-port-unresolved"',
    );
    expect(check(onTemplate).notes.map((n) => [n.line, n.field, n.message])).toEqual([
      [10, 'spec.template.metadata.annotations[probelet.dev/ignore.ap]', 'no container "ap" in this pod (did you mean "app"?): it suppresses nothing (the pod\'s containers: app)'],
      [11, 'spec.template.metadata.annotations[probelet.dev/ignore]', '"invalid" cannot be suppressed (an object the API server refuses is an input problem): it suppresses nothing'],
    ]);
  });

  it('known rules and containers give no note', () => {
    expect(check(annotated('    probelet.dev/ignore.app: "readiness-probe-missing; a queue worker"')).notes).toEqual([]);
  });

  describe('on the command line: text (stderr), JSON and SARIF; the exit code is the findings\'', () => {
    const dir = mkdtempSync(join(tmpdir(), 'probelet-suppress-typo-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'deploy.yaml');
    writeFileSync(file, annotated(typo, GOOD_PROBES));

    it('text: a warning line on stderr with file:line:col, the object and the annotation', async () => {
      const run = await runCli(['check', file]);
      expect(run.stderr).toContain(`${file}:6:5 warning Deployment app: metadata.annotations[probelet.dev/ignore]: unknown rule "readines-probe-missing" (did you mean "readiness-probe-missing"?)`);
      expect(run.code).toBe(0);
    });

    it('JSON: under notes, counted in the summary; SARIF: a warning result with its own rule descriptor', async () => {
      const json = JSON.parse((await runCli(['check', file, '-o', 'json'])).stdout) as { notes: { field: string; message: string; line: number }[]; summary: { notes: number } };
      expect(json.notes.map((n) => [n.line, n.field])).toEqual([[6, 'metadata.annotations[probelet.dev/ignore]']]);
      expect(json.notes[0]?.message).toContain('did you mean "readiness-probe-missing"?');
      expect(json.summary.notes).toBe(1);
      const sarif = JSON.parse((await runCli(['check', file, '-o', 'sarif'])).stdout) as {
        runs: { tool: { driver: { rules: { id: string }[] } }; results: { ruleId: string; ruleIndex: number; level: string; message: { text: string }; locations: { physicalLocation: { region: { startLine: number } } }[] }[] }[];
      };
      const run = sarif.runs[0];
      const note = run?.results.find((r) => r.ruleId === 'suppression-unmatched');
      expect(note?.level).toBe('warning');
      expect(note?.message.text).toMatch(/^metadata\.annotations\[probelet\.dev\/ignore\]: unknown rule "readines-probe-missing" \(did you mean "readiness-probe-missing"\?\)/);
      expect(note?.locations[0]?.physicalLocation.region.startLine).toBe(6);
      expect(run?.tool.driver.rules[note?.ruleIndex ?? -1]?.id).toBe('suppression-unmatched');
    });
  });
});

describe('suppressions on the command line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'probelet-suppress-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'deploy.yaml');
  writeFileSync(file, annotated('    probelet.dev/ignore: "probe-port-unresolved; the sidecar serves it"', `readinessProbe:\n  httpGet: { path: /ready, port: metrics }\nlivenessProbe:\n  httpGet: { path: /healthz, port: http }\n  failureThreshold: 6\nstartupProbe:\n  httpGet: { path: /healthz, port: http }`));

  it('a suppressed error does not fail (exit 0); the summary counts it; --show-suppressed lists it with who and why', async () => {
    const run = await runCli(['check', file]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('; 1 suppressed (--show-suppressed lists them)');
    expect(run.stdout).not.toContain('probe-port-unresolved');
    const shown = await runCli(['check', file, '--show-suppressed']);
    expect(shown.stdout).toMatch(/error probe-port-unresolved .* \(suppressed by probelet\.dev\/ignore: the sidecar serves it\)/);
  });

  it('JSON lists it under suppressed; SARIF emits it as a result with suppressions', async () => {
    const json = JSON.parse((await runCli(['check', file, '-o', 'json'])).stdout) as { suppressed: { rule: string; suppression: unknown }[]; summary: { suppressed: number } };
    expect(json.suppressed.map((f) => [f.rule, f.suppression])).toEqual([['probe-port-unresolved', { kind: 'inSource', by: 'probelet.dev/ignore', justification: 'the sidecar serves it' }]]);
    expect(json.summary.suppressed).toBe(1);
    const sarif = JSON.parse((await runCli(['check', file, '-o', 'sarif'])).stdout) as { runs: { results: { ruleId: string; suppressions?: { kind: string; justification: string }[] }[] }[] };
    const result = sarif.runs[0]?.results.find((r) => r.ruleId === 'probe-port-unresolved');
    expect(result?.suppressions).toEqual([{ kind: 'inSource', status: 'accepted', justification: 'the sidecar serves it', properties: { by: 'probelet.dev/ignore' } }]);
  });
});
