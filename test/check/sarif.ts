/**
 * What every SARIF document probelet writes must satisfy (SARIF 2.1.0's required fields and
 * the links between them): `check -o sarif` on files (cli.test.ts) and `check --cluster -o
 * sarif` with its live results (test/explain).
 */
import { expect } from 'vitest';

export interface SarifResult {
  ruleId: string;
  ruleIndex: number;
  level: string;
  message: { text: string };
  locations: { physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number; startColumn?: number } }; logicalLocations?: { fullyQualifiedName: string; kind: string }[] }[];
  partialFingerprints?: Record<string, string>;
  properties?: Record<string, unknown>;
}

export interface SarifLog {
  $schema: string;
  version: string;
  runs: {
    tool: { driver: { name: string; rules: { id: string; shortDescription: { text: string }; help: { text: string }; defaultConfiguration: { level: string } }[] } };
    results: SarifResult[];
  }[];
}

/** sarifLog: version and runs required, one run with tool.driver.name; rules with unique ids and help; each result's message, level, ruleIndex pointing at its rule, and a location. */
export function expectValidSarif(log: SarifLog): void {
  expect(log.version).toBe('2.1.0');
  expect(log.$schema).toMatch(/sarif-2\.1\.0/);
  expect(log.runs).toHaveLength(1);
  const [runObj] = log.runs;
  const driver = runObj?.tool.driver;
  expect(driver?.name).toBe('probelet');
  const ruleIds = driver?.rules.map((r) => r.id) ?? [];
  expect(new Set(ruleIds).size).toBe(ruleIds.length);
  for (const rule of driver?.rules ?? []) {
    expect(rule.id).toMatch(/^[a-z][a-z0-9-]*$/);
    expect(rule.shortDescription.text.length).toBeGreaterThan(0);
    expect(rule.help.text).toContain('Why:');
    expect(['error', 'warning', 'note']).toContain(rule.defaultConfiguration.level);
  }
  for (const r of runObj?.results ?? []) {
    // result: message.text required; ruleIndex, when present, points at the rule with that id.
    expect(r.message.text.length).toBeGreaterThan(0);
    expect(driver?.rules[r.ruleIndex]?.id).toBe(r.ruleId);
    expect(['error', 'warning', 'note']).toContain(r.level);
    const loc = r.locations[0]?.physicalLocation;
    expect(loc?.artifactLocation.uri.length).toBeGreaterThan(0);
    expect(loc?.region.startLine).toBeGreaterThanOrEqual(1);
  }
}
