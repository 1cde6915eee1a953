import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { admitPods } from '../../src/api/admit.js';
import { loadManifestFile, ManifestError, parseManifest } from '../../src/api/manifest.js';
import type { Pod } from '../../src/api/types.js';
import { namesPodOf } from '../../src/api/workloads.js';
import { admitForLocalRun } from '../../src/kubelet/admission.js';
import { parseManifestDocuments } from '../../src/api/documents.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/manifests/${name}`, import.meta.url));

function errorOf(fn: () => unknown): ManifestError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ManifestError);
    return err as ManifestError;
  }
  throw new Error('expected a ManifestError');
}

const names = (pods: Pod[]) => pods.map((p) => p.metadata?.name);

const podDoc = (name: string) => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
  containers:
    - name: c
      image: img
      command: [sleep, "1"]
`;

const workloads: Record<string, string> = {
  Deployment: 'apiVersion: apps/v1\nkind: Deployment',
  StatefulSet: 'apiVersion: apps/v1\nkind: StatefulSet',
  DaemonSet: 'apiVersion: apps/v1\nkind: DaemonSet',
  ReplicaSet: 'apiVersion: apps/v1\nkind: ReplicaSet',
  Job: 'apiVersion: batch/v1\nkind: Job',
};

const template = (indent: string) =>
  [
    'template:',
    '  metadata:',
    '    labels: {app: w}',
    '  spec:',
    '    containers:',
    '      - name: c',
    '        command: [sleep, "1"]',
    '        livenessProbe: {tcpSocket: {port: 80}}',
  ]
    .map((l) => indent + l)
    .join('\n');

describe('parseManifest', () => {
  it('reads a YAML pod file as is (no defaulting)', async () => {
    const pods = await loadManifestFile(fixture('web-pod.yaml'));
    expect(pods).toHaveLength(1);
    const [pod] = pods;
    expect(pod?.metadata).toEqual({ name: 'web', labels: { app: 'web' } });
    expect(pod?.spec?.containers[0]?.livenessProbe).toEqual({ httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 5 });
  });

  it('reads JSON', async () => {
    const pods = await loadManifestFile(fixture('pod.json'));
    expect(names(pods)).toEqual(['json-pod']);
    expect(pods[0]?.metadata?.namespace).toBe('team');
  });

  it('reads multi-document YAML, skipping empty and comment-only documents, and flattens Lists', async () => {
    expect(names(await loadManifestFile(fixture('multi.yaml')))).toEqual(['first', 'second', 'third']);
    expect(parseManifest('', 'empty.yaml')).toEqual([]);
    expect(parseManifest('# nothing\n---\n', 'empty.yaml')).toEqual([]);
  });

  it('reads a PodList whose items omit apiVersion and kind (like the kubelet /pods output)', () => {
    const text = JSON.stringify({
      apiVersion: 'v1',
      kind: 'PodList',
      items: [{ metadata: { name: 'a' }, spec: { containers: [{ name: 'c' }] } }],
    });
    const pods = parseManifest(text, 'pods.json');
    expect(pods).toEqual([{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a' }, spec: { containers: [{ name: 'c' }] } }]);
  });

  it('names file, line and column of a YAML syntax error', async () => {
    const path = fixture('broken.yaml');
    const err = await loadManifestFile(path).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ManifestError);
    expect((err as ManifestError).message).toBe(`${path}:4:10: document 1: bad indentation of a mapping entry`);
    expect(err).toMatchObject({ source: path, line: 4, column: 10 });
    const dup = errorOf(() => parseManifest('a: 1\na: 2\n', 'pod.yaml'));
    expect(dup.message).toBe('pod.yaml:2:1: document 1: duplicate field "a": key "a" already set in map; give each field once');
  });

  it('skips kinds without a pod template instead of refusing the file', () => {
    const text = `apiVersion: v1\nkind: Service\nmetadata: {name: s}\n---\n${podDoc('p')}---\napiVersion: v1\nkind: ConfigMap\n`;
    expect(names(parseManifest(text, 'svc.yaml'))).toEqual(['p']);
  });

  it('reports every bad document at once, each with its line, and numbers only documents with content', () => {
    const text = `# comment only\n---\n${podDoc('ok')}---\nkind: Pod\nmetadata: {name: x}\n---\n- a\n- b\n---\njust text\n`;
    expect(errorOf(() => parseManifest(text, 'p.yaml')).message).toBe(
      [
        'p.yaml:13:1: document 2: apiVersion not set: every object needs apiVersion and kind (e.g. apiVersion: v1, kind: Pod)',
        'p.yaml:16:1: document 3: expected a Kubernetes object (a mapping with apiVersion and kind), got a list',
        'p.yaml:19:1: document 4: expected a Kubernetes object (a mapping with apiVersion and kind), got "just text"',
      ].join('\n'),
    );
    expect(errorOf(() => parseManifest('apiVersion: v1\n', 'p.yaml')).message).toBe(
      'p.yaml:1:1: document 1: kind not set: every object needs apiVersion and kind (e.g. apiVersion: v1, kind: Pod)',
    );
    const list = 'apiVersion: v1\nkind: List\nitems:\n  - {apiVersion: v1}\n';
    expect(errorOf(() => parseManifest(list, 'l.yaml')).message).toBe(
      'l.yaml:4:5: document 1, items[0]: kind not set: every object needs apiVersion and kind (e.g. apiVersion: v1, kind: Pod)',
    );
  });

  it('rejects a kind in the wrong API version, saying the right one', () => {
    expect(errorOf(() => parseManifest('apiVersion: apps/v1\nkind: Pod\n', 'p.yaml')).message).toBe(
      'p.yaml:1:1: document 1: no matches for kind "Pod" in version "apps/v1": use apiVersion: v1',
    );
  });

  it('rejects values of the wrong type with their path and line', () => {
    const text = `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
    - name: c
      command: sleep 10
      env: [{name: PORT, value: 8080}]
      livenessProbe: {exec: {command: [x]}, periodSeconds: "10"}
`;
    expect(errorOf(() => parseManifest(text, 'p.yaml')).message).toBe(
      [
        'p.yaml:7:7: document 1: spec.containers[0].command: expected a list of strings, got "sleep 10"',
        'p.yaml:8:26: document 1: spec.containers[0].env[0].value: expected a string, got 8080',
        'p.yaml:9:45: document 1: spec.containers[0].livenessProbe.periodSeconds: expected an integer, got "10"',
      ].join('\n'),
    );
  });

  it('wraps an unreadable file in a ManifestError naming it', async () => {
    await expect(loadManifestFile('/nonexistent/pod.yaml')).rejects.toThrow(
      /^\/nonexistent\/pod\.yaml: cannot read: no such file or directory$/,
    );
  });
});

describe('workload templates', () => {
  for (const [kind, head] of Object.entries(workloads)) {
    const text = `${head}\nmetadata: {name: w, namespace: prod}\nspec:\n${template('  ')}\n`;

    it(`${kind}: its pod template becomes a Pod named after the workload`, () => {
      expect(parseManifest(text, 'w.yaml')).toEqual([
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { labels: { app: 'w' }, name: 'w', namespace: 'prod' },
          spec: { containers: [{ name: 'c', command: ['sleep', '1'], livenessProbe: { tcpSocket: { port: 80 } } }] },
        },
      ]);
    });
  }

  it('names pods the way their controllers would with controller naming', () => {
    const objects = Object.entries(workloads).map(([, head]) => `${head}\nmetadata: {name: w}\nspec:\n${template('  ')}\n`);
    objects.push(`apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: w}\nspec:\n  jobTemplate:\n    spec:\n${template('      ')}\n`);
    const pods = parseManifest(objects.join('---\n'), 'w.yaml', { naming: 'controller', nowMs: 29_000_000 * 60_000 });
    const meta = pods.map((p) => [p.metadata?.name, p.metadata?.generateName]);
    expect(meta[0]?.[0]).toBeUndefined();
    expect(meta[0]?.[1]).toMatch(/^w-[bcdfghjklmnpqrstvwxz2456789]{6,10}-$/);
    expect(pods[0]?.metadata?.labels?.['pod-template-hash']).toBe(meta[0]?.[1]?.slice(2, -1));
    expect(meta.slice(1)).toEqual([
      ['w-0', undefined],
      [undefined, 'w-'],
      [undefined, 'w-'],
      [undefined, 'w-'],
      [undefined, 'w-29000000-'],
    ]);
  });

  it('namesPodOf recognises the names run gives each pod, and the object name, and nothing else', () => {
    const kinds = [...Object.entries(workloads).map(([, head]) => `${head}\nmetadata: {name: w}\nspec:\n${template('  ')}\n`)];
    kinds.push(`apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: w}\nspec:\n  jobTemplate:\n    spec:\n${template('      ')}\n`);
    kinds.push(podDoc('w'));
    const load = parseManifestDocuments(kinds.join('---\n'), 'w.yaml');
    expect(load.problems).toEqual([]);
    const named = parseManifest(kinds.join('---\n'), 'w.yaml', { naming: 'controller', nowMs: 29_000_000 * 60_000 });
    for (const pod of named) for (const c of pod.spec?.containers ?? []) c.image ??= 'img';
    const admitted = admitForLocalRun(named, { requireCommand: false });
    expect(admitted.errors).toEqual([]);
    expect(admitted.pods).toHaveLength(load.objects.length);
    load.objects.forEach((object, i) => {
      const podName = admitted.pods[i]?.metadata?.name ?? '';
      expect(namesPodOf(object.kind, object.value, podName), `${object.kind} ${podName}`).toBe(true);
      expect(namesPodOf(object.kind, object.value, 'w'), object.kind).toBe(true);
      // Another workload's pod, a longer name sharing the prefix, a wrong suffix: not this object's.
      expect(namesPodOf(object.kind, object.value, `w-api-${podName.slice(-5)}`), object.kind).toBe(false);
      expect(namesPodOf(object.kind, object.value, `${podName}x`), object.kind).toBe(false);
      expect(namesPodOf(object.kind, object.value, 'web'), object.kind).toBe(false);
    });
  });

  it('namesPodOf: an unnamed object (generateName only) names only what the apiserver would make of it', () => {
    const unnamed = { metadata: { generateName: 'job-' }, spec: {} };
    expect(namesPodOf('Pod', unnamed, 'job-x2b4q')).toBe(true);
    expect(namesPodOf('Pod', unnamed, 'web')).toBe(false);
    expect(namesPodOf('Pod', unnamed, 'job-')).toBe(false);
    expect(namesPodOf('Pod', { spec: {} }, 'web')).toBe(false);
    expect(namesPodOf('CronJob', { metadata: { name: 'w' }, spec: {} }, 'w-123-x2b4q')).toBe(true);
    expect(namesPodOf('CronJob', { metadata: { name: 'w' }, spec: {} }, 'w-12a-x2b4q')).toBe(false);
  });

  it('CronJob: uses spec.jobTemplate.spec.template; template metadata wins over the workload', () => {
    const text = `apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 0 * * *"
  jobTemplate:
    spec:
${template('      ').replace('labels: {app: w}', 'labels: {app: w}\n          name: tpl\n          namespace: ops')}
`;
    const [pod] = parseManifest(text, 'c.yaml');
    expect(pod?.metadata).toEqual({ labels: { app: 'w' }, name: 'tpl', namespace: 'ops' });
    expect(pod?.spec?.containers[0]?.livenessProbe).toEqual({ tcpSocket: { port: 80 } });
  });

  it('reads the Deployment fixture and reports a workload without a template', async () => {
    const pods = await loadManifestFile(fixture('deployment.yaml'));
    expect(pods[0]?.metadata).toMatchObject({ name: 'api', namespace: 'shop' });
    const noTemplate = 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 1}\n';
    expect(errorOf(() => parseManifest(noTemplate, 'd.yaml')).message).toBe(
      'd.yaml:4:1: document 1: Deployment "d" has no spec.template',
    );
  });

  it('accepts workloads inside a List', () => {
    const list = {
      apiVersion: 'v1',
      kind: 'List',
      items: [{ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { template: { spec: { containers: [] } } } }],
    };
    expect(names(parseManifest(JSON.stringify(list), 'l.json'))).toEqual(['j']);
  });
});

describe('admitPods', () => {
  it('admits `kubectl get pod -o json` output unchanged (a fully defaulted, stored pod)', async () => {
    const loaded = await loadManifestFile(fixture('kubectl-get-pod.json'));
    const { pods, errors } = admitPods(loaded);
    expect(errors).toEqual([]);
    expect(pods).toEqual(loaded);
  });

  it('defaults and validates each pod independently', () => {
    const text = [
      podDoc('good'),
      podDoc('Bad_Name'),
      podDoc('also-good').replace('command', 'readinessProbe: {exec: {command: [x]}, terminationGracePeriodSeconds: 3}\n      command'),
      podDoc('good'),
      podDoc('last'),
    ].join('---\n');
    const { pods, errors } = admitPods(parseManifest(text, 'm.yaml'));
    expect(names(pods)).toEqual(['good', 'last']);
    expect(pods[0]?.spec?.restartPolicy).toBe('Always');
    expect(pods[0]?.metadata?.namespace).toBe('default');
    expect(errors.map((e) => [e.pod, e.errors.map(String)])).toEqual([
      [
        'Bad_Name',
        [
          'metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case ' +
            "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. " +
            "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        ],
      ],
      [
        'also-good',
        [
          'spec.containers[0].readinessProbe.terminationGracePeriodSeconds: Invalid value: 3: must not be set for readinessProbes',
        ],
      ],
      ['good', ['metadata.name: Duplicate value: "good"']],
    ]);
    expect(errors[1]?.message).toBe(
      'Pod "also-good" is invalid: spec.containers[0].readinessProbe.terminationGracePeriodSeconds: ' +
        'Invalid value: 3: must not be set for readinessProbes',
    );
  });

  it('names an unnamed pod by its position and does not mutate the input', () => {
    const input: Pod[] = [{ apiVersion: 'v1', kind: 'Pod', spec: { containers: [] } }];
    const before = structuredClone(input);
    const { pods, errors } = admitPods(input);
    expect(pods).toEqual([]);
    expect(errors[0]?.pod).toBe('#1');
    expect(errors[0]?.message).toBe(
      'Pod "" is invalid: [metadata.name: Required value: name or generateName is required, spec.containers: Required value]',
    );
    expect(input).toEqual(before);
  });
});
