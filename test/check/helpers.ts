/** Shared by the check tests: a manifest in, the findings out, through the real loader. */
import { parseManifestDocuments } from '../../src/api/documents.js';
import { checkManifests, type CheckResult, type CheckRunOptions } from '../../src/check/run.js';

export function check(yaml: string, options: Partial<CheckRunOptions> = {}): CheckResult {
  return checkManifests(parseManifestDocuments(yaml, 'test.yaml'), { startupTimes: new Map(), ...options });
}

/** Indents a YAML block by `n` spaces (the first line too). */
export function indent(text: string, n: number): string {
  const pad = ' '.repeat(n);
  return text
    .trim()
    .split('\n')
    .map((l) => pad + l)
    .join('\n');
}

/** A Deployment whose only container (`name: app`, port `http` 8080) gets `body` appended. */
export function deployment(body: string, { kind = 'Deployment', podSpec = '' }: { kind?: string; podSpec?: string } = {}): string {
  const apiVersion = kind === 'Job' ? 'batch/v1' : kind === 'Pod' ? 'v1' : 'apps/v1';
  const container = `- name: app
  image: example/app:1.0
  ports:
    - name: http
      containerPort: 8080
${indent(body, 2)}`;
  const spec = `${podSpec ? `${podSpec.trim()}\n` : ''}containers:
${indent(container, 2)}`;
  if (kind === 'Pod') return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\nspec:\n${indent(spec, 2)}\n`;
  return `apiVersion: ${apiVersion}
kind: ${kind}
metadata:
  name: app
spec:
  template:
    metadata:
      labels: { app: app }
    spec:
${indent(spec, 6)}
`;
}

/** A good set of probes: readiness, and liveness on the same endpoint with a larger budget. */
export const GOOD_PROBES = `
startupProbe:
  httpGet: { path: /healthz, port: http }
  failureThreshold: 30
readinessProbe:
  httpGet: { path: /healthz, port: http }
livenessProbe:
  httpGet: { path: /healthz, port: http }
  failureThreshold: 6
`;
