import { describe, expect, it } from 'vitest';
import { formatProblem, parseManifestDocuments } from '../../src/api/documents.js';
import { podsOf } from '../../src/api/manifest.js';
import { editDistance, nearestName, unknownFields } from '../../src/api/strict-fields.js';

function problemsOf(text: string): string[] {
  const load = parseManifestDocuments(text, 'm.yaml');
  const { problems } = podsOf(load.objects);
  return [...load.problems, ...problems].map(formatProblem);
}

const deployment = (container: string, podSpec = ''): string => `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:${podSpec}
      containers:
      - name: web
        image: nginx
${container}`;

describe('strict fields: a misspelled field is refused, as the API server refuses it', () => {
  it('names the file:line, the field path and the nearest known name, and the object is not read', () => {
    const text = deployment('        livenessProbe:\n          periodSecond: 5\n          httpGet: {path: /, port: 80}\n');
    const load = parseManifestDocuments(text, 'm.yaml');
    const { pods, problems } = podsOf(load.objects);
    expect(pods).toEqual([]);
    expect(problems.map(formatProblem)).toEqual([
      'm.yaml:13:11: document 1: spec.template.spec.containers[0].livenessProbe.periodSecond: unknown field "periodSecond" in Probe: did you mean "periodSeconds"? (the API server refuses unknown fields: strict decoding error)',
    ]);
  });

  const cases: [string, string, string][] = [
    ['a probe field name', deployment('        readinessProbe: {tcpSocket: {port: 80}, timeoutSecond: 2}\n'), '"timeoutSeconds"'],
    ['a container field', deployment('        livenesProbe: {tcpSocket: {port: 80}}\n'), '"livenessProbe"'],
    ['a handler field', deployment('        lifecycle: {preStop: {exec: {comand: [sleep, "5"]}}}\n'), '"command"'],
    ['a lifecycle field', deployment('        lifecycle: {preStopp: {sleep: {seconds: 5}}}\n'), '"preStop"'],
    ['an httpGet field', deployment('        startupProbe: {httpGet: {path: /, port: 80, shceme: HTTPS}}\n'), '"scheme"'],
    ['a securityContext field', deployment('        securityContext: {runAsNonroot: true}\n'), '"runAsNonRoot"'],
    ['a resources field', deployment('        resources: {limit: {cpu: 1}}\n'), '"limits"'],
    ['a pod spec field', deployment('', '\n      terminationGracePeriodSecond: 30'), '"terminationGracePeriodSeconds"'],
    ['a workload spec field', deployment('').replace('  selector:', '  replica: 2\n  selector:'), '"replicas"'],
    ['a volume source field', deployment('', '\n      volumes: [{name: d, emptyDir: {sizeLimt: 1Gi}}]'), '"sizeLimit"'],
    ['metadata', deployment('').replace('metadata: {name: web}', 'metadata: {name: web, label: {a: b}}'), '"labels"'],
    ['a field in the wrong case', deployment('        readinessProbe: {tcpSocket: {port: 80}, PeriodSeconds: 2}\n'), '"periodSeconds"'],
  ];
  for (const [what, text, suggestion] of cases) {
    it(`${what}: refused with ${suggestion} suggested`, () => {
      const problems = problemsOf(text);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toContain(`did you mean ${suggestion}?`);
    });
  }

  it('in every kind with a pod template: CronJob, Job, StatefulSet, DaemonSet, ReplicaSet, ReplicationController, PodTemplate, Pod; init and ephemeral containers too', () => {
    const container = '{name: c, image: busybox, livenessProbe: {exec: {command: [ls]}, failureTreshold: 3}}';
    const spec = `{containers: [${container}]}`;
    const docs = [
      `apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: a}\nspec: {schedule: "* * * * *", jobTemplate: {spec: {template: {spec: ${spec}}}}}`,
      `apiVersion: batch/v1\nkind: Job\nmetadata: {name: a}\nspec: {template: {spec: ${spec}}}`,
      `apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: a}\nspec: {serviceName: a, selector: {}, template: {spec: ${spec}}}`,
      `apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: a}\nspec: {selector: {}, template: {spec: ${spec}}}`,
      `apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: a}\nspec: {selector: {}, template: {spec: ${spec}}}`,
      `apiVersion: v1\nkind: ReplicationController\nmetadata: {name: a}\nspec: {template: {spec: ${spec}}}`,
      `apiVersion: v1\nkind: PodTemplate\nmetadata: {name: a}\ntemplate: {spec: ${spec}}`,
      `apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: m, image: x}], initContainers: [${container}]}`,
      `apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: m, image: x}], ephemeralContainers: [{name: e, image: x, targetContainerNam: m}]}`,
    ];
    const problems = problemsOf(docs.join('\n---\n'));
    expect(problems).toHaveLength(docs.length);
    problems.slice(0, -1).forEach((p) => expect(p).toContain('unknown field "failureTreshold" in Probe: did you mean "failureThreshold"?'));
    expect(problems.at(-1)).toContain('did you mean "targetContainerName"?');
  });

  it('accepts every field the API has, modelled by probelet or not (affinity, topology spread, volumes, status, managedFields…)', () => {
    const text = `apiVersion: v1
kind: Pod
metadata:
  name: a
  namespace: d
  creationTimestamp: null
  managedFields: [{manager: kubectl, fieldsV1: {"f:spec": {"f:containers": {}}}}]
spec:
  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: In, values: [b]}]}]}}}
  topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {a: b}}}]
  volumes: [{name: v, csi: {driver: d, volumeAttributes: {any-key: x}}}, {name: i, image: {reference: busybox}}]
  resources: {limits: {cpu: "1"}}
  containers:
  - name: c
    image: busybox
    env: [{name: A, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
    resources: {limits: {memory: 1Gi, example.com/gpu: 1}}
    lifecycle: {stopSignal: SIGTERM, preStop: {sleep: {seconds: 1}}}
    livenessProbe: {grpc: {port: 9000}, terminationGracePeriodSeconds: 5}
    readinessProbe: null
status:
  phase: Running
  conditions: [{type: Ready, status: "True", observedGeneration: 1}]
  containerStatuses: [{name: c, ready: true, restartCount: 0, image: busybox, imageID: "", state: {running: {startedAt: "2024-01-01T00:00:00Z"}}}]
`;
    expect(problemsOf(text)).toEqual([]);
  });

  it('a mapping where a list is needed (and the reverse) is refused at its place', () => {
    const problems = problemsOf(deployment('        ports: {containerPort: 80}\n'));
    expect(problems).toEqual(['m.yaml:12:9: document 1: spec.template.spec.containers[0].ports: expected a list, got a mapping']);
    expect(problemsOf(deployment('        securityContext: [a]\n'))[0]).toContain('expected a mapping (a SecurityContext), got a list');
  });

  it('at most 50 problems per object, then how many more', () => {
    const fields = Array.from({ length: 80 }, (_, i) => `x${i}: 1`).join(', ');
    const problems = unknownFields('Pod', { apiVersion: 'v1', kind: 'Pod', spec: Object.fromEntries(fields.split(', ').map((f) => [f.split(':')[0], 1])) });
    expect(problems).toHaveLength(51);
    expect(problems.at(-1)?.message).toBe('and 30 more unknown or mistyped fields: is this the file you meant?');
  });

  it('kinds without a pod template have no table here: nothing to say', () => {
    expect(unknownFields('Service', { spec: { portz: [] } })).toEqual([]);
  });
});

describe('nearestName', () => {
  const probe = ['exec', 'httpGet', 'tcpSocket', 'grpc', 'initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold', 'terminationGracePeriodSeconds'];
  it('one or two edits, a swap, the case, or the start of a name', () => {
    expect(nearestName('periodSecond', probe)).toBe('periodSeconds');
    expect(nearestName('peroidSeconds', probe)).toBe('periodSeconds');
    expect(nearestName('HTTPGet', probe)).toBe('httpGet');
    expect(nearestName('initialDelay', probe)).toBe('initialDelaySeconds');
    expect(nearestName('tcp', probe)).toBeUndefined();
    expect(nearestName('image', probe)).toBeUndefined();
  });

  it('bounded work: a very long name is not compared (linear in the input)', () => {
    const long = 'a'.repeat(200_000);
    const start = process.hrtime.bigint();
    expect(nearestName(long, probe)).toBeUndefined();
    expect(Number(process.hrtime.bigint() - start) / 1e6).toBeLessThan(1000);
  });

  it('editDistance counts a swap of neighbours as one edit and stops at its bound', () => {
    expect(editDistance('ab', 'ba', 5)).toBe(1);
    expect(editDistance('kitten', 'sitting', 5)).toBe(3);
    expect(editDistance('kitten', 'sitting', 2)).toBe(2);
  });
});
