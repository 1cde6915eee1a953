/**
 * The PLEG's relist as the Kubelet models it (`relistPhaseMs`, docs/timing-model.md §3), on the
 * FakeClock with the simulated runtime: a new container shows in the status, and to every probe
 * worker, at the first relist after the sync that started it; an exit the runtime reports at
 * once (the process runtime) is acted on at the next relist, while one a relisting runtime
 * found (CRI: its relist is the PLEG) is acted on as it comes.
 */
import { describe, expect, it } from 'vitest';
import { admitPods } from '../../src/api/admit.js';
import type { Probe } from '../../src/api/types.js';
import { createEventRecorder } from '../../src/kubelet/events.js';
import { Kubelet } from '../../src/kubelet/kubelet.js';
import { Prober } from '../../src/prober/prober.js';
import { simulatedHandlers } from '../../src/simulate/handlers.js';
import { admitForSimulation } from '../../src/simulate/pods.js';
import { SimRuntime, type SimRuntimeOptions } from '../../src/simulate/runtime.js';
import { FakeClock } from '../../src/util/clock.js';
import { behaviours, podWith } from '../simulate/harness.js';

/** The CRI runtime's part: exits come from a relist of its own. */
class RelistingRuntime extends SimRuntime {
  readonly relists = true;
}

const START_MS = 1_000_000;

async function play(
  probes: { readinessProbe?: Probe; startupProbe?: Probe },
  script: string,
  options: { relistPhaseMs?: number; relists?: boolean; forMs: number },
): Promise<{ starts: number[]; probes: { kind: string; at: number }[] }> {
  const clock = new FakeClock(START_MS, { settle: 'microtasks' });
  const runtimeOptions: SimRuntimeOptions = { clock, behaviours: behaviours({ c: script }) };
  const runtime = options.relists === true ? new RelistingRuntime(runtimeOptions) : new SimRuntime(runtimeOptions);
  const recorder = createEventRecorder({ clock });
  const seen: { kind: string; at: number }[] = [];
  const handlers = simulatedHandlers(runtime, clock);
  const prober = new Prober({ runner: { runInContainer: (id, cmd, ms) => runtime.execSync(id, cmd, ms) }, recorder, clock, handlers, httpHandlerReadsOnly: true });
  const kubelet = new Kubelet({
    runtime,
    clock,
    random: () => 0,
    recorder,
    admit: admitPods,
    flightRecorder: false,
    prober: {
      probe: (kind, ...rest) => {
        seen.push({ kind, at: clock.now() - START_MS });
        return prober.probe(kind, ...rest);
      },
    },
    ...(options.relistPhaseMs !== undefined ? { relistPhaseMs: options.relistPhaseMs } : {}),
  });
  const starts: number[] = [];
  recorder.subscribe((e) => {
    if (e.reason === 'Started') starts.push(clock.now() - START_MS);
  });
  const admitted = admitForSimulation([podWith(probes)]);
  expect(kubelet.addPods(admitted.pods).errors).toEqual([]);
  await clock.advance(options.forMs);
  let closed = false;
  void kubelet.close().then(() => (closed = true));
  while (!closed) await clock.advance(1000);
  return { starts, probes: seen };
}

const exec: Probe = { exec: { command: ['true'] }, periodSeconds: 10 };

describe('the relist (relistPhaseMs)', () => {
  it('a new container is first probed at the relist after its start, readiness and startup alike', async () => {
    // Started at 0 (no start latency here); relists at 300 ms past each second.
    const readiness = await play({ readinessProbe: exec }, 'up', { relistPhaseMs: 300, forMs: 5_000 });
    expect(readiness.starts).toEqual([0]);
    expect(readiness.probes[0]).toEqual({ kind: 'readiness', at: 300 });
    // Without the relist, the sync right after the start triggers the readiness probe at once.
    const bare = await play({ readinessProbe: exec }, 'up', { forMs: 5_000 });
    expect(bare.probes[0]).toEqual({ kind: 'readiness', at: 0 });
    // A startup probe is not triggered: it probes at its next tick that sees the container.
    const startup = await play({ startupProbe: { ...exec, periodSeconds: 1 } }, 'up', { relistPhaseMs: 300, forMs: 5_000 });
    expect(startup.probes[0]).toEqual({ kind: 'startup', at: 1_000 });
  });

  it("an exit the runtime reports at once waits for the next relist; one a relisting runtime found is synced as it comes", async () => {
    // Exits 2 s after its start (at 2,000 ms, between relists at 1,300 and 2,300).
    const process = await play({}, 'up:2s,exit(1)', { relistPhaseMs: 300, forMs: 3_000 });
    expect(process.starts).toEqual([0, 2_300]);
    const cri = await play({}, 'up:2s,exit(1)', { relistPhaseMs: 300, relists: true, forMs: 3_000 });
    expect(cri.starts).toEqual([0, 2_000]);
  });
});
