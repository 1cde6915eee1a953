import { describe, expect, it } from 'vitest';
import { applyPodDefaults, setPodDefaults } from '../../src/api/defaults.js';
import type { Container, Pod, Probe } from '../../src/api/types.js';
import { validatePod, validateProbe } from '../../src/api/validation.js';

const C0 = 'spec.containers[0]';
const LABEL_REGEX_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and " +
  "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is " +
  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN_REGEX_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must " +
  "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is " +
  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/** A valid, fully defaulted pod with one regular container `c`, changed by `edit`. */
function pod(edit: (c: Container, p: Pod) => void = () => {}): Pod {
  const p: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p' },
    spec: { containers: [{ name: 'c', image: 'img', command: ['sleep', '1'] }] },
  };
  edit(p.spec!.containers[0]!, p);
  return setPodDefaults(p);
}

function errors(p: Pod): string[] {
  return validatePod(p).map(String);
}

/** For a pod that exists already (ephemeral containers are added to those only). */
function existingErrors(p: Pod): string[] {
  return validatePod(p, { create: false }).map(String);
}

function withProbe(field: 'livenessProbe' | 'readinessProbe' | 'startupProbe', probe: Probe): Pod {
  return pod((c) => {
    c[field] = probe;
  });
}

const exec = { exec: { command: ['true'] } };

describe('validatePod: catalog V1–V15 (exact apiserver text)', () => {
  it('accepts the baseline pod', () => {
    expect(errors(pod())).toEqual([]);
  });

  it('V1: liveness successThreshold 2 must be 1', () => {
    expect(errors(withProbe('livenessProbe', { ...exec, successThreshold: 2 }))).toEqual([
      `${C0}.livenessProbe.successThreshold: Invalid value: 2: must be 1`,
    ]);
  });

  it('V2: startup successThreshold 3 must be 1', () => {
    expect(errors(withProbe('startupProbe', { ...exec, successThreshold: 3 }))).toEqual([
      `${C0}.startupProbe.successThreshold: Invalid value: 3: must be 1`,
    ]);
  });

  it('V3: readiness successThreshold 5 is valid', () => {
    expect(errors(withProbe('readinessProbe', { ...exec, successThreshold: 5 }))).toEqual([]);
  });

  it('V4: readiness may not set terminationGracePeriodSeconds', () => {
    expect(errors(withProbe('readinessProbe', { ...exec, terminationGracePeriodSeconds: 10 }))).toEqual([
      `${C0}.readinessProbe.terminationGracePeriodSeconds: Invalid value: 10: must not be set for readinessProbes`,
    ]);
  });

  it('V5: liveness terminationGracePeriodSeconds 0 must be greater than 0', () => {
    expect(errors(withProbe('livenessProbe', { ...exec, terminationGracePeriodSeconds: 0 }))).toEqual([
      `${C0}.livenessProbe.terminationGracePeriodSeconds: Invalid value: 0: must be greater than 0`,
    ]);
  });

  it('V6: a probe without a handler', () => {
    expect(errors(withProbe('livenessProbe', {}))).toEqual([
      `${C0}.livenessProbe: Required value: must specify a handler type`,
    ]);
  });

  it('V7: exec + httpGet: the later handler is Forbidden', () => {
    expect(errors(withProbe('livenessProbe', { ...exec, httpGet: { port: 80 } }))).toEqual([
      `${C0}.livenessProbe.httpGet: Forbidden: may not specify more than 1 handler type`,
    ]);
  });

  it('lifecycle hooks: exactly one handler each, validated like a probe\'s; a sleep within the pod\'s grace', () => {
    const p = pod((c, pd) => {
      pd.spec!.terminationGracePeriodSeconds = 10;
      c.lifecycle = { postStart: {}, preStop: { sleep: { seconds: 11 }, exec: { command: ['x'] } } };
    });
    expect(errors(p)).toEqual([
      `${C0}.lifecycle.postStart: Required value: must specify a handler type`,
      `${C0}.lifecycle.preStop.sleep: Forbidden: may not specify more than 1 handler type`,
    ]);
    const q = pod((c, pd) => {
      pd.spec!.terminationGracePeriodSeconds = 10;
      c.lifecycle = { postStart: { httpGet: { port: 0, path: '/', scheme: 'HTTP' } }, preStop: { sleep: { seconds: 11 } } };
    });
    expect(errors(q)).toEqual([
      `${C0}.lifecycle.postStart.httpGet.port: Invalid value: 0: must be between 1 and 65535, inclusive`,
      `${C0}.lifecycle.preStop.sleep: Invalid value: 11: must be non-negative and less than terminationGracePeriodSeconds (10)`,
    ]);
    expect(errors(pod((c) => (c.lifecycle = { preStop: { sleep: { seconds: 0 } } })))).toEqual([]);
    // grpc is no lifecycle handler: the API drops it, so the hook has none.
    expect(errors(pod((c) => (c.lifecycle = { preStop: { grpc: { port: 9090 } } as never })))).toEqual([`${C0}.lifecycle.preStop: Required value: must specify a handler type`]);
  });

  it('V8: exec with an empty command', () => {
    expect(errors(withProbe('livenessProbe', { exec: { command: [] } }))).toEqual([
      `${C0}.livenessProbe.exec.command: Required value`,
    ]);
    expect(errors(withProbe('livenessProbe', { exec: {} }))).toEqual([`${C0}.livenessProbe.exec.command: Required value`]);
  });

  it('V9: lower-case scheme http is unsupported', () => {
    expect(errors(withProbe('livenessProbe', { httpGet: { port: 80, scheme: 'http' } }))).toEqual([
      `${C0}.livenessProbe.httpGet.scheme: Unsupported value: "http": supported values: "HTTP", "HTTPS"`,
    ]);
  });

  it('V10: header name X_Bad (the list path, not indexed)', () => {
    const probe = { httpGet: { port: 80, httpHeaders: [{ name: 'X-Ok', value: 'v' }, { name: 'X_Bad', value: 'v' }] } };
    expect(errors(withProbe('livenessProbe', probe))).toEqual([
      `${C0}.livenessProbe.httpGet.httpHeaders: Invalid value: "X_Bad": a valid HTTP header must consist of ` +
        "alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')",
    ]);
  });

  it('V11: httpGet port 0 and 65536', () => {
    expect(errors(withProbe('livenessProbe', { httpGet: { port: 0 } }))).toEqual([
      `${C0}.livenessProbe.httpGet.port: Invalid value: 0: must be between 1 and 65535, inclusive`,
    ]);
    expect(errors(withProbe('livenessProbe', { httpGet: { port: 65536 } }))).toEqual([
      `${C0}.livenessProbe.httpGet.port: Invalid value: 65536: must be between 1 and 65535, inclusive`,
    ]);
  });

  it('V12: port names that break IANA rules, one error per broken rule', () => {
    const p = (port: string) => errors(withProbe('livenessProbe', { httpGet: { port } }));
    const path = `${C0}.livenessProbe.httpGet.port`;
    expect(p('HTTP')).toEqual([
      `${path}: Invalid value: "HTTP": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)`,
      `${path}: Invalid value: "HTTP": must contain at least one letter (a-z)`,
    ]);
    expect(p('8080')).toEqual([`${path}: Invalid value: "8080": must contain at least one letter (a-z)`]);
    expect(p('a--b')).toEqual([`${path}: Invalid value: "a--b": must not contain consecutive hyphens`]);
    expect(p('-web')).toEqual([`${path}: Invalid value: "-web": must not begin or end with a hyphen`]);
    expect(p('abcdefghijklmnop')).toEqual([`${path}: Invalid value: "abcdefghijklmnop": must be no more than 15 characters`]);
    expect(p('web')).toEqual([]);
    const tcp = errors(withProbe('livenessProbe', { tcpSocket: { port: 'Web' } }));
    expect(tcp).toEqual([
      `${C0}.livenessProbe.tcpSocket.port: Invalid value: "Web": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)`,
    ]);
  });

  it('V13: grpc port 70000', () => {
    expect(errors(withProbe('livenessProbe', { grpc: { port: 70000 } }))).toEqual([
      `${C0}.livenessProbe.grpc.port: Invalid value: 70000: must be between 1 and 65535, inclusive`,
    ]);
  });

  it('V14: negative integer fields', () => {
    expect(errors(withProbe('readinessProbe', { ...exec, periodSeconds: -1 }))).toEqual([
      `${C0}.readinessProbe.periodSeconds: Invalid value: -1: must be greater than or equal to 0`,
    ]);
    for (const field of ['initialDelaySeconds', 'timeoutSeconds', 'failureThreshold', 'successThreshold'] as const) {
      expect(errors(withProbe('readinessProbe', { ...exec, [field]: -3 }))).toEqual([
        `${C0}.readinessProbe.${field}: Invalid value: -3: must be greater than or equal to 0`,
      ]);
    }
  });

  it('V15: readiness probe on a plain init container is Forbidden; on a sidecar it is valid', () => {
    const plain = pod((_c, p) => {
      p.spec!.initContainers = [{ name: 'init', image: 'i', readinessProbe: exec }];
    });
    expect(errors(plain)).toEqual([
      'spec.initContainers[0].readinessProbe: Forbidden: may not be set for init containers without restartPolicy=Always',
    ]);
    const sidecar = pod((_c, p) => {
      p.spec!.initContainers = [{ name: 'init', image: 'i', restartPolicy: 'Always', readinessProbe: exec }];
    });
    expect(errors(sidecar)).toEqual([]);
  });
});

describe('validatePod: container types', () => {
  it('forbids every probe (and lifecycle) on a plain init container without validating them', () => {
    const p = pod((_c, pd) => {
      pd.spec!.initContainers = [
        { name: 'init', image: 'i', livenessProbe: {}, startupProbe: exec, lifecycle: { preStop: exec } },
      ];
    });
    expect(errors(p)).toEqual([
      'spec.initContainers[0].lifecycle: Forbidden: may not be set for init containers without restartPolicy=Always',
      'spec.initContainers[0].livenessProbe: Forbidden: may not be set for init containers without restartPolicy=Always',
      'spec.initContainers[0].startupProbe: Forbidden: may not be set for init containers without restartPolicy=Always',
    ]);
  });

  it('applies the per-kind probe rules to sidecars', () => {
    const p = pod((_c, pd) => {
      pd.spec!.initContainers = [{ name: 'side', image: 'img', restartPolicy: 'Always', livenessProbe: { ...exec, successThreshold: 2 } }];
    });
    expect(errors(p)).toEqual(['spec.initContainers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1']);
  });

  it('forbids probes and ports on ephemeral containers', () => {
    const p = pod((_c, pd) => {
      pd.spec!.ephemeralContainers = [
        { name: 'dbg', image: 'busybox', ports: [{ containerPort: 80 }], livenessProbe: exec, readinessProbe: exec },
      ];
    });
    expect(existingErrors(p)).toEqual([
      'spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container',
      'spec.ephemeralContainers[0].livenessProbe: Forbidden: cannot be set for an Ephemeral Container',
      'spec.ephemeralContainers[0].readinessProbe: Forbidden: cannot be set for an Ephemeral Container',
    ]);
  });

  it('requires an ephemeral container target to exist', () => {
    const p = pod((_c, pd) => {
      pd.spec!.ephemeralContainers = [{ name: 'dbg', image: 'img', targetContainerName: 'nope' }];
    });
    expect(existingErrors(p)).toEqual(['spec.ephemeralContainers[0].targetContainerName: Not found: "nope"']);
  });
});

describe('validatePod: what running a pod needs', () => {
  it('requires metadata.name and namespace', () => {
    const p = setPodDefaults({ apiVersion: 'v1', kind: 'Pod', spec: { containers: [{ name: 'c', image: 'img' }] } });
    expect(errors(p)).toEqual(['metadata.name: Required value: name or generateName is required']);
    p.metadata!.namespace = '';
    expect(errors(p)).toContain('metadata.namespace: Required value');
  });

  it('checks the pod name is a DNS-1123 subdomain and the namespace a label', () => {
    const p = pod((_c, pd) => {
      pd.metadata = { name: 'My_Pod', namespace: 'a.b' };
    });
    expect(errors(p)).toEqual([
      `metadata.name: Invalid value: "My_Pod": ${SUBDOMAIN_REGEX_MSG}`,
      'metadata.namespace: Invalid value: "a.b": must not contain dots',
    ]);
    expect(errors(pod((_c, pd) => (pd.metadata = { name: 'a'.repeat(254) })))).toEqual([
      `metadata.name: Invalid value: "${'a'.repeat(254)}": must be no more than 253 characters`,
    ]);
  });

  it('validates generateName as a prefix', () => {
    const ok = pod((_c, pd) => (pd.metadata = { name: 'web-x1', generateName: 'web-' }));
    expect(errors(ok)).toEqual([]);
    const bad = pod((_c, pd) => (pd.metadata = { name: 'web-x1', generateName: 'Web-' }));
    expect(errors(bad)).toEqual([`metadata.generateName: Invalid value: "Web-": ${SUBDOMAIN_REGEX_MSG}`]);
  });

  it('requires at least one container', () => {
    expect(errors(pod((_c, pd) => (pd.spec!.containers = [])))).toEqual(['spec.containers: Required value']);
  });

  it('requires container names that are DNS-1123 labels', () => {
    expect(errors(pod((c) => (c.name = '')))).toEqual([`${C0}.name: Required value`]);
    expect(errors(pod((c) => (c.name = 'My_App')))).toEqual([`${C0}.name: Invalid value: "My_App": ${LABEL_REGEX_MSG}`]);
    expect(errors(pod((c) => (c.name = 'a.b')))).toEqual([`${C0}.name: Invalid value: "a.b": must not contain dots`]);
    expect(errors(pod((c) => (c.name = 'x'.repeat(64))))).toEqual([
      `${C0}.name: Invalid value: "${'x'.repeat(64)}": must be no more than 63 characters`,
    ]);
  });

  it('requires container names unique across init, regular and ephemeral containers', () => {
    const p = pod((_c, pd) => {
      pd.spec!.containers.push({ name: 'c', image: 'img' });
      pd.spec!.initContainers = [{ name: 'c', image: 'img' }, { name: 'i', image: 'img' }, { name: 'i', image: 'img' }];
      pd.spec!.ephemeralContainers = [{ name: 'i', image: 'img' }];
    });
    expect(existingErrors(p)).toEqual([
      'spec.containers[1].name: Duplicate value: "c"',
      'spec.initContainers[0].name: Duplicate value: "c"',
      'spec.initContainers[2].name: Duplicate value: "i"',
      'spec.ephemeralContainers[0].name: Duplicate value: "i"',
    ]);
  });

  it('validates container ports', () => {
    const p = pod((c) => {
      c.ports = [
        { name: 'http', containerPort: 8080 },
        { name: 'http', containerPort: 8081 },
        { name: 'HTTP', containerPort: 70000, protocol: 'tcp' },
        { containerPort: 0, hostPort: 99999 },
      ];
    });
    const path = `${C0}.ports`;
    expect(errors(p)).toEqual([
      `${path}[1].name: Duplicate value: "http"`,
      `${path}[2].name: Invalid value: "HTTP": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)`,
      `${path}[2].name: Invalid value: "HTTP": must contain at least one letter (a-z)`,
      `${path}[2].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive`,
      `${path}[2].protocol: Unsupported value: "tcp": supported values: "SCTP", "TCP", "UDP"`,
      `${path}[3].containerPort: Required value`,
      `${path}[3].hostPort: Invalid value: 99999: must be between 1 and 65535, inclusive`,
    ]);
  });

  it('reports host port conflicts across regular containers', () => {
    const p = pod((c, pd) => {
      c.ports = [{ containerPort: 80, hostPort: 8080 }];
      pd.spec!.containers.push({ name: 'd', image: 'img', ports: [{ containerPort: 81, hostPort: 8080 }] });
    });
    expect(errors(p)).toEqual(['spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"']);
  });

  it('validates the pod restartPolicy', () => {
    expect(errors(pod((_c, pd) => (pd.spec!.restartPolicy = 'Sometimes')))).toEqual([
      'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
    ]);
  });

  it('validates container restart policies and rules (ContainerRestartRules, on in 1.35)', () => {
    const p = pod((c, pd) => {
      c.restartPolicy = 'Never';
      pd.spec!.containers.push({ name: 'd', image: 'img', restartPolicy: 'Sometimes' });
      pd.spec!.initContainers = [
        { name: 'i1', image: 'img', restartPolicy: 'Never' },
        { name: 'i2', image: 'img', restartPolicy: 'Sometimes' },
        Object.assign({ name: 'i3', image: 'img', restartPolicy: 'Always' }, { restartPolicyRules: [{ action: 'Restart' }] }),
        Object.assign({ name: 'i4', image: 'img' }, { restartPolicyRules: [{ action: 'Restart', exitCodes: { operator: 'In' } }] }),
        Object.assign(
          { name: 'i5', image: 'img', restartPolicy: 'OnFailure' },
          { restartPolicyRules: [{ action: 'Stop', exitCodes: { operator: 'Is', values: [1] } }, { action: 'Restart' }] },
        ),
      ];
    });
    expect(errors(p)).toEqual([
      'spec.containers[1].restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"',
      'spec.initContainers[1].restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"',
      'spec.initContainers[2].restartPolicyRules: Forbidden: restartPolicyRules are not allowed for init containers with restart policy Always',
      'spec.initContainers[3].restartPolicy: Required value: must specify restartPolicy when restart rules are used',
      'spec.initContainers[4].restartPolicyRules[0].action: Unsupported value: "Stop": supported values: "Restart"',
      'spec.initContainers[4].restartPolicyRules[0].exitCodes.operator: Unsupported value: "Is": supported values: "In", "NotIn"',
      'spec.initContainers[4].restartPolicyRules[1].exitCodes: Required value: must be specified',
    ]);
  });

  it('without the ContainerRestartRules gate: only init containers, only Always', () => {
    const p = pod((c, pd) => {
      c.restartPolicy = 'Always';
      pd.spec!.initContainers = [{ name: 'i', image: 'img', restartPolicy: 'Never' }];
    });
    expect(validatePod(p, { containerRestartRules: false }).map(String)).toEqual([
      `${C0}.restartPolicy: Forbidden: may not be set for non-init containers`,
      'spec.initContainers[0].restartPolicy: Unsupported value: "Never": supported values: "Always"',
    ]);
  });

  it('returns all errors at once, in apiserver order', () => {
    const p = pod((c, pd) => {
      pd.metadata = { name: '' };
      pd.spec!.restartPolicy = 'Sometimes';
      c.livenessProbe = { httpGet: { port: 'HTTP', scheme: 'http' }, successThreshold: 2, periodSeconds: -1 };
      c.readinessProbe = { ...exec, tcpSocket: { port: 1 }, grpc: { port: 1 }, terminationGracePeriodSeconds: 5 };
      pd.spec!.initContainers = [{ name: 'init', image: 'img', startupProbe: exec }];
    });
    expect(errors(p)).toEqual([
      'metadata.name: Required value: name or generateName is required',
      `${C0}.livenessProbe.httpGet.port: Invalid value: "HTTP": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)`,
      `${C0}.livenessProbe.httpGet.port: Invalid value: "HTTP": must contain at least one letter (a-z)`,
      `${C0}.livenessProbe.httpGet.scheme: Unsupported value: "http": supported values: "HTTP", "HTTPS"`,
      `${C0}.livenessProbe.periodSeconds: Invalid value: -1: must be greater than or equal to 0`,
      `${C0}.livenessProbe.successThreshold: Invalid value: 2: must be 1`,
      `${C0}.readinessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type`,
      `${C0}.readinessProbe.grpc: Forbidden: may not specify more than 1 handler type`,
      `${C0}.readinessProbe.terminationGracePeriodSeconds: Invalid value: 5: must not be set for readinessProbes`,
      'spec.initContainers[0].startupProbe: Forbidden: may not be set for init containers without restartPolicy=Always',
      'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
    ]);
  });

  it('reports what defaulting would have filled in when given an undefaulted pod', () => {
    const raw: Pod = {
      metadata: { name: 'p', namespace: 'default' },
      spec: { containers: [{ name: 'c', image: 'img', ports: [{ containerPort: 80 }], livenessProbe: { httpGet: { port: 80 } } }] },
    };
    expect(validatePod(raw).map(String)).toEqual([
      'spec.terminationGracePeriodSeconds: Required value',
      `${C0}.ports[0].protocol: Required value`,
      `${C0}.livenessProbe.httpGet.path: Required value`,
      `${C0}.livenessProbe.httpGet.scheme: Unsupported value: "": supported values: "HTTP", "HTTPS"`,
      `${C0}.livenessProbe.successThreshold: Invalid value: 0: must be 1`,
      'spec.restartPolicy: Required value',
    ]);
    expect(validatePod(setPodDefaults(raw))).toEqual([]);
  });
});

describe('validateProbe', () => {
  it('applies the per-kind rules at the given path', () => {
    expect(validateProbe({ ...exec, successThreshold: 2 }, 'liveness', 'x').map(String)).toEqual([
      'x.successThreshold: Invalid value: 2: must be 1',
    ]);
    expect(validateProbe({ ...exec, successThreshold: 2 }, 'readiness', 'x')).toEqual([]);
    expect(validateProbe({ ...exec, successThreshold: 1, terminationGracePeriodSeconds: 3 }, 'startup', 'x')).toEqual([]);
  });

  it('treats a null handler (YAML `exec:` with nothing after it) as not set', () => {
    const probe = { exec: null, tcpSocket: { port: 80 }, successThreshold: 1 } as unknown as Probe;
    expect(validateProbe(probe, 'liveness', 'x')).toEqual([]);
  });
});

describe('validatePod: rules that depend on the kind (ValidatePodCreate, workload validation)', () => {
  const template = (kind: string, edit: (c: Container, p: Pod) => void = () => {}): string[] =>
    validatePod(pod(edit), { kind }).map(String);

  it('every container needs an image, in a Pod and in a template alike (validateContainerCommon)', () => {
    const noImage = (c: Container, p: Pod): void => {
      delete c.image;
      p.spec!.initContainers = [{ name: 'init', image: '', command: ['true'] }];
    };
    expect(errors(pod(noImage))).toEqual(['spec.containers[0].image: Required value', 'spec.initContainers[0].image: Required value']);
    expect(template('Deployment', noImage)).toEqual(['spec.containers[0].image: Required value', 'spec.initContainers[0].image: Required value']);
  });

  describe('hostNetwork: a container port is the host port (validatePodHostNetworkDeps)', () => {
    /** A hostNetwork pod whose container has these ports and whose init container has a port with another hostPort. */
    const onHostNetwork = (ports: Container['ports'], template: boolean): Pod => {
      const p: Pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p' },
        spec: {
          hostNetwork: true,
          containers: [{ name: 'c', image: 'img', ports }],
          initContainers: [{ name: 'i', image: 'img', ports: [{ containerPort: 9000, hostPort: 9001 }] }],
        },
      };
      return applyPodDefaults(p, { template });
    };
    const mismatch = 'spec.containers[0].ports[1].hostPort: Invalid value: 8081: must match `containerPort` when `hostNetwork` is true';

    it('a Pod: an unset hostPort is defaulted to the containerPort; another value is refused (regular containers only)', () => {
      const p = onHostNetwork([{ containerPort: 8080 }, { containerPort: 9090, hostPort: 8081 }], false);
      expect(p.spec!.containers[0]!.ports![0]!.hostPort).toBe(8080);
      expect(validatePod(p).map(String)).toEqual([mismatch]);
    });

    it('a template (Deployment, PodTemplate): an unset hostPort is allowed (its pods are defaulted), another value is refused', () => {
      const t = onHostNetwork([{ containerPort: 8080 }, { containerPort: 9090, hostPort: 8081 }], true);
      expect(t.spec!.containers[0]!.ports![0]!.hostPort).toBeUndefined();
      expect(validatePod(t, { kind: 'Deployment' }).map(String)).toEqual([mismatch]);
      expect(validatePod(t, { kind: 'PodTemplate' }).map(String)).toEqual([mismatch]);
      expect(validatePod(onHostNetwork([{ containerPort: 8080 }], true), { kind: 'Deployment' }).map(String)).toEqual([]);
      // Validated as a Pod, the same undefaulted unset hostPort (0) is refused: only templates may leave it.
      expect(validatePod(onHostNetwork([{ containerPort: 8080 }], true)).map(String)).toEqual([
        'spec.containers[0].ports[0].hostPort: Invalid value: 0: must match `containerPort` when `hostNetwork` is true',
      ]);
    });

    it('without hostNetwork, hostPort and containerPort may differ', () => {
      const p = onHostNetwork([{ containerPort: 9090, hostPort: 8081 }], false);
      p.spec!.hostNetwork = false;
      expect(validatePod(p).map(String)).toEqual([]);
    });
  });

  it("only a Pod's image may not have surrounding whitespace (validateContainerOnlyForPod)", () => {
    const spaced = (c: Container): void => {
      c.image = ' busybox ';
    };
    expect(errors(pod(spaced))).toEqual(['spec.containers[0].image: Invalid value: " busybox ": must not have leading or trailing whitespace']);
    expect(template('Deployment', spaced)).toEqual([]);
  });

  it('a Pod is created without ephemeral containers and without nodeName while scheduling gates remain; a template never has ephemeral containers', () => {
    const edit = (_c: Container, p: Pod): void => {
      p.spec!.ephemeralContainers = [{ name: 'dbg', image: 'img' }];
      p.spec!.nodeName = 'n1';
      p.spec!.schedulingGates = [{ name: 'wait' }];
    };
    expect(errors(pod(edit))).toEqual([
      'spec.ephemeralContainers: Forbidden: cannot be set on create',
      'spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared',
    ]);
    expect(existingErrors(pod(edit))).toEqual([]);
    expect(template('Deployment', edit)).toEqual(['spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template']);
  });

  it.each([
    ['Deployment', 'ReplicaSet'],
    ['ReplicaSet', 'ReplicaSet'],
    ['ReplicationController', 'ReplicationController'],
    ['StatefulSet', 'StatefulSet'],
    ['DaemonSet', 'DaemonSet'],
  ])('a %s runs its pods with restartPolicy Always and no activeDeadlineSeconds', (kind, named) => {
    expect(template(kind)).toEqual([]);
    expect(
      template(kind, (_c, p) => {
        p.spec!.restartPolicy = 'Never';
        p.spec!.activeDeadlineSeconds = 5;
      }),
    ).toEqual([
      'spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
      `spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ${named} is not Supported`,
    ]);
  });

  it.each(['Job', 'CronJob'])('a %s runs its pods with restartPolicy OnFailure or Never', (kind) => {
    expect(template(kind)).toEqual(['spec.restartPolicy: Required value: valid values: "OnFailure", "Never"']);
    expect(template(kind, (_c, p) => (p.spec!.restartPolicy = 'Never'))).toEqual([]);
    expect(template(kind, (_c, p) => (p.spec!.activeDeadlineSeconds = 5))).toEqual([
      'spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
    ]);
    expect(validatePod(pod((_c, p) => (p.spec!.restartPolicy = 'Never')), { kind: 'PodTemplate' }).map(String)).toEqual([]);
  });
});
