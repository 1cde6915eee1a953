/**
 * `run -o json` wrote the whole pod on every status change: n² bytes for a pod of n containers
 * (573 MB in 10 s for 1,000; issue 33). Now a container's change is a `containerStatus` line
 * and the pod is written whole only when the pod itself changes. Proved by the bytes the JSON
 * view writes for one pod of n and 4n containers going from Pending to all Ready (ratio about
 * 4; it was about 16), with the kubelet the simulation drives on a fake clock; and by reading
 * the lines back: the pod at each step and at the end is the kubelet's.
 */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { createRunJsonView, podLineReader } from '../../src/cli/run/json-lines.js';
import { admitForSimulation } from '../../src/simulate/pods.js';
import { startSimulation } from '../../src/simulate/simulation.js';

const notATerminal = { isTTY: false, columns: () => 80, rows: () => 24 };

/** One pod of `n` containers with a readiness probe each (no endpoint: the simulation answers). */
function probedPod(n: number): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `p${n}`, namespace: 'default' },
    spec: { containers: Array.from({ length: n }, (_, i) => ({ name: `c${i}`, image: 'busybox', readinessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 10 } })) },
  };
}

/** The JSON view's lines for the pod over `minutes` of virtual time; each pod the kubelet gave, with how many lines were written by then. */
async function jsonLines(n: number, minutes: number): Promise<{ lines: string[]; last: Pod | undefined; steps: { pod: Pod; lines: number }[] }> {
  const [pod] = admitForSimulation([probedPod(n)]).pods;
  if (pod === undefined) throw new Error('pod rejected');
  let text = '';
  const view = createRunJsonView({ stdout: (t) => void (text += t), stderr: () => undefined }, notATerminal);
  let last: Pod | undefined;
  const steps: { pod: Pod; lines: number }[] = [];
  const sim = startSimulation({
    pods: [pod],
    behaviours: new Map(),
    seed: 1,
    onPod: (p) => {
      last = p;
      view.pod(p);
      if (n <= 50) steps.push({ pod: p, lines: text.split('\n').length - 1 });
    },
  });
  await sim.advance(minutes * 60_000);
  await sim.finish();
  view.close();
  return { lines: text.split('\n').filter((l) => l !== ''), last, steps };
}

const ready = (pod: Pod | undefined): boolean => (pod?.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

describe('run -o json: a pod of many containers', () => {
  it('writes bytes linear in its containers: a containerStatus line per container change, the pod on pod changes', async () => {
    const small = await jsonLines(100, 4);
    const large = await jsonLines(400, 4);
    expect(ready(small.last) && ready(large.last), 'every container Ready within the span').toBe(true);
    const bytes = (lines: string[]): number => lines.reduce((sum, l) => sum + l.length + 1, 0);
    const ratio = bytes(large.lines) / bytes(small.lines);
    const count = (lines: string[], type: string): number => lines.filter((l) => l.startsWith(`{"type":"${type}"`)).length;
    const summary = `100: ${bytes(small.lines)} B (${count(small.lines, 'pod')} pod lines), 400: ${bytes(large.lines)} B (${count(large.lines, 'pod')} pod lines)`;
    // Linear: 4; whole pods on every change: 16.
    expect(ratio, summary).toBeLessThan(5);
    expect(count(large.lines, 'containerStatus'), summary).toBeGreaterThan(390);
  }, 120_000);

  it('reads back into the pod the kubelet had, at each Ready pod line and at the end', async () => {
    const { lines, last, steps } = await jsonLines(20, 2);
    expect(lines.some((l) => l.startsWith('{"type":"containerStatus"'))).toBe(true);
    const read = podLineReader();
    const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));
    let rebuilt: Pod | undefined;
    let at = 0;
    // After the lines of each change, the container statuses read back are the kubelet's then.
    for (const step of steps) {
      for (; at < step.lines; at++) rebuilt = read(JSON.parse(lines[at] ?? '{}') as { type: string }) ?? rebuilt;
      expect(plain(rebuilt?.status?.containerStatuses)).toEqual(plain(step.pod.status?.containerStatuses));
    }
    // The stream ends with the pod's last state, whole.
    for (; at < lines.length; at++) rebuilt = read(JSON.parse(lines[at] ?? '{}') as { type: string }) ?? rebuilt;
    expect(lines.at(-1)?.startsWith('{"type":"pod"')).toBe(true);
    expect(plain(rebuilt)).toEqual(plain(last));
  }, 60_000);
});
