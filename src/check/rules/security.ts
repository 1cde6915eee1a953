/**
 * Probes as a way out of the pod: `host` sends the kubelet's request (from the node) to any
 * address, which Pod Security Admission forbids at the baseline level since 1.34 (KEP-4940).
 */
import type { FieldPath } from '../../api/documents.js';
import type { HTTPGetAction, TCPSocketAction } from '../../api/types.js';
import type { Rule, RuleFinding } from '../types.js';
import { probesOf, who } from './probes.js';

/** Addresses of the node's own loopback, as a probe's host. */
const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|::1|\[::1\])$/i;

export const probeHostSet: Rule = {
  id: 'probe-host-set',
  severity: 'warning',
  summary: 'A probe or lifecycle hook sets host (refused by Pod Security baseline since 1.34).',
  explain: `What: httpGet.host or tcpSocket.host is set in a liveness, readiness or startup probe or a
postStart/preStop hook.
Why: the kubelet makes the request from the node, so host lets a pod make the node connect to any
address (kubernetes/kubernetes #99425, an SSRF path). Since Kubernetes 1.34 the Pod Security
Standards forbid it at the baseline and restricted levels (KEP-4940, kubernetes/kubernetes
#125271): in a namespace that enforces them the pod is refused. Without host the kubelet probes
the pod's IP, which is what almost every probe means.
Not reported on a hostNetwork pod: baseline refuses such a pod anyway (host namespaces), and
there the pod's address is the node's, so host: 127.0.0.1 reaches a health server bound to
loopback, which removing host would break.
Fix: remove host; to send a virtual host name, set a Host header instead.
Example:
  livenessProbe:
    httpGet:
      path: /healthz
      port: http
      httpHeaders:
        - { name: Host, value: example.com }`,
  equivalents: ['Pod Security Admission baseline "Host Probes / Lifecycle Hooks" (1.34+)', 'Gatekeeper K8sPSPHostProbesLifecycle'],
  check(ctx): RuleFinding[] {
    const out: RuleFinding[] = [];
    // On the host network the pod's address is the node's: host changes nothing baseline does not already refuse.
    if (ctx.pod.spec?.hostNetwork === true) return out;
    const report = (action: HTTPGetAction | TCPSocketAction | undefined, path: FieldPath, what: string): void => {
      const host = action?.host;
      if (typeof host !== 'string' || host === '') return;
      const target = LOOPBACK.test(host)
        ? `the kubelet connects to ${host} on the node, not to this pod, so it checks whatever listens on that port of the node`
        : `the kubelet connects to ${host}, not to this pod`;
      out.push({ path: [...path, 'host'], message: `${what} of ${who(ctx)} sets host ${JSON.stringify(host)}: ${target}, and Pod Security baseline (Kubernetes 1.34+) refuses the pod; remove it (use a Host header for a virtual host)` });
    };
    for (const at of probesOf(ctx)) {
      report(at.probe.httpGet, [...at.path, 'httpGet'], `the ${at.type} probe`);
      report(at.probe.tcpSocket, [...at.path, 'tcpSocket'], `the ${at.type} probe`);
    }
    for (const hook of ['postStart', 'preStop'] as const) {
      const handler = ctx.container.lifecycle?.[hook];
      const path = [...ctx.path, 'lifecycle', hook];
      report(handler?.httpGet, [...path, 'httpGet'], `the ${hook} hook`);
      report(handler?.tcpSocket, [...path, 'tcpSocket'], `the ${hook} hook`);
    }
    return out;
  },
};

export const securityRules: Rule[] = [probeHostSet];
