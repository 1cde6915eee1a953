/**
 * `null` in any field of a pod (issue 21: `image: null` threw `Cannot read properties of null
 * (reading 'split')` with no file, line or field, and simulate, probe -f and run dropped every
 * other document). A null is the decoder's zero value, or a field error; never an exception,
 * and one bad document never costs the others.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { admitPods } from '../../src/api/admit.js';
import { parseManifestDocuments } from '../../src/api/documents.js';
import { podsOf } from '../../src/api/manifest.js';
import { checkManifests } from '../../src/check/run.js';
import { runCli } from '../cli/helpers.js';

const probe = (kind: 'exec' | 'http' | 'tcp' | 'grpc') => ({
  ...(kind === 'exec' ? { exec: { command: ['true'] } } : {}),
  ...(kind === 'http' ? { httpGet: { path: '/healthz', port: 'http', host: '127.0.0.1', scheme: 'HTTP', httpHeaders: [{ name: 'X-A', value: 'b' }] } } : {}),
  ...(kind === 'tcp' ? { tcpSocket: { port: 8080, host: '127.0.0.1' } } : {}),
  ...(kind === 'grpc' ? { grpc: { port: 9090, service: 'svc' } } : {}),
  initialDelaySeconds: 1,
  timeoutSeconds: 2,
  periodSeconds: 5,
  successThreshold: 1,
  failureThreshold: 3,
});

const container = (name: string) => ({
  name,
  image: 'busybox:1.36',
  command: ['sleep', '60'],
  args: ['x'],
  workingDir: '/tmp',
  env: [{ name: 'A', value: '1' }],
  ports: [{ name: 'http', containerPort: 8080, hostPort: 0, protocol: 'TCP', hostIP: '' }],
  livenessProbe: { ...probe('http'), terminationGracePeriodSeconds: 5 },
  readinessProbe: probe('tcp'),
  startupProbe: probe('exec'),
  lifecycle: { postStart: { exec: { command: ['true'] } }, preStop: { sleep: { seconds: 1 } } },
});

/** A pod with every field probelet reads. */
const FULL = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'full', namespace: 'default', uid: 'u-full', labels: { app: 'a' }, annotations: { note: 'n' } },
  spec: {
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 30,
    initContainers: [
      { ...container('init'), livenessProbe: undefined, readinessProbe: undefined, startupProbe: undefined, lifecycle: undefined },
      { ...container('sidecar'), restartPolicy: 'Always', readinessProbe: probe('grpc') },
    ],
    containers: [container('app')],
  },
};

const GOOD = 'apiVersion: v1\nkind: Pod\nmetadata: {name: good}\nspec: {containers: [{name: app, image: x, command: [sleep, "60"], livenessProbe: {exec: {command: ["true"]}}}]}\n';

/** Every path to a field or list item of `value`. */
function paths(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value)) return value.flatMap((item, i) => [[...at, i], ...paths(item, [...at, i])]);
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, item]) => (item === undefined ? [] : [[...at, key], ...paths(item, [...at, key])]));
  }
  return [];
}

function withNullAt(path: (string | number)[]): unknown {
  const copy = JSON.parse(JSON.stringify(FULL)) as Record<string | number, unknown>;
  let at: Record<string | number, unknown> = copy;
  for (const segment of path.slice(0, -1)) at = at[segment] as Record<string | number, unknown>;
  at[path[path.length - 1] as string | number] = null;
  return copy;
}

describe('null in any field of a full pod', () => {
  const all = paths(FULL);

  it(`is a zero value or a field error in the loader, check and admission: ${all.length} fields, none throws, the good pod beside it always passes`, () => {
    expect(all.length).toBeGreaterThan(100);
    const thrown: string[] = [];
    for (const path of all) {
      const where = path.join('.');
      const text = `${JSON.stringify(withNullAt(path))}\n---\n${GOOD}`;
      try {
        const load = parseManifestDocuments(text, 'f.yaml');
        const checked = checkManifests(load, { startupTimes: new Map() });
        const crashes = checked.problems.filter((p) => /could not check|Cannot read|undefined|null \(/.test(p.message));
        if (crashes.length > 0) thrown.push(`${where}: check: ${crashes.map((p) => p.message).join('; ')}`);
        const { pods, problems } = podsOf(load.objects);
        for (const p of problems) if (p.field === undefined && p.line === undefined) thrown.push(`${where}: a problem with no place: ${p.message}`);
        const admitted = admitPods(pods.map((p) => p.pod));
        if (!admitted.pods.some((p) => p.metadata?.name === 'good')) thrown.push(`${where}: the good pod was lost`);
        for (const e of admitted.errors) for (const fe of e.errors) if (fe.field === '') thrown.push(`${where}: an error with no field`);
      } catch (err) {
        thrown.push(`${where}: threw ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    expect(thrown).toEqual([]);
  });
});

describe('image: null through every command', () => {
  const dir = mkdtempSync(join(tmpdir(), 'probelet-null-'));
  const file = join(dir, 'pods.yaml');
  writeFileSync(file, `apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec:\n  containers:\n    - name: app\n      image: null\n      command: [sleep, "60"]\n      livenessProbe: {exec: null, tcpSocket: {port: 1, host: null}}\n---\n${GOOD}`);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const noCrash = (text: string): void => expect(text).not.toMatch(/Cannot read properties|TypeError|could not check/);

  it('check, simulate, probe -f and run read both pods (the one without an image refused, as the apiserver does)', async () => {
    const check = await runCli(['check', file]);
    noCrash(check.stdout + check.stderr);
    // One input rule: the refused pod is an input problem at its line (exit 2), the other checked.
    expect(check.code).toBe(2);
    expect(check.stdout).toMatch(/Pod good/);
    expect(check.stderr).toMatch(/pods\.yaml:7:\d+: document 1: spec\.containers\[0\]\.image: Required value/);

    const refusal = 'probelet: Pod "bad" is invalid:\n  * spec.containers[0].image: Required value';
    const simulate = await runCli(['simulate', file, '--for', '30s']);
    noCrash(simulate.stdout + simulate.stderr);
    expect(simulate.stdout).toMatch(/Simulating good/);
    expect(simulate.stderr).toContain(refusal);

    const probeGood = await runCli(['probe', '-f', file, '--pod', 'good', '--container', 'app', '--type', 'liveness']);
    noCrash(probeGood.stdout + probeGood.stderr);
    expect(probeGood.stdout).toMatch(/Verdict:\s+success/);

    const run = await runCli(['run', file, '--timeout', '1s', '--listen', '127.0.0.1:0', '--log-dir', join(dir, 'logs')]);
    noCrash(run.stdout + run.stderr);
    expect(run.stdout).toMatch(/good/);
    expect(run.stderr).toContain(refusal);
  }, 60_000);
});
