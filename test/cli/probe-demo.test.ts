/**
 * examples/probe-demo/demo.mjs, run as a user would (node, against the built dist/): every
 * handler's row with the kubelet's wording, exit 0 on its own (no kill, nothing left open),
 * and no probe process left behind.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { aliveWithMarker, markerEnv } from '../helpers/processes.js';
import { runNode } from './helpers.js';

const DEMO = fileURLToPath(new URL('../../examples/probe-demo/demo.mjs', import.meta.url));

/** The table row whose handler and target start as given, split into its columns. */
function row(stdout: string, handler: string, target: RegExp): string[] {
  const line = stdout.split('\n').find((l) => l.startsWith(`${handler} `) && target.test(l));
  expect(line, `row ${handler} ${target}`).toBeDefined();
  return (line ?? '').split(/ {2,}/);
}

describe('examples/probe-demo', () => {
  it('probes every handler, prints the table and exits 0 by itself', async () => {
    const { marker, env } = markerEnv();
    const run = await runNode(DEMO, [], { killAfterMs: 25_000, env });
    expect(run.stderr).toBe('');
    expect(run).toMatchObject({ code: 0, signal: null });
    const out = run.stdout;
    expect(out).toMatch(/^HANDLER +TARGET +VERDICT +RESULT +ELAPSED +EVENT/);
    expect(out).toContain('\n11 probes, 11 as expected.\n');

    expect(row(out, 'http', /\/healthz /)).toEqual(['http', expect.stringMatching(/\/healthz$/), 'success', 'success', expect.stringMatching(/^\d+ms$/), '-']);
    expect(row(out, 'http', /\/moved /).slice(2, 4)).toEqual(['warning', 'success']);
    expect(row(out, 'http', /\/moved /)[5]).toBe('ProbeWarning: Readiness probe warning: Probe terminated redirects, Response body:');
    expect(row(out, 'http', /\/fail /)[5]).toBe('Unhealthy: Readiness probe failed: HTTP probe failed with statuscode: 500');
    const slow = row(out, 'http', /\/slow /);
    expect(slow[2]).toBe('failure (timeout)');
    expect(Number.parseInt(slow[4] ?? '', 10)).toBeGreaterThanOrEqual(950);
    expect(slow[5]).toMatch(/context deadline exceeded \(Client\.Timeout exceeded while awaiting headers\)$/);

    expect(row(out, 'tcp', /success/)[2]).toBe('success');
    expect(row(out, 'tcp', /refused/)[5]).toMatch(/^Unhealthy: Readiness probe failed: dial tcp 127\.0\.0\.1:\d+: connect: connection refused$/);

    expect(row(out, 'grpc', /^grpc +127\.0\.0\.1:\d+ {2}/)[2]).toBe('success');
    expect(row(out, 'grpc', /payments/)[5]).toBe('Unhealthy: Readiness probe failed: service unhealthy (responded with "NOT_SERVING")');

    expect(row(out, 'exec', /exit 0/)[2]).toBe('success');
    expect(row(out, 'exec', /warming up/)[5]).toBe('Unhealthy: Readiness probe failed: warming up');
    const hung = row(out, 'exec', /sleep 30/);
    expect(hung[2]).toBe('failure (timeout)');
    expect(hung[5]).toBe('Unhealthy: Readiness probe failed: command timed out: "sleep 30" timed out after 1s');

    // The timed-out `sleep 30` inherited the marker: it must be dead, not orphaned.
    expect(aliveWithMarker(marker)).toEqual([]);
  });
});
