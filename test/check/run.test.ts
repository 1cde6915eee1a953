/** The runner: validation findings placed in the object, suppression, roles, budgets listed. */
import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { loadManifests } from '../../src/api/documents.js';
import { checkManifests, createChecker, parseFieldPath } from '../../src/check/run.js';
import { GOOD_PROBES, check, deployment } from './helpers.js';

describe('one finding per container and fact', () => {
  const delayed = deployment(`readinessProbe:\n  httpGet: { path: /healthz, port: http }\nlivenessProbe:\n  httpGet: { path: /healthz, port: http }\n  initialDelaySeconds: 30`);
  const rulesOf = (yaml: string, options: Parameters<typeof check>[1] = {}): string[] => check(yaml, options).findings.map((f) => f.rule).sort();

  it('liveness-delay-as-startup stands for startup-probe-missing, and says there is no startupProbe', () => {
    const found = check(delayed).findings;
    expect(found.map((f) => f.rule)).toContain('liveness-delay-as-startup');
    expect(found.map((f) => f.rule)).not.toContain('startup-probe-missing');
    expect(found.find((f) => f.rule === 'liveness-delay-as-startup')?.message).toContain('has no startupProbe');
  });

  it('when the rule a fact is folded into is turned off (--disable or the annotation), the next one stands in', () => {
    expect(rulesOf(delayed, { disabled: new Set(['liveness-delay-as-startup']) })).toContain('startup-probe-missing');
    const annotated = delayed.replace('metadata:\n  name: app', 'metadata:\n  name: app\n  annotations: { probelet.dev/ignore: liveness-delay-as-startup }');
    expect(rulesOf(annotated)).toContain('startup-probe-missing');
    expect(rulesOf(annotated)).not.toContain('liveness-delay-as-startup');
  });

  it('probes-identical stands for liveness-before-readiness, with its numbers after a hang', () => {
    const same = deployment(`startupProbe:\n  httpGet: { path: /healthz, port: http }\nreadinessProbe:\n  httpGet: { path: /healthz, port: http }\nlivenessProbe:\n  httpGet: { path: /healthz, port: http }`);
    const found = check(same).findings;
    expect(found.map((f) => f.rule)).toEqual(['probes-identical']);
    expect(found[0]?.message).toContain('after a hang both trip after 21s to 31s');
    expect(rulesOf(same, { disabled: new Set(['probes-identical']) })).toEqual(['liveness-before-readiness']);
  });
});

describe('checkManifests', () => {
  it("reports the apiserver's validation as an input problem with the path inside the object and its line; the object is not analysed", () => {
    const yaml = deployment(`readinessProbe:\n  httpGet: { path: /ready, port: http, scheme: http }`);
    const result = check(yaml);
    expect(result.problems).toEqual([
      expect.objectContaining({
        field: 'spec.template.spec.containers[0].readinessProbe.httpGet.scheme',
        message: 'Unsupported value: "http": supported values: "HTTP", "HTTPS"',
        line: 17,
      }),
    ]);
    expect(result.findings).toEqual([]);
    expect(result.containers).toEqual([]);
    expect(result.checked).toBe(0);
  });

  it('maps pod metadata errors to the workload\'s own metadata', () => {
    const yaml = deployment(GOOD_PROBES).replace('name: app\nspec:', 'name: Bad_Name\nspec:');
    const [f] = check(yaml).problems;
    expect(f?.field).toBe('metadata.name');
    expect(f?.line).toBe(4);
  });

  it('a template\'s own name is ignored, as the apiserver ignores it (the controller names the pods)', () => {
    const yaml = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    metadata: {name: Bad_Name}
    spec:
      containers: [{name: c, image: x}]
`;
    expect(check(yaml).problems).toEqual([]);
  });

  it('probes on a plain init container are the apiserver\'s error, and no lint rule looks at them', () => {
    const yaml = deployment(GOOD_PROBES, { podSpec: 'initContainers:\n  - name: migrate\n    image: example/migrate\n    readinessProbe: { httpGet: { path: /, port: nope } }' });
    const result = check(yaml);
    expect(result.problems.map((p) => p.field)).toEqual(['spec.template.spec.initContainers[0].readinessProbe']);
    expect(result.findings.filter((f) => f.container === 'migrate')).toEqual([]);
  });

  it('lists the budgets of regular containers and sidecars, not of plain init containers', () => {
    const yaml = deployment(GOOD_PROBES, {
      podSpec: 'initContainers:\n  - name: migrate\n    image: example/migrate\n  - name: proxy\n    image: example/proxy\n    restartPolicy: Always',
    });
    expect(check(yaml).containers.map((c) => c.container)).toEqual(['proxy', 'app']);
  });

  it('the ignore annotation on the workload or on the pod template turns rules off for that object only', () => {
    const broken = deployment(`readinessProbe:\n  httpGet: { path: /ready, port: metrics }`);
    const onWorkload = broken.replace('name: app\nspec:', 'name: app\n  annotations:\n    probelet.dev/ignore: "probe-port-unresolved, liveness-probe-missing"\nspec:');
    const onTemplate = broken.replace('labels: { app: app }', 'labels: { app: app }\n      annotations: { probelet.dev/ignore: probe-port-unresolved }');
    expect(check(broken).findings.some((f) => f.rule === 'probe-port-unresolved')).toBe(true);
    const left = check(onWorkload).findings.map((f) => f.rule);
    expect(left).not.toContain('probe-port-unresolved');
    expect(left).not.toContain('liveness-probe-missing');
    expect(check(broken).findings.map((f) => f.rule)).toContain('liveness-probe-missing');
    expect(check(onTemplate).findings.some((f) => f.rule === 'probe-port-unresolved')).toBe(false);
    const both = check(`${onWorkload}---\n${broken}`).findings.filter((f) => f.rule === 'probe-port-unresolved');
    expect(both).toHaveLength(1);
  });

  it('--disable turns a rule off everywhere; validation is no rule it can turn off (an input problem)', () => {
    const yaml = deployment(`livenessProbe:\n  httpGet: { path: /healthz, port: http }`);
    const rules = check(yaml, { disabled: new Set(['readiness-probe-missing']) }).findings.map((f) => f.rule);
    expect(rules).not.toContain('readiness-probe-missing');
    expect(rules).toContain('startup-probe-missing');
    const invalid = deployment(`livenessProbe:\n  httpGet: { path: /healthz, port: http }\n  successThreshold: 2`);
    expect(check(invalid, { disabled: new Set(['invalid']) }).problems.map((p) => p.field)).toEqual(['spec.template.spec.containers[0].livenessProbe.successThreshold']);
  });

  it('one object with values of the wrong type is a problem; the others are still checked', () => {
    const bad = deployment(`readinessProbe:\n  httpGet: { path: /ready, port: http }\n  periodSeconds: "10"`);
    const good = deployment(`readinessProbe:\n  httpGet: { path: /ready, port: metrics }`);
    const result = check(`${bad}---\n${good}`);
    expect(result.problems.map((p) => [p.line, p.field])).toEqual([[18, 'spec.template.spec.containers[0].readinessProbe.periodSeconds']]);
    expect(result.findings.filter((f) => f.rule === 'probe-port-unresolved').map((f) => f.line)).toEqual([36]);
  });

  it('parses apiserver field paths', () => {
    expect(parseFieldPath('spec.containers[12].ports[0].name')).toEqual(['spec', 'containers', 12, 'ports', 0, 'name']);
  });
});

describe('checkManifests leaves its input alone', () => {
  it('the loaded objects are not changed by defaulting (Pods and workloads)', async () => {
    const { parseManifestDocuments } = await import('../../src/api/documents.js');
    const { checkManifests } = await import('../../src/check/run.js');
    const text = `${deployment(GOOD_PROBES)}---\n${deployment(GOOD_PROBES, { kind: 'Pod' })}`;
    const load = parseManifestDocuments(text, 'x.yaml');
    const before = JSON.stringify(load.objects.map((o) => o.value));
    checkManifests(load, { startupTimes: new Map() });
    expect(JSON.stringify(load.objects.map((o) => o.value))).toBe(before);
  });
});

describe('checking objects as they are decoded (the CLI and bench path)', () => {
  it('gives exactly what checking a whole load gives, and the loader keeps no object', async () => {
    const folder = fileURLToPath(new URL('../fixtures/real-world/', import.meta.url));
    const options = { startupTimes: new Map([['controller', 45]]) };
    const whole = checkManifests(await loadManifests([folder]), options);
    const checker = createChecker(options);
    const streamed = await loadManifests([folder], { sink: (object) => checker.add(object) });
    expect(streamed.objects).toEqual([]);
    expect(checker.finish(streamed.problems)).toEqual(whole);
    expect(whole.containers.length).toBeGreaterThan(10);
  });
});
