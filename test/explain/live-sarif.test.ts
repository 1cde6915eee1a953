/**
 * `check --cluster -o sarif` carries the live diagnoses: each as a result whose ruleId is the
 * cause's stable id, with a rule of its own after check's, at the workload's API path — and the
 * document stays what every probelet SARIF must be (test/check/sarif.ts). The live run on the
 * real kubelet is in real-kubelet.test.ts; this one needs no cluster.
 */
import { describe, expect, it } from 'vitest';
import { clusterObject } from '../../src/explain/cluster-objects.js';
import { checkManifests } from '../../src/check/run.js';
import { toSarif } from '../../src/check/output.js';
import { ruleInfos } from '../../src/check/rules/index.js';
import type { LiveEvidence } from '../../src/explain/live-evidence.js';
import { withLiveSarif } from '../../src/explain/live-sarif.js';
import { expectValidSarif, type SarifLog } from '../check/sarif.js';

const deployment = clusterObject(
  { kind: 'Deployment', apiVersion: 'apps/v1', plural: 'deployments' },
  {
    metadata: { name: 'api', namespace: 'shop' },
    spec: {
      selector: { matchLabels: { app: 'api' } },
      template: { metadata: { labels: { app: 'api' } }, spec: { containers: [{ name: 'app', image: 'api:1', livenessProbe: { httpGet: { path: '/healthz', port: 8080 } } }] } },
    },
  },
);

const live: LiveEvidence[] = [
  { object: { kind: 'Deployment', namespace: 'shop', name: 'api' }, pod: 'api-7d9c-x2', container: 'app', cause: 'slow-start-liveness', summary: 'killed 3 times by its liveness probe' },
  { object: { kind: 'Deployment', namespace: 'shop', name: 'api' }, pod: 'api-7d9c-y7', container: 'app', cause: 'slow-start-liveness', summary: 'killed twice by its liveness probe' },
  { object: { kind: 'Pod', namespace: 'shop', name: 'debug' }, pod: 'debug', container: 'main', cause: 'hang', summary: 'the app hung' },
];

describe('check --cluster -o sarif with live evidence', () => {
  const result = checkManifests({ objects: [deployment], problems: [], skipped: [] }, { startupTimes: new Map() });
  const plain = toSarif(result, ruleInfos, '0.0.0-test');
  const log = JSON.parse(withLiveSarif(plain, live)) as SarifLog;

  it('stays valid SARIF 2.1.0: every result points at its rule, every rule has help', () => {
    expectValidSarif(log);
  });

  it("keeps check's rules and results as they were, then one rule per cause and one result per live diagnosis", () => {
    const before = JSON.parse(plain) as SarifLog;
    const run = log.runs[0];
    const rules = run?.tool.driver.rules ?? [];
    // check's rules (its rule ids, then its own input notes' rule) first, unchanged; then the causes.
    const checkRules = before.runs[0]?.tool.driver.rules ?? [];
    expect(checkRules.length).toBeGreaterThanOrEqual(ruleInfos.length);
    expect(rules.slice(0, checkRules.length)).toEqual(checkRules);
    expect(rules.slice(checkRules.length).map((r) => r.id)).toEqual(['slow-start-liveness', 'hang']);
    const findings = before.runs[0]?.results ?? [];
    expect(findings.length).toBeGreaterThan(0);
    expect(run?.results.slice(0, findings.length)).toEqual(findings);
    const added = run?.results.slice(findings.length) ?? [];
    expect(added.map((r) => [r.ruleId, r.properties?.['pod'], r.locations[0]?.physicalLocation.artifactLocation.uri])).toEqual([
      ['slow-start-liveness', 'api-7d9c-x2', 'shop/deployments/api'],
      ['slow-start-liveness', 'api-7d9c-y7', 'shop/deployments/api'],
      ['hang', 'debug', 'shop/pods/debug'],
    ]);
    expect(added[0]?.properties).toEqual({ live: true, cause: 'slow-start-liveness', pod: 'api-7d9c-x2', container: 'app' });
    // The same workload, container and cause: the same result for code scanning, whichever pod showed it.
    expect(added[0]?.partialFingerprints).toEqual(added[1]?.partialFingerprints);
    expect(added[0]?.partialFingerprints).not.toEqual(added[2]?.partialFingerprints);
  });

  it('no live evidence: the document is exactly check\'s', () => {
    expect(withLiveSarif(plain, [])).toBe(plain);
  });
});
