/**
 * The apiserver's rules that depend on the kind, as each command meets them: every
 * container needs an image (a Pod's and a template's alike; `image: null` too), a
 * Deployment's pods restart Always, a Job's do not. `check` reports them as validation
 * errors; `simulate` (and `run`, through the same loader) refuses what the apiserver refuses.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'probelet-kind-validation-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const NO_IMAGE = file(
  'no-image.yaml',
  `apiVersion: v1
kind: Pod
metadata: {name: a}
spec:
  containers:
  - name: c
    command: [sleep, "60"]
---
apiVersion: v1
kind: Pod
metadata: {name: b}
spec:
  containers:
  - name: c
    image: null
    command: [sleep, "60"]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  selector: {matchLabels: {app: d}}
  template:
    metadata: {labels: {app: d}}
    spec:
      containers:
      - name: c
        command: [sleep, "60"]
`,
);

const WRONG_RESTART = file(
  'wrong-restart.yaml',
  `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: busybox
        command: [sleep, "60"]
---
apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec:
  template:
    spec:
      containers:
      - name: c
        image: busybox
        command: ["true"]
`,
);

describe('validation that depends on the kind', () => {
  it('check: a container without an image (absent or null) is an error in a Pod and in a template', async () => {
    // One input rule: what the API server refuses is an input problem (exit 2, on stderr).
    const run = await runCli(['check', NO_IMAGE]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('spec.containers[0].image: Required value');
    expect(run.stderr).toContain('spec.template.spec.containers[0].image: Required value');
    expect(run.stderr.match(/containers\[0\]\.image: Required value/g)).toHaveLength(3);
  });

  it("check: a Deployment's template must restart Always, a Job's must not", async () => {
    const run = await runCli(['check', WRONG_RESTART]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"');
    expect(run.stderr).toContain('spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"');
  });

  it('simulate: refuses the pods without an image, and the workloads their kind refuses, naming each', async () => {
    const noImage = await runCli(['simulate', NO_IMAGE, '--for', '10s']);
    expect(noImage.code).toBe(2);
    expect(noImage.stderr).toContain('Pod "a" is invalid:\n  * spec.containers[0].image: Required value');
    expect(noImage.stderr).toContain('Pod "b" is invalid:\n  * spec.containers[0].image: Required value');
    expect(noImage.stderr).toContain('Pod "d" is invalid:\n  * spec.containers[0].image: Required value');
    const wrong = await runCli(['simulate', WRONG_RESTART, '--for', '10s']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain(
      'Deployment "web" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
    );
    expect(wrong.stderr).toContain('Job "once" is invalid: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"');
  });
});
