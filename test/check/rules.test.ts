/**
 * Every rule of the lint families has a manifest that breaks it and one that passes, run
 * through the real loader and runner; plus the cases other linters get wrong.
 */
import { describe, expect, it } from 'vitest';
import { handlerRules } from '../../src/check/rules/handlers.js';
import { identicalRules } from '../../src/check/rules/identical.js';
import { lifecycleRules } from '../../src/check/rules/lifecycle.js';
import { portRules } from '../../src/check/rules/ports.js';
import { presenceRules } from '../../src/check/rules/presence.js';
import { securityRules } from '../../src/check/rules/security.js';
import { GOOD_PROBES, check, deployment } from './helpers.js';

interface Case {
  rule: string;
  fail: string;
  /** The field the finding points at. */
  field: string;
  pass: string;
}

const tenExecProbes = Array.from({ length: 6 }, (_, i) => `
- name: c${i}
  image: example/app:1.0
  readinessProbe: { exec: { command: [/bin/ready] }, periodSeconds: 10 }
  livenessProbe: { exec: { command: [/bin/alive] }, periodSeconds: 10, failureThreshold: 6 }`).join('');

const CASES: Case[] = [
  {
    rule: 'probe-port-unresolved',
    fail: deployment(`readinessProbe:\n  httpGet: { path: /ready, port: metrics }`),
    field: 'spec.template.spec.containers[0].readinessProbe.httpGet.port',
    pass: deployment(`readinessProbe:\n  httpGet: { path: /ready, port: http }`),
  },
  {
    rule: 'probe-port-undeclared',
    fail: deployment(`readinessProbe:\n  tcpSocket: { port: 9000 }`),
    field: 'spec.template.spec.containers[0].readinessProbe.tcpSocket.port',
    pass: deployment(`readinessProbe:\n  tcpSocket: { port: http }`),
  },
  {
    rule: 'probe-port-numeric',
    fail: deployment(`readinessProbe:\n  httpGet: { path: /ready, port: 8080 }`),
    field: 'spec.template.spec.containers[0].readinessProbe.httpGet.port',
    pass: deployment(`readinessProbe:\n  grpc: { port: 8080 }`),
  },
  {
    rule: 'probes-identical',
    fail: deployment(`readinessProbe:\n  httpGet: { path: /healthz, port: http }\nlivenessProbe:\n  httpGet: { path: /healthz, port: 8080 }`),
    field: 'spec.template.spec.containers[0].livenessProbe',
    pass: deployment(`readinessProbe:\n  httpGet: { path: /healthz, port: http }\nlivenessProbe:\n  httpGet: { path: /healthz, port: http }\n  failureThreshold: 6`),
  },
  {
    rule: 'probes-missing',
    fail: deployment(''),
    field: 'spec.template.spec.containers[0].name',
    pass: deployment('', { kind: 'Job', podSpec: 'restartPolicy: Never' }),
  },
  {
    rule: 'readiness-probe-missing',
    fail: deployment(`livenessProbe:\n  httpGet: { path: /healthz, port: http }`),
    field: 'spec.template.spec.containers[0].name',
    pass: deployment(GOOD_PROBES),
  },
  {
    rule: 'liveness-probe-missing',
    fail: deployment(`readinessProbe:\n  httpGet: { path: /healthz, port: http }`),
    field: 'spec.template.spec.containers[0].name',
    pass: deployment(GOOD_PROBES),
  },
  {
    rule: 'startup-probe-missing',
    fail: deployment(`readinessProbe:\n  httpGet: { path: /healthz, port: http }\nlivenessProbe:\n  httpGet: { path: /healthz, port: http }\n  failureThreshold: 6`),
    field: 'spec.template.spec.containers[0].livenessProbe',
    pass: deployment(GOOD_PROBES),
  },
  {
    rule: 'exec-probe-forbidden-command',
    fail: deployment(`livenessProbe:\n  exec: { command: [sh, -c, "ps aux | grep -q java"] }\n  periodSeconds: 10`),
    field: 'spec.template.spec.containers[0].livenessProbe.exec.command',
    pass: deployment(`livenessProbe:\n  exec: { command: [/bin/healthcheck, --ps-compatible] }\n  periodSeconds: 10`),
  },
  {
    rule: 'exec-probe-load',
    fail: deployment(`readinessProbe:\n  exec: { command: [cat, /tmp/ready] }\n  periodSeconds: 2`),
    field: 'spec.template.spec.containers[0].readinessProbe.periodSeconds',
    pass: deployment(`readinessProbe:\n  exec: { command: [cat, /tmp/ready] }\n  periodSeconds: 10`),
  },
  {
    rule: 'exec-probe-cpu-pinned',
    fail: deployment(`resources:\n  limits: { cpu: "2", memory: 1Gi }\nreadinessProbe:\n  exec: { command: [cat, /tmp/ready] }\n  periodSeconds: 10`),
    field: 'spec.template.spec.containers[0].readinessProbe.exec',
    pass: deployment(`resources:\n  limits: { cpu: 1500m, memory: 1Gi }\nreadinessProbe:\n  exec: { command: [cat, /tmp/ready] }\n  periodSeconds: 10`),
  },
  {
    rule: 'probe-host-set',
    fail: deployment(`readinessProbe:\n  httpGet: { path: /ready, port: http, host: 10.0.0.1 }`),
    field: 'spec.template.spec.containers[0].readinessProbe.httpGet.host',
    pass: deployment(`readinessProbe:\n  httpGet:\n    path: /ready\n    port: http\n    httpHeaders: [{ name: Host, value: example.com }]`),
  },
  {
    rule: 'prestop-cut-by-kill-grace',
    fail: deployment(`lifecycle:\n  preStop: { sleep: { seconds: 15 } }\nlivenessProbe:\n  httpGet: { path: /healthz, port: http }\n  terminationGracePeriodSeconds: 10`),
    field: 'spec.template.spec.containers[0].lifecycle.preStop.sleep.seconds',
    pass: deployment(`lifecycle:\n  preStop: { sleep: { seconds: 15 } }\nlivenessProbe:\n  httpGet: { path: /healthz, port: http }\n  terminationGracePeriodSeconds: 30`),
  },
];

describe('every lint rule', () => {
  it('has a case here (the timing rules are tested with the budgets; validation is an input problem, run.test.ts)', () => {
    const ids = [...portRules, ...identicalRules, ...presenceRules, ...handlerRules, ...securityRules, ...lifecycleRules].map((r) => r.id);
    expect(CASES.map((c) => c.rule).sort()).toEqual([...ids].sort());
  });

  for (const c of CASES) {
    it(`${c.rule}: fires on the breaking manifest, at ${c.field}`, () => {
      const { findings, problems } = check(c.fail);
      expect(problems).toEqual([]);
      const found = findings.filter((f) => f.rule === c.rule);
      expect(found.map((f) => f.field)).toContain(c.field);
      expect(found.every((f) => f.line > 0 && f.column > 0 && f.message.length > 0)).toBe(true);
    });
    it(`${c.rule}: stays quiet on the passing manifest`, () => {
      const { findings, problems } = check(c.pass);
      expect(problems).toEqual([]);
      expect(findings.filter((f) => f.rule === c.rule)).toEqual([]);
    });
  }
});

describe('the mistakes of other linters, fixed', () => {
  it('a named port declared only by a sidecar is an error that says so (the kubelet looks in the probed container)', () => {
    const yaml = deployment(`readinessProbe:\n  httpGet: { path: /ready, port: metrics }`, {
      podSpec: `initContainers:\n  - name: proxy\n    image: example/proxy\n    restartPolicy: Always\n    ports: [{ name: metrics, containerPort: 9090 }]\n    readinessProbe: { tcpSocket: { port: metrics } }`,
    });
    const [f] = check(yaml).findings.filter((x) => x.rule === 'probe-port-unresolved');
    expect(f?.severity).toBe('error');
    expect(f?.message).toContain('init container "proxy" declares it');
    expect(f?.message).toContain('never turns the container Ready');
  });

  it('an undeclared numeric port is only info (the probe works)', () => {
    const [f] = check(deployment(`readinessProbe:\n  httpGet: { path: /ready, port: 9000 }`)).findings.filter((x) => x.rule === 'probe-port-undeclared');
    expect(f?.severity).toBe('info');
  });

  it('sidecars are linted like containers: an unresolved port in a restartable init container is found', () => {
    const yaml = deployment(GOOD_PROBES, {
      podSpec: `initContainers:\n  - name: proxy\n    image: example/proxy\n    restartPolicy: Always\n    livenessProbe: { httpGet: { path: /, port: admin } }`,
    });
    const found = check(yaml).findings.filter((f) => f.rule === 'probe-port-unresolved');
    expect(found).toHaveLength(1);
    expect(found[0]?.container).toBe('proxy');
    expect(found[0]?.field).toBe('spec.template.spec.initContainers[0].livenessProbe.httpGet.port');
    expect(found[0]?.message).toContain('sidecar "proxy"');
  });

  it('identical probes are judged by behaviour: a named and a numeric port to the same place are the same check', () => {
    const same = deployment(`readinessProbe:\n  tcpSocket: { port: http }\nlivenessProbe:\n  tcpSocket: { port: 8080 }`);
    expect(check(same).findings.some((f) => f.rule === 'probes-identical')).toBe(true);
    const otherPath = deployment(`readinessProbe:\n  httpGet: { path: /ready, port: http }\nlivenessProbe:\n  httpGet: { path: /healthz, port: http }`);
    expect(check(otherPath).findings.some((f) => f.rule === 'probes-identical')).toBe(false);
  });

  it('gRPC probes are never told to use a named port, and a named gRPC port is refused with the fix', () => {
    const numeric = deployment(`readinessProbe:\n  grpc: { port: 8080 }`);
    expect(check(numeric).findings.filter((f) => f.rule === 'probe-port-numeric')).toEqual([]);
    const named = check(deployment(`readinessProbe:\n  grpc: { port: http }`));
    expect(named.problems).toHaveLength(1);
    expect(named.problems[0]?.field).toBe('spec.template.spec.containers[0].readinessProbe.grpc.port');
    expect(named.problems[0]?.message).toContain('gRPC probes take a port number only');
  });

  it('batch pods need no readiness probe: Job, CronJob and restartPolicy Never/OnFailure pods', () => {
    const liveOnly = `livenessProbe:\n  exec: { command: [/bin/alive] }\n  periodSeconds: 10`;
    const batch = [
      deployment(liveOnly, { kind: 'Job', podSpec: 'restartPolicy: OnFailure' }),
      deployment(liveOnly, { kind: 'Pod', podSpec: 'restartPolicy: Never' }),
      `apiVersion: batch/v1
kind: CronJob
metadata: { name: nightly }
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
            - name: backup
              image: example/backup
`,
    ];
    for (const yaml of batch) {
      const presence = check(yaml).findings.filter((f) => /missing$/.test(f.rule));
      expect(presence).toEqual([]);
    }
    expect(check(deployment(liveOnly, { kind: 'Pod' })).findings.some((f) => f.rule === 'readiness-probe-missing')).toBe(true);
  });

  it('host is not flagged on a hostNetwork pod (baseline refuses it anyway, and 127.0.0.1 is the pod there); elsewhere the message says what it changes', () => {
    const probe = `${GOOD_PROBES.replace('port: http }\nlivenessProbe', 'port: http, host: 127.0.0.1 }\nlivenessProbe')}`;
    const onHost = check(deployment(probe, { kind: 'DaemonSet', podSpec: 'hostNetwork: true' })).findings.filter((f) => f.rule === 'probe-host-set');
    expect(onHost).toEqual([]);
    const inPod = check(deployment(probe, { kind: 'DaemonSet' })).findings.filter((f) => f.rule === 'probe-host-set');
    expect(inPod.map((f) => f.field)).toEqual(['spec.template.spec.containers[0].readinessProbe.httpGet.host']);
    expect(inPod[0]?.message).toContain('the kubelet connects to 127.0.0.1 on the node, not to this pod');
  });

  it('a lifecycle hook with host is flagged too (PSS covers hooks)', () => {
    const yaml = deployment(`${GOOD_PROBES}\nlifecycle:\n  preStop:\n    httpGet: { path: /drain, port: http, host: localhost }`);
    const found = check(yaml).findings.filter((f) => f.rule === 'probe-host-set');
    expect(found.map((f) => f.field)).toEqual(['spec.template.spec.containers[0].lifecycle.preStop.httpGet.host']);
  });

  it('more than 10 exec probes in one pod is reported once, on the pod', () => {
    const yaml = `apiVersion: v1\nkind: Pod\nmetadata: { name: many }\nspec:\n  containers:${tenExecProbes.replace(/\n/g, '\n    ')}\n`;
    const found = check(yaml).findings.filter((f) => f.rule === 'exec-probe-load');
    expect(found.map((f) => f.message)).toEqual(['the pod has 12 exec probes (more than 10): each spawns a process in its container every period']);
    expect(found[0]?.field).toBe('spec');
  });

  it('the exec-command rule sees through shells and paths but not option names', () => {
    const run = (cmd: string) => check(deployment(`livenessProbe:\n  exec: { command: ${cmd} }\n  periodSeconds: 10`)).findings.some((f) => f.rule === 'exec-probe-forbidden-command');
    expect(run('[/usr/bin/jcmd, "1", VM.version]')).toBe(true);
    expect(run('[sh, -c, "ls /tmp/healthy && exit 0"]')).toBe(true);
    expect(run('[/bin/pslisten, --ls-mode]')).toBe(false);
  });
});
