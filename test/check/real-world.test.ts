/**
 * Manifests in the style of well-known public projects (test/fixtures/real-world, written
 * for these tests): every one is read, none is a problem, and a valid object never gets an
 * error — the false positives that make users turn linters off.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadManifests } from '../../src/api/documents.js';
import { checkManifests } from '../../src/check/run.js';

const DIR = fileURLToPath(new URL('../fixtures/real-world/', import.meta.url));

describe('real-world manifests', async () => {
  const load = await loadManifests([DIR]);
  const result = checkManifests(load, { startupTimes: new Map() });

  it('are all read: every workload kind, Lists, JSON, Helm output, with the other kinds skipped', () => {
    expect(result.problems).toEqual([]);
    const kinds = new Set(load.objects.map((o) => o.kind));
    for (const kind of ['Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'Pod']) expect(kinds).toContain(kind);
    expect(load.objects.length).toBe(12);
    expect(new Set(load.skipped.map((s) => s.kind))).toEqual(new Set(['Namespace', 'ServiceAccount', 'ConfigMap', 'Service', 'CustomResourceDefinition']));
  });

  it('give no error on a valid object', () => {
    expect(result.findings.filter((f) => f.severity === 'error')).toEqual([]);
  });

  it('place every finding on a real line of its file, JSON included', () => {
    for (const f of result.findings) expect(f.line, `${f.file} ${f.rule}`).toBeGreaterThan(1);
  });

  it('list a budget for every probed container, the native sidecar included', () => {
    const names = result.containers.map((c) => `${c.object.name}/${c.container}`);
    expect(names).toContain('prometheus-main/config-reloader');
    expect(names).not.toContain('prometheus-main/init-config-reloader');
    expect(names).toHaveLength(13);
  });
});
