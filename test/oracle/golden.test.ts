/**
 * probelet's `run --runtime cri` held to the real kubelet's recorded timelines (the golden
 * files of test/oracle/golden, written by `npm run oracle -- --record`) without a cluster:
 * only containerd (`npm run cri:up`) is needed. The fast subset; `npm run oracle` runs all.
 */
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { CRI_ENDPOINT, describeCri } from '../cri/helpers.js';
import { formatOutcome, goldenPath, readGolden, runOracle, type ScenarioOutcome } from './oracle.js';
import { SCENARIOS } from './scenarios.js';

const fast = SCENARIOS.filter((s) => s.fast === true);

describe('golden files', () => {
  it('exist for every scenario, recorded on a kubelet', () => {
    for (const s of SCENARIOS) {
      expect(existsSync(goldenPath(s.name)), `${goldenPath(s.name)} (npm run oracle -- --record)`).toBe(true);
      expect(readGolden(s.name)?.version).toMatch(/^kubelet v1\.35\./);
    }
  });
});

describeCri('probelet against the kubelet\'s recorded timelines', () => {
  let outcomes: ScenarioOutcome[] = [];
  beforeAll(async () => {
    outcomes = await runOracle({ scenarios: fast, criEndpoint: CRI_ENDPOINT });
  }, 300_000);

  for (const s of fast) {
    it(`scenario ${s.name}: no unlisted difference from the golden file`, () => {
      const o = outcomes.find((x) => x.scenario.name === s.name);
      expect(o, 'no outcome').toBeDefined();
      if (o === undefined) return;
      expect(o.unlisted, formatOutcome(o)).toEqual([]);
    });
  }
});
