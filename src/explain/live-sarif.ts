/**
 * `check --cluster -o sarif` with the live evidence: each probe cause explain found on a
 * restarted pod is a SARIF result beside the findings, its ruleId the cause's stable id (a rule
 * of its own in `tool.driver.rules`, after check's), placed at the workload that owns the pod
 * (its API path, as check --cluster places findings) with the pod and container in its
 * properties. A code-scanning UI then shows "restarted by its liveness probe" next to the
 * manifest findings that predicted it. The document stays SARIF 2.1.0: the log check wrote is
 * extended, nothing in it changed.
 */
import { fingerprint, FINGERPRINT_KEY } from '../check/baseline.js';
import { CAUSES, type CauseId } from './causes.js';
import { WORKLOAD_API } from './cluster-objects.js';
import type { LiveEvidence } from './live-evidence.js';

interface SarifRule {
  id: string;
}

interface SarifLog {
  runs: { tool: { driver: { rules: SarifRule[] } }; results: unknown[] }[];
}

/** A live cause's rule: what it means, and where the evidence and the fix are. */
function causeRule(cause: CauseId): Record<string, unknown> {
  return {
    id: cause,
    shortDescription: { text: `live: ${CAUSES[cause]}` },
    fullDescription: { text: `Seen on the cluster: ${CAUSES[cause]}. probelet explain read it from the pod's status and events with the kubelet's own rules.` },
    help: {
      text: `Why: a pod of this workload was restarted or left service, and its status and events name this cause (docs/explain.md lists each cause's evidence). The evidence and the fix, with the fields and numbers to change: probelet explain pod/NAME -n NAMESPACE (add -o patch for a kubectl patch, --verify to simulate it).`,
    },
    defaultConfiguration: { level: 'warning' },
    properties: { live: true, equivalents: [] },
  };
}

/** The SARIF log `sarif` (check's, one run) with a result per live diagnosis and a rule per cause among them. */
export function withLiveSarif(sarif: string, live: readonly LiveEvidence[]): string {
  const log = JSON.parse(sarif) as SarifLog;
  const run = log.runs[0];
  if (run === undefined || live.length === 0) return sarif;
  const rules = run.tool.driver.rules;
  const index = new Map(rules.map((r, i) => [r.id, i]));
  for (const e of live) {
    if (index.has(e.cause)) continue;
    index.set(e.cause, rules.length);
    rules.push(causeRule(e.cause) as unknown as SarifRule);
  }
  for (const e of live) {
    const api = WORKLOAD_API[e.object.kind];
    const object = { apiVersion: api?.apiVersion ?? '', kind: e.object.kind, namespace: e.object.namespace, name: e.object.name };
    run.results.push({
      ruleId: e.cause,
      ruleIndex: index.get(e.cause),
      level: 'warning',
      message: { text: `pod ${e.pod}, container ${e.container}: ${e.summary}` },
      locations: [
        {
          physicalLocation: { artifactLocation: { uri: [e.object.namespace, api?.plural ?? `${e.object.kind.toLowerCase()}s`, e.object.name].map(encodeURIComponent).join('/') }, region: { startLine: 1 } },
          logicalLocations: [{ fullyQualifiedName: `${e.object.kind} ${e.object.namespace}/${e.object.name}#${e.container}`, kind: 'object' }],
        },
      ],
      // The same workload, container and cause on the next run is the same result (the pod's name changes).
      partialFingerprints: { [FINGERPRINT_KEY]: fingerprint({ rule: e.cause, object, container: e.container, field: '' }) },
      properties: { live: true, cause: e.cause, pod: e.pod, container: e.container },
    });
  }
  return `${JSON.stringify(log, null, 2)}\n`;
}
