/**
 * `probe-wrong-target`: a probe aimed where the app is not — it never succeeded. From the kills:
 * every failure HTTP 404 (it listens, not at that path); every failure `connection refused` on
 * a port the container does not declare (the declared `containerPort`s named, and the patch
 * sets one); or liveness refused although the startup probe passed. From readiness: never
 * Ready with the same evidence.
 */
import type { Container } from '../../api/types.js';
import type { Diagnosis } from '../diagnosis.js';
import { describePorts, make, plural, portDeclared, portPatch, probePort } from './common.js';
import { where, type KillContext } from './kill-reading.js';
import type { ReadinessContext } from './readiness.js';

export function wrongTargetOfKills(x: KillContext): Diagnosis | undefined {
  const { c, t, r, numbers, evidence, field, port } = x;
  // A path that is not there: 404 from the app.
  const notFound = r.failures.filter((f) => f.statusCode === 404).reduce((n, f) => n + f.count, 0);
  if (notFound > 0 && notFound === r.failureCount) {
    numbers['notFound'] = notFound;
    return make(
      t,
      'probe-wrong-target',
      `the ${r.kind} probe asks for ${r.probe.httpGet?.path ?? '/'} and the app answers 404 every time (${notFound} failures, ${plural(r.kills, 'kill')}): it listens, but not at that path`,
      evidence,
      numbers,
      { text: `set ${field}.httpGet.path to the app's health endpoint (the app answers 404 at ${r.probe.httpGet?.path ?? '/'} on port ${String(port)})` },
    );
  }
  if (r.dominant === 'refused' && x.declared === false) {
    const ports = describePorts(c);
    const first = c.ports?.[0];
    evidence.push({ text: `the probe dials port ${String(port)}; the container declares ${ports}`, confidence: 'certain', from: 'spec' });
    const to = first?.containerPort;
    return make(
      t,
      'probe-wrong-target',
      `the ${r.kind} probe dials port ${String(port)}, where nothing listens (connection refused every time, ${plural(r.kills, 'kill')}); the container declares containerPort ${ports}`,
      evidence,
      numbers,
      to === undefined ? { text: `point ${field} at the port the app listens on` } : { text: `set ${field}.${r.probe.httpGet ? 'httpGet' : r.probe.tcpSocket ? 'tcpSocket' : 'grpc'}.port to ${to}, the port the container declares`, patch: portPatch(c, r.kind, r.probe, to) },
    );
  }
  if (r.kind === 'liveness' && c.startupProbe && r.dominant === 'refused') {
    evidence.push({ text: 'the startup probe had passed (liveness runs only after it), so the app was up', confidence: 'likely', from: 'rule' });
    return make(
      t,
      'probe-wrong-target',
      `the liveness probe finds nothing listening at ${where(r.probe)} although the startup probe passed: ${plural(r.kills, 'kill')}`,
      evidence,
      numbers,
      { text: `point livenessProbe at what the startupProbe checks (${where(c.startupProbe)})` },
    );
  }
  return undefined;
}

/** Never Ready: the readiness probe dials an undeclared port where nothing listens, or gets 404 every time. */
export function wrongTargetOfReadiness(c: Container, x: ReadinessContext): Diagnosis | undefined {
  const { t, probe, count, evidence, numbers } = x;
  const port = probePort(probe);
  const declared = portDeclared(c, port);
  if (x.dominant === 'refused' && declared === false && c.ports?.[0]) {
    evidence.push({ text: `the probe dials port ${String(port)}; the container declares ${describePorts(c)}`, confidence: 'certain', from: 'spec' });
    return make(t, 'probe-wrong-target', `never Ready: the readiness probe dials port ${String(port)}, where nothing listens (connection refused ×${count}); the container declares containerPort ${describePorts(c)}`, evidence, numbers, {
      text: `set readinessProbe.${probe.httpGet ? 'httpGet' : 'tcpSocket'}.port to ${c.ports[0].containerPort}`,
      patch: portPatch(c, 'readiness', probe, c.ports[0].containerPort),
    });
  }
  const notFound = x.failures.filter((f) => f.statusCode === 404).reduce((n, f) => n + f.count, 0);
  if (notFound === count) {
    return make(t, 'probe-wrong-target', `never Ready: the readiness probe asks for ${probe.httpGet?.path ?? '/'} and the app answers 404 every time (${count} failures)`, evidence, numbers, { text: `set readinessProbe.httpGet.path to the app's readiness endpoint` });
  }
  return undefined;
}
