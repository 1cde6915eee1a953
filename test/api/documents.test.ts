import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatProblem, loadManifests, parseManifestDocuments, skippedNote } from '../../src/api/documents.js';
import { podsOf } from '../../src/api/manifest.js';

const pod = (name: string, container = '    - name: c\n      image: busybox\n') =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  containers:\n${container}`;

/** The value of `path` in the only object of `text`. */
function decoded(text: string): Record<string, unknown> {
  const load = parseManifestDocuments(text, 't.yaml');
  expect(load.problems.map(formatProblem)).toEqual([]);
  expect(load.objects).toHaveLength(1);
  return load.objects[0]?.value ?? {};
}

describe('YAML decoded as kubectl decodes it (YAML 1.1, go-yaml v2)', () => {
  const cases: [string, string, unknown][] = [
    ['octal 0644 (defaultMode)', '0644', 420],
    ['0o octal', '0o644', 420],
    ['hex', '0x1F', 31],
    ['underscores', '1_000', 1000],
    ['decimal', '8080', 8080],
    ['negative', '-1', -1],
    ['yes', 'yes', true],
    ['on', 'on', true],
    ['y', 'y', true],
    ['No', 'No', false],
    ['off', 'off', false],
    ['a timestamp stays a string', '2001-12-14', '2001-12-14'],
    ['a sexagesimal-looking value stays a string', '1:20', '1:20'],
    ['float', '1.5', 1.5],
    ['1e308 is a number (caught later as out of range)', '1e308', 1e308],
    ['~ is null', '~', null],
    ['quoted stays a string', '"0644"', '0644'],
  ];
  for (const [name, scalar, expected] of cases) {
    it(name, () => {
      const value = decoded(`apiVersion: v1\nkind: Pod\nx: ${scalar}\n`);
      expect(value['x']).toEqual(expected);
    });
  }

  it('merge keys: the merged timings are kept when the handler sits outside the merged block', () => {
    const text = `apiVersion: v1
kind: Pod
metadata: {name: m}
spec:
  containers:
    - name: c
      image: busybox
      livenessProbe:
        <<: &probe
          periodSeconds: 2
          timeoutSeconds: 5
          failureThreshold: 3
        failureThreshold: 1
        httpGet: {path: /healthz, port: 8080}
      readinessProbe: {<<: *probe, tcpSocket: {port: 8080}}
`;
    const load = parseManifestDocuments(text, 'm.yaml');
    const { pods, problems } = podsOf(load.objects);
    expect(problems).toEqual([]);
    const container = pods[0]?.pod.spec?.containers[0];
    expect(container?.livenessProbe).toEqual({ periodSeconds: 2, timeoutSeconds: 5, failureThreshold: 1, httpGet: { path: '/healthz', port: 8080 } });
    expect(container?.readinessProbe).toEqual({ periodSeconds: 2, timeoutSeconds: 5, failureThreshold: 3, tcpSocket: { port: 8080 } });
    // Positions follow the merge into the anchor.
    const object = load.objects[0];
    expect(object?.position(['spec', 'containers', 0, 'livenessProbe', 'periodSeconds'])).toEqual({ line: 10, column: 11 });
    expect(object?.position(['spec', 'containers', 0, 'livenessProbe', 'failureThreshold'])).toEqual({ line: 13, column: 9 });
    expect(object?.position(['spec', 'containers', 0, 'readinessProbe', 'tcpSocket', 'port'])).toEqual({ line: 15, column: 48 });
  });

  it('a duplicate key is an error at its line, as kubectl refuses it', () => {
    const load = parseManifestDocuments('apiVersion: v1\nkind: Pod\nkind: Pod\n', 'd.yaml');
    expect(load.problems.map(formatProblem)).toEqual([
      'd.yaml:3:1: document 1: duplicate field "kind": key "kind" already set in map; two documents joined without a `---` line between them?',
    ]);
  });
});

describe('documents', () => {
  it('skips other kinds, counting them in a one-line note', () => {
    const text = [
      'apiVersion: v1\nkind: Service\nmetadata: {name: s}\n',
      pod('a'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n',
      'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x}\n',
      'apiVersion: v1\nkind: Service\nmetadata: {name: t}\n',
    ].join('---\n');
    const load = parseManifestDocuments(text, 's.yaml');
    expect(load.problems).toEqual([]);
    expect(load.objects.map((o) => o.name)).toEqual(['a']);
    expect(skippedNote(load.skipped)).toBe('skipped 4 objects without a pod template (Service ×2, ConfigMap, CustomResourceDefinition)');
  });

  it('positions of fields inside a JSON document (a flow mapping at the root) are found', () => {
    const text = '{\n  "apiVersion": "v1",\n  "kind": "Pod",\n  "spec": {\n    "containers": [\n      { "name": "a", "image": "x" }\n    ]\n  }\n}\n';
    const [object] = parseManifestDocuments(text, 'p.json').objects;
    expect(object?.position(['kind'])).toEqual({ line: 3, column: 3 });
    expect(object?.position(['spec', 'containers', 0, 'image'])).toEqual({ line: 6, column: 22 });
  });

  it('reads every workload kind, PodTemplate and ReplicationController included, and Lists of them', () => {
    const tpl = '  template:\n    spec:\n      containers: [{name: c, image: x}]\n';
    const text = [
      `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n${tpl}`,
      `apiVersion: v1\nkind: ReplicationController\nmetadata: {name: rc}\nspec:\n${tpl}`,
      'apiVersion: v1\nkind: PodTemplate\nmetadata: {name: pt}\ntemplate:\n  spec:\n    containers: [{name: c, image: x}]\n',
      `apiVersion: v1\nkind: List\nitems:\n- apiVersion: apps/v1\n  kind: DaemonSet\n  metadata: {name: ds}\n  spec:\n  ${tpl.replace(/\n {2}/g, '\n    ')}`,
    ].join('---\n');
    const load = parseManifestDocuments(text, 'w.yaml');
    expect(load.problems.map(formatProblem)).toEqual([]);
    expect(load.objects.map((o) => `${o.kind}/${o.name}`)).toEqual(['Deployment/d', 'ReplicationController/rc', 'PodTemplate/pt', 'DaemonSet/ds']);
    const { pods } = podsOf(load.objects);
    expect(pods.map((p) => [p.pod.metadata?.name, p.templatePath.join('.')])).toEqual([
      ['d', 'spec.template'],
      ['rc', 'spec.template'],
      ['pt', 'template'],
      ['ds', 'spec.template'],
    ]);
    expect(load.objects[3]?.position(['spec', 'template', 'spec', 'containers', 0])).toEqual({ line: 33, column: 22 });
  });

  it('an unrendered Helm template is an error that says to render it first; the next document is still read', () => {
    const text = `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n  labels:\n    {{- include "x.labels" . | nindent 4 }}\n---\n${pod('after')}`;
    const load = parseManifestDocuments(text, 'chart.yaml');
    expect(load.problems).toHaveLength(1);
    expect(formatProblem(load.problems[0]!)).toMatch(/^chart\.yaml:\d+:\d+: document 1: .*render it first, e\.g\. `helm template RELEASE CHART \| probelet check -`$/);
    expect(load.objects.map((o) => o.name)).toEqual(['after']);
  });

  it('nesting 100,000 levels deep says what the limit is, not a stack overflow', () => {
    const text = `${'['.repeat(100_000)}${']'.repeat(100_000)}\n---\n${pod('after')}`;
    const load = parseManifestDocuments(text, 'deep.yaml');
    expect(load.problems.map(formatProblem)).toEqual([
      'deep.yaml:1:1000: document 1: nested deeper than 1000 levels, the limit for a manifest (Kubernetes objects are never this deep)',
    ]);
    expect(load.objects.map((o) => o.name)).toEqual(['after']);
  });

  it('an alias bomb is refused quickly and the other documents are still read', () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    const started = performance.now();
    const load = parseManifestDocuments(`${levels.join('\n')}\n---\n${pod('after')}`, 'bomb.yaml');
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(load.problems).toHaveLength(1);
    expect(load.problems[0]?.message).toMatch(/expands to more than \d+ (values|bytes) through aliases \(an alias bomb/);
    expect(load.objects.map((o) => o.name)).toEqual(['after']);
  });

  it('wrong types for probe fields are each reported with field path and line; the next object still loads', () => {
    const probes = [
      'periodSeconds: "10"',
      'timeoutSeconds: -1',
      'failureThreshold: 1e308',
      'initialDelaySeconds: .nan',
      'successThreshold: 1.5',
      'terminationGracePeriodSeconds: 1e300',
    ];
    const container = `    - name: c\n      image: x\n      livenessProbe:\n        tcpSocket: {port: 80}\n${probes.map((p) => `        ${p}\n`).join('')}`;
    const load = parseManifestDocuments(`${pod('bad', container)}---\n${pod('good')}`, 'types.yaml');
    const { pods, problems } = podsOf(load.objects);
    expect(problems.map(formatProblem)).toEqual([
      'types.yaml:14:9: document 1: spec.containers[0].livenessProbe.initialDelaySeconds: expected an integer, got NaN',
      'types.yaml:11:9: document 1: spec.containers[0].livenessProbe.periodSeconds: expected an integer, got "10"',
      'types.yaml:15:9: document 1: spec.containers[0].livenessProbe.successThreshold: expected an integer, got 1.5',
      'types.yaml:13:9: document 1: spec.containers[0].livenessProbe.failureThreshold: expected a 32-bit integer, got 1e+308',
      'types.yaml:16:9: document 1: spec.containers[0].livenessProbe.terminationGracePeriodSeconds: expected an integer within ±9007199254740991, got 1e+300',
    ]);
    // A negative timeout is the right type: validation (not decoding) reports it.
    expect(pods.map((p) => p.pod.metadata?.name)).toEqual(['good']);
  });

  it('ports of the wrong type or range are reported with their line', () => {
    const container = '    - name: c\n      image: x\n      readinessProbe:\n        httpGet: {port: 65536000000}\n      livenessProbe:\n        grpc: {port: "8080"}\n';
    const { problems } = podsOf(parseManifestDocuments(pod('p', container), 'p.yaml').objects);
    expect(problems.map(formatProblem)).toEqual([
      'p.yaml:12:16: document 1: spec.containers[0].livenessProbe.grpc.port: expected an integer, got "8080"',
      'p.yaml:10:19: document 1: spec.containers[0].readinessProbe.httpGet.port: expected a 32-bit integer or a string, got 65536000000',
    ]);
  });

  it('unicode names come through unchanged (validation, not decoding, judges them)', () => {
    const load = parseManifestDocuments(pod('pöd-ü'), 'u.yaml');
    expect(load.objects[0]?.name).toBe('pöd-ü');
  });

  it('a List of 1,000 pods loads in well under a second', () => {
    const items = Array.from({ length: 1000 }, (_, i) => `- apiVersion: v1\n  kind: Pod\n  metadata: {name: p${i}}\n  spec:\n    containers: [{name: c, image: x}]\n`);
    const started = performance.now();
    const load = parseManifestDocuments(`apiVersion: v1\nkind: List\nitems:\n${items.join('')}`, 'list.yaml');
    expect(load.objects).toHaveLength(1000);
    expect(load.objects[999]?.line).toBe(3 + 999 * 5 + 1);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('loadManifests', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'probelet-docs-'));
    await mkdir(join(dir, 'sub'));
    await writeFile(join(dir, 'a.yaml'), pod('a'));
    await writeFile(join(dir, 'sub', 'b.yml'), pod('b'));
    await writeFile(join(dir, 'sub', 'c.json'), JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'c' }, spec: { containers: [] } }));
    await writeFile(join(dir, 'sub', 'notes.txt'), 'not a manifest');
    await writeFile(join(dir, 'broken.yaml'), 'a: [\n');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('reads folders recursively (*.yaml, *.yml, *.json) and stdin; a broken or missing file does not stop the others', async () => {
    const load = await loadManifests([dir, join(dir, 'missing.yaml'), '-'], { readStdin: () => Promise.resolve(pod('from-stdin')) });
    expect(load.objects.map((o) => `${o.source.replace(dir, 'DIR')}:${o.name}`)).toEqual([
      'DIR/a.yaml:a',
      'DIR/sub/b.yml:b',
      'DIR/sub/c.json:c',
      '<stdin>:from-stdin',
    ]);
    expect(load.problems.map((p) => formatProblem(p).replace(dir, 'DIR'))).toEqual([
      'DIR/missing.yaml: cannot read: no such file or directory',
      'DIR/broken.yaml:2:1: document 1: unexpected end of the stream within a flow collection',
    ]);
  });
});

describe('document boundaries', () => {
  it('a %YAML directive belongs to the document after it (valid YAML, no error)', () => {
    const load = parseManifestDocuments(`%YAML 1.1\n---\n${pod('a')}---\n${pod('b')}`, 'd.yaml');
    expect(load.problems.map(formatProblem)).toEqual([]);
    expect(load.objects.map((o) => o.name)).toEqual(['a', 'b']);
  });

  it('content on the `---` line keeps its own columns', () => {
    const text = `${pod('a')}--- {apiVersion: v1, kind: Pod, metadata: {name: b}, spec: {containers: [{name: c, image: i}]}}\n`;
    const load = parseManifestDocuments(text, 'd.yaml');
    const b = load.objects[1];
    const lines = text.split('\n');
    const marker = lines.findIndex((l) => l.startsWith('--- '));
    expect(b?.line).toBe(marker + 1);
    expect(b?.position(['metadata', 'name'])).toEqual({ line: marker + 1, column: (lines[marker]?.indexOf('name: b') ?? -1) + 1 });
  });

  it('only a top-level kind: List escapes the 3 MiB limit, not one quoted inside a field', () => {
    const big = `apiVersion: v1\nkind: Pod\nmetadata:\n  name: big\n  annotations:\n    note: |\n      kind: List\n      ${'x'.repeat(4 * 1024 * 1024)}\n`;
    const load = parseManifestDocuments(big, 'big.yaml');
    expect(load.problems.map((p) => p.message)).toEqual([expect.stringContaining('more than the apiserver accepts for one object')]);
    const list = `apiVersion: v1\nkind: List\nitems:\n- ${pod('p').replace(/\n(?=.)/g, '\n  ')}  # ${'x'.repeat(4 * 1024 * 1024)}\n`;
    expect(parseManifestDocuments(list, 'list.yaml').objects.map((o) => o.name)).toEqual(['p']);
  });
});

describe('a file that is no text', () => {
  it('is told as such (an image, binary data), not as a template or a syntax error', async () => {
    const { parseManifestDocuments } = await import('../../src/api/documents.js');
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x7b, 0x7b, 0x7d, 0x7d]).toString('utf8');
    expect(parseManifestDocuments(png, 'logo.yaml').problems).toEqual([
      { source: 'logo.yaml', line: 1, column: 1, message: 'not YAML or JSON text: the file holds a PNG image, not a manifest' },
    ]);
    expect(parseManifestDocuments('a: 1\u0000\u0001', 'x.yaml').problems[0]?.message).toBe('not YAML or JSON text: the file holds binary data, not a manifest');
  });
});

describe('a Secret the API server would refuse is a problem of its own, not a Secret', () => {
  const b64 = (text: string): string => Buffer.from(text).toString('base64');
  const secret = (name: string, type: string, data: string): string => `apiVersion: v1\nkind: Secret\nmetadata: { name: ${name} }\ntype: ${type}\n${data}`;

  it('refused with file:line and the API server words; a valid Secret, an Opaque one and the pod are kept', () => {
    const text = [
      secret('bad', 'kubernetes.io/dockerconfigjson', `data:\n  .dockerconfigjson: ${b64('{"auths":')}\n`),
      secret('good', 'kubernetes.io/dockerconfigjson', `stringData:\n  .dockerconfigjson: '{"auths":{}}'\n`),
      secret('opaque', 'Opaque', `data:\n  anything: ${b64('not json')}\n`),
      pod('web'),
    ].join('---\n');
    const load = parseManifestDocuments(text, 's.yaml');
    expect(load.problems.map(formatProblem)).toEqual([
      's.yaml:6:3: document 1: Secret "bad" is invalid: data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": unexpected end of JSON input; a kubernetes.io/dockerconfigjson Secret holds a Docker config JSON object under .dockerconfigjson (base64 under data, or as text under stringData), e.g. {"auths":{"REGISTRY":{"username":"USER","password":"PASSWORD"}}}; `kubectl create secret docker-registry NAME --docker-server=REGISTRY --docker-username=USER --docker-password=PASSWORD --dry-run=client -o yaml` writes one',
    ]);
    expect(load.configs?.map((c) => c.name)).toEqual(['good', 'opaque']);
    expect(load.objects.map((o) => o.name)).toEqual(['web']);
    expect(load.skipped.map((s) => s.name)).toEqual(['good', 'opaque']);
  });

  it('data that is not base64 is the decoder\'s error for any type of Secret, as the API server decodes before it validates', () => {
    const load = parseManifestDocuments(secret('o', 'Opaque', 'data:\n  a: QUJD\n  b: "QQ=x"\n'), 's.yaml');
    expect(load.problems.map(formatProblem)).toEqual([
      's.yaml:7:3: document 1: Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 2; values under data are base64 (e.g. `base64 -w0 FILE`); put plain text under stringData instead',
    ]);
    expect(load.configs).toBeUndefined();
  });

  it('a value under stringData or data that is not a string (a JSON config written as a YAML mapping): the decoder\'s type error at that key, the first in kubectl\'s sorted order', () => {
    const load = parseManifestDocuments(
      [
        secret('m', 'kubernetes.io/dockerconfigjson', 'stringData:\n  .dockerconfigjson: {"auths": {}}\n'),
        secret('n', 'Opaque', 'data:\n  z: QUJD\n  b: 5\nstringData:\n  a: [x]\n'),
      ].join('---\n'),
      's.yaml',
    );
    expect(load.problems.map(formatProblem)).toEqual([
      's.yaml:6:3: document 1: Secret in version "v1" cannot be handled as a Secret: json: cannot unmarshal object into Go struct field Secret.stringData of type string; each value under data or stringData is one string: quote it (a JSON document under stringData is written as a YAML block `|` or a quoted string, not as a mapping)',
      's.yaml:14:3: document 2: Secret in version "v1" cannot be handled as a Secret: json: cannot unmarshal number into Go struct field Secret.data of type []byte; each value under data or stringData is one string: quote it (a JSON document under stringData is written as a YAML block `|` or a quoted string, not as a mapping)',
    ]);
    expect(load.configs).toBeUndefined();
  });
});
