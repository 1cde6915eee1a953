/**
 * A real incident, saved: the slow-start pod of test/explain/real-kubelet.test.ts as the real
 * kubelet left it (its Pod and Events as the API served them, recorded with
 * PROBELET_EXPLAIN_RECORD=1), and what `explain` said live about it. Offline (`-f --events`)
 * must say the same, with no cluster.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { ExplainReport } from '../../src/explain/output.js';
import { runCli } from '../cli/helpers.js';

const EXAMPLE = new URL('../../examples/explain/', import.meta.url);
const FIXTURES = new URL('../fixtures/explain/', import.meta.url);
const example = (name: string): string => fileURLToPath(new URL(name, EXAMPLE));
const path = (name: string): string => fileURLToPath(new URL(name, FIXTURES));

describe('explain offline on a saved incident of the real kubelet', () => {
  it('gives the cause, numbers and fix explain gave live', async () => {
    const { default: live } = (await import(path('slow-start.explain.json'), { with: { type: 'json' } })) as { default: ExplainReport };
    const run = await runCli(['explain', '-f', example('slow-start-pod.json'), '--events', example('slow-start-events.json'), '--now', live.pods[0]?.observedAt ?? '', '-o', 'json']);
    expect(run.code).toBe(1);
    const offline = JSON.parse(run.stdout) as ExplainReport;
    const [d] = offline.pods[0]?.diagnoses ?? [];
    const [l] = live.pods[0]?.diagnoses ?? [];
    expect(d?.cause).toBe('slow-start-liveness');
    expect(d?.cause).toBe(l?.cause);
    expect(d?.numbers).toEqual(l?.numbers);
    expect(d?.fix).toEqual(l?.fix);
    expect(d?.summary).toBe(l?.summary);
  });

  it('-o patch prints the startupProbe of the fix as a strategic merge patch', async () => {
    const run = await runCli(['explain', '-f', example('slow-start-pod.json'), '--events', example('slow-start-events.json'), '-o', 'patch']);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('bare Pod, whose probes cannot be changed in place');
    expect(run.stdout).toContain('"startupProbe":{"exec":{"command":["test","-f","/tmp/ok"]},"periodSeconds":2,"timeoutSeconds":1,"failureThreshold":30}');
  });
});
