import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { KNOWN_FIELDS, ROOT_TYPES } from '../../src/api/known-fields.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const typesDir = dirname(createRequire(import.meta.url).resolve('kubernetes-types/package.json'));

/** `core.v1.Probe` → the property names of `interface Probe` in kubernetes-types/core/v1.d.ts. */
function declaredFields(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const modules = new Set([...Object.keys(KNOWN_FIELDS)].map((type) => type.slice(0, type.lastIndexOf('.'))));
  for (const module of modules) {
    const file = join(typesDir, `${module.replace('.', '/')}.d.ts`);
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
    for (const statement of source.statements) {
      if (!ts.isInterfaceDeclaration(statement)) continue;
      const names = statement.members.filter(ts.isPropertySignature).map((m) => (ts.isIdentifier(m.name) || ts.isStringLiteral(m.name) ? m.name.text : ''));
      out.set(`${module}.${statement.name.text}`, names);
    }
  }
  return out;
}

/**
 * Fields kubernetes-types (1.30) declares that the pinned version no longer has: the API
 * server refuses them, so the table must not know them. Each with where it went.
 */
const REMOVED_SINCE_TYPES: Readonly<Record<string, string>> = {
  // 1.31: the DRA rework replaced `source` with resourceClaimName / resourceClaimTemplateName.
  'core.v1.PodResourceClaim.source': 'removed in Kubernetes 1.31',
};

describe('the table of known fields', () => {
  const declared = declaredFields();

  it("has every field kubernetes-types declares for each of its types (a field of an older release is never refused)", () => {
    const missing: string[] = [];
    let compared = 0;
    for (const [type, fields] of Object.entries(KNOWN_FIELDS)) {
      const names = declared.get(type);
      if (names === undefined) continue;
      compared++;
      for (const name of names) if (!Object.hasOwn(fields, name) && !Object.hasOwn(REMOVED_SINCE_TYPES, `${type}.${name}`)) missing.push(`${type}.${name}`);
    }
    expect(missing).toEqual([]);
    // The walk reached the types of every kind: pod spec, containers, probes, handlers, volumes, status…
    expect(compared).toBeGreaterThan(150);
    for (const type of ['core.v1.Probe', 'core.v1.LifecycleHandler', 'core.v1.SecurityContext', 'core.v1.ResourceRequirements', 'core.v1.Volume', 'core.v1.PodStatus', 'batch.v1.CronJobSpec', 'apps.v1.StatefulSetSpec']) {
      expect(Object.keys(KNOWN_FIELDS[type] ?? {}).sort()).toEqual(expect.arrayContaining([...(declared.get(type) ?? ['(not declared)'])].sort()));
    }
  });

  it('knows the fields newer than kubernetes-types (Kubernetes 1.31+), e.g. lifecycle.stopSignal and the pod-level resources', () => {
    expect(KNOWN_FIELDS['core.v1.Lifecycle']).toHaveProperty('stopSignal');
    expect(KNOWN_FIELDS['core.v1.PodSpec']).toHaveProperty('resources');
    expect(KNOWN_FIELDS['core.v1.Container']).toHaveProperty('restartPolicyRules');
    expect(declared.get('core.v1.Lifecycle')).not.toContain('stopSignal');
  });

  it('names a root type for every kind with a pod template', async () => {
    const { POD_TEMPLATE_KINDS } = await import('../../src/api/workloads.js');
    expect(Object.keys(ROOT_TYPES).sort()).toEqual(Object.keys(POD_TEMPLATE_KINDS).sort());
  });

  it("is what the generator makes of the pinned Kubernetes version's OpenAPI document (fails, not skips, when the Go module cache lacks it under PROBELET_REQUIRE_CLUSTER)", async () => {
    const run = promisify(execFile);
    try {
      await run(process.execPath, [join(root, 'scripts/gen-known-fields.mjs'), '--check'], { cwd: root });
    } catch (err) {
      const e = err as { code?: number; stderr?: string };
      // 3: the document is not in the module cache (no `npm run cluster:build` on this machine).
      if (e.code === 3 && process.env['PROBELET_REQUIRE_CLUSTER'] !== '1') return;
      throw new Error(e.stderr ?? String(err));
    }
  }, 60_000);
});
