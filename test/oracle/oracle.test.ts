/**
 * The oracle's fast subset on a live cluster: each scenario on the real kubelet and on probelet
 * at once, no difference that known-differences.ts does not list. Skipped, with the reason in
 * the suite's name, without root, Go or a cluster (`npm run cluster:up`); failing instead under
 * PROBELET_REQUIRE_CLUSTER=1 (.ci/run sets it where Go is).
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterKubeconfig, formatOutcome, ROOT, runOracle, type ScenarioOutcome } from './oracle.js';
import { SCENARIOS } from './scenarios.js';

const INSTANCE = 'oracle-test';

function goMissing(): boolean {
  try {
    execFileSync('go', ['version'], { stdio: 'ignore' });
    return false;
  } catch {
    return true;
  }
}

function clusterUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root (containerd and the kubelet need root)';
  if (goMissing()) return 'Go is missing (cluster/build.sh builds the kubelet with Go >= 1.25)';
  const cluster = clusterKubeconfig();
  return 'why' in cluster ? cluster.why : undefined;
}

const reason = clusterUnavailable();
const fast = SCENARIOS.filter((s) => s.fast === true);

if (reason !== undefined && process.env.PROBELET_REQUIRE_CLUSTER === '1') {
  describe('oracle: probelet against the real kubelet', () => {
    it(`needs the cluster: ${reason}`, () => {
      throw new Error(`PROBELET_REQUIRE_CLUSTER=1 but ${reason}`);
    });
  });
} else if (reason !== undefined) {
  describe.skip(`oracle: probelet against the real kubelet — skipped: ${reason}`, () => {
    it('runs the fast subset', () => undefined);
  });
} else {
  describe('oracle: probelet against the real kubelet', () => {
    let outcomes: ScenarioOutcome[] = [];
    let endpoint = '';
    beforeAll(async () => {
      endpoint = execFileSync('bash', [`${ROOT}scripts/cri-up.sh`, '--name', INSTANCE], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim().split('\n').at(-1) ?? '';
      const cluster = clusterKubeconfig();
      if ('why' in cluster) throw new Error(cluster.why);
      outcomes = await runOracle({ scenarios: fast, criEndpoint: endpoint, kubeconfig: cluster.path });
    }, 300_000);
    afterAll(() => {
      execFileSync('bash', [`${ROOT}scripts/cri-down.sh`, '--name', INSTANCE], { stdio: 'ignore' });
    }, 60_000);

    for (const s of fast) {
      it(`scenario ${s.name}: no unlisted difference`, () => {
        const o = outcomes.find((x) => x.scenario.name === s.name);
        expect(o, 'no outcome').toBeDefined();
        if (o === undefined) return;
        expect(o.unlisted, formatOutcome(o)).toEqual([]);
      });
    }
  });
}
