/**
 * Probe ports, with the two cases other linters conflate told apart: a *named* port the
 * container does not declare makes every probe attempt error (fatal), a *numeric* port the
 * container does not list works fine (the list is documentation). gRPC ports are numbers
 * by the API's own type, so they are never told to become names.
 */
import type { FieldPath } from '../../api/documents.js';
import type { ContainerContext, Rule, RuleFinding } from '../types.js';
import { probePort, probesOf, resolvePortName, who } from './probes.js';

export const probePortUnresolved: Rule = {
  id: 'probe-port-unresolved',
  severity: 'error',
  summary: 'A probe names a port that the same container does not declare.',
  explain: `What: httpGet.port or tcpSocket.port is a name that is not in the same container's ports.
Why: the kubelet resolves a named port in the probed container only (a port declared by another
container of the pod, e.g. a sidecar, does not count). Resolution fails on every attempt, so every
probe *errors* ("port http not found"), and errored results are discarded: a liveness probe never
fires, a readiness probe never turns the container Ready, a startup probe never lets it start —
silently, without a single Unhealthy event (kubernetes/kubernetes #139283).
kube-linter reports this with the same words as a harmless undeclared number; here it is an error.
Fix: declare the port with that name in this container, or use the number.
Example:
  ports:
    - name: http
      containerPort: 8080
  readinessProbe:
    httpGet: { path: /ready, port: http }`,
  equivalents: ['kube-linter liveness-port', 'kube-linter readiness-port', 'kube-linter startup-port'],
  check(ctx): RuleFinding[] {
    const out: RuleFinding[] = [];
    for (const at of probesOf(ctx)) {
      const target = probePort(at);
      if (!target || typeof target.port !== 'string' || /^[0-9]+$/.test(target.port)) continue;
      if (resolvePortName(ctx.container, target.port) !== undefined) continue;
      const elsewhere = declaredElsewhere(ctx, target.port);
      const hint = elsewhere ? ` (${elsewhere} declares it, but the kubelet looks only in the probed container)` : '';
      out.push({
        path: target.path,
        message: `${at.field}.${target.handler}.port ${JSON.stringify(target.port)} is not a port of ${who(ctx)}${hint}: every probe errors ("port ${target.port} not found") and is discarded, so the ${at.type} probe never ${NEVER[at.type]}`,
      });
    }
    return out;
  },
};

const NEVER = { liveness: 'restarts a hung container', readiness: 'turns the container Ready', startup: 'succeeds: the container never starts' } as const;

function declaredElsewhere(ctx: ContainerContext, name: string): string | undefined {
  const spec = ctx.pod.spec;
  for (const [list, kind] of [
    [spec?.containers ?? [], 'container'],
    [spec?.initContainers ?? [], 'init container'],
  ] as const) {
    for (const other of list) {
      if (other !== ctx.container && (other.ports ?? []).some((p) => p.name === name)) return `${kind} ${JSON.stringify(other.name)}`;
    }
  }
  return undefined;
}

export const probePortUndeclared: Rule = {
  id: 'probe-port-undeclared',
  severity: 'info',
  summary: 'A probe targets a port number the container does not list in ports.',
  explain: `What: a probe's port is a number that is not a containerPort of the container.
Why: harmless for the probe — the kubelet connects to the number whatever ports says, since ports
is documentation (and feeds named-port lookups and Services). It is worth a look because a
mismatch often means the probe and the app disagree about the port (a changed default, a copy
from another chart). kube-linter makes this a default-on failure with the same message as the
fatal named-port case, which led to many PRs that add ports only to silence it
(stackrox/kube-linter #1086).
Fix: list the port (and give it a name the probe can use), or correct the number.
Example:
  ports:
    - name: metrics
      containerPort: 9090`,
  equivalents: ['kube-linter liveness-port', 'kube-linter readiness-port', 'kube-linter startup-port'],
  check(ctx): RuleFinding[] {
    const hits: PortHit[] = [];
    for (const at of probesOf(ctx)) {
      const target = probePort(at);
      if (!target || typeof target.port !== 'number') continue;
      if ((ctx.container.ports ?? []).some((p) => p.containerPort === target.port)) continue;
      hits.push({ port: target.port, path: target.path, field: `${at.field}.${target.handler}.port` });
    }
    return onePerPort(hits, (fields, port, many) => `${fields} ${port} ${many ? 'are' : 'is'} not listed in the ports of ${who(ctx)} (the probe${many ? 's' : ''} still work${many ? '' : 's'}; check it is the port the app listens on)`);
  },
};

export const probePortNumeric: Rule = {
  id: 'probe-port-numeric',
  severity: 'info',
  summary: 'An HTTP or TCP probe uses a number where the container has a name for that port.',
  explain: `What: httpGet.port or tcpSocket.port is a number that the container declares under a name.
Why: with the name, changing the port in one place (ports) moves the probe with it; with the number
the probe keeps probing the old port after a change, and then fails or kills the container.
gRPC probes are never flagged: grpc.port is a number by the API's type and names are not supported
(kubernetes/website #39919) — Popeye's POP-105 advises names there too (derailed/popeye #570).
Fix: use the port's name.
Example:
  ports:
    - name: http
      containerPort: 8080
  livenessProbe:
    httpGet: { path: /healthz, port: http }   # not 8080`,
  equivalents: ['Popeye POP-105'],
  check(ctx): RuleFinding[] {
    const hits: (PortHit & { name: string })[] = [];
    for (const at of probesOf(ctx)) {
      const target = probePort(at);
      if (!target || target.handler === 'grpc' || typeof target.port !== 'number') continue;
      const named = (ctx.container.ports ?? []).find((p) => p.containerPort === target.port && p.name);
      if (!named?.name) continue;
      hits.push({ port: target.port, path: target.path, field: `${at.field}.${target.handler}.port`, name: named.name });
    }
    const names = new Map(hits.map((h) => [h.port, h.name]));
    return onePerPort(hits, (fields, port, many) => `${fields} ${port} ${many ? 'are' : 'is'} declared as ${JSON.stringify(names.get(port) ?? '')}: use the name so the probe${many ? 's follow' : ' follows'} the port`);
  },
};

/** A probe's numeric port, where it is written. */
interface PortHit {
  port: number;
  path: FieldPath;
  field: string;
}

/**
 * One finding per port and container (one fact), at the first probe that uses it, naming
 * every probe that does: `livenessProbe.httpGet.port and readinessProbe.httpGet.port 4191`.
 */
function onePerPort(hits: readonly PortHit[], message: (fields: string, port: number, many: boolean) => string): RuleFinding[] {
  const byPort = new Map<number, PortHit[]>();
  for (const hit of hits) byPort.set(hit.port, [...(byPort.get(hit.port) ?? []), hit]);
  return [...byPort].map(([port, group]) => {
    const fields = group.map((h) => h.field);
    const list = fields.length === 1 ? fields[0] ?? '' : `${fields.slice(0, -1).join(', ')} and ${fields.at(-1) ?? ''}`;
    return { path: group[0]?.path ?? [], message: message(list, port, group.length > 1) };
  });
}

export const portRules: Rule[] = [probePortUnresolved, probePortUndeclared, probePortNumeric];
