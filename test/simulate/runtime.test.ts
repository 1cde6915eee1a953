/** The simulated runtime and handlers on their own: exits, signals, and what each state answers. */
import { describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../src/api/types.js';
import type { ProbeTarget } from '../../src/prober/prober.js';
import { IGNORE_SIGTERM, type ContainerBehaviour } from '../../src/simulate/behaviour.js';
import { simulatedHandlers } from '../../src/simulate/handlers.js';
import { SimRuntime } from '../../src/simulate/runtime.js';
import { parseScript } from '../../src/simulate/script.js';
import { FakeClock } from '../../src/util/clock.js';

const pod: Pod = { metadata: { name: 'p', uid: 'u1' }, spec: { containers: [{ name: 'c' }] } };
const container: Container = { name: 'c' };

async function setup(b: ContainerBehaviour) {
  const clock = new FakeClock(0, { settleTurns: 1 });
  const runtime = new SimRuntime({ clock, behaviours: new Map([['c', b]]) });
  const events: string[] = [];
  runtime.subscribe((e) => events.push(`${e.type}@${clock.now()}:${e.status.exitCode ?? ''}`));
  const sandbox = await runtime.runPodSandbox(pod);
  const status = await runtime.startContainer(sandbox.id, pod, container, 0);
  const target = (probeType: ProbeTarget['probeType']): ProbeTarget => ({ probeType, pod, container, containerID: status.id });
  return { clock, runtime, events, id: status.id, handlers: simulatedHandlers(runtime, clock), target };
}

describe('SimRuntime', () => {
  it('exits when the script says exit(N), replaying from the start for each instance', async () => {
    const { clock, runtime, events, id } = await setup({ script: parseScript('up:5s,exit(3)'), probes: {} });
    await clock.advance(5000);
    expect(runtime.containerStatus(id)).toMatchObject({ state: 'exited', exitCode: 3, reason: 'Error', finishedAt: 5000 });
    expect(events).toEqual(['started@0:', 'exited@5000:3']);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('honours SIGTERM at once (143); ignoring it means SIGKILL after the grace period (137)', async () => {
    const honours = await setup({ probes: {} });
    await honours.runtime.stopContainer(honours.id, 30_000);
    expect(honours.runtime.containerStatus(honours.id)).toMatchObject({ exitCode: 143, finishedAt: 0 });

    const ignores = await setup({ probes: {}, onSigterm: IGNORE_SIGTERM });
    let stopped = false;
    void ignores.runtime.stopContainer(ignores.id, 5000).then(() => (stopped = true));
    await ignores.clock.advance(4999);
    expect(stopped).toBe(false);
    await ignores.clock.advance(1);
    expect(stopped).toBe(true);
    expect(ignores.runtime.containerStatus(ignores.id)).toMatchObject({ exitCode: 137, finishedAt: 5000 });
  });
});

describe('SimRuntime with a start latency (δ)', () => {
  it('starts δ after the request: the promise, the started event and startedAt all then; close() finishes a start under way', async () => {
    const clock = new FakeClock(0, { settleTurns: 1 });
    const runtime = new SimRuntime({ clock, behaviours: new Map([['c', { probes: {} }]]), startLatency: () => 250 });
    const events: string[] = [];
    runtime.subscribe((e) => events.push(`${e.type}@${clock.now()}`));
    const sandbox = await runtime.runPodSandbox(pod);
    let started: { startedAt?: number } | undefined;
    void runtime.startContainer(sandbox.id, pod, container, 0).then((s) => (started = s));
    await clock.advance(249);
    expect(started).toBeUndefined();
    expect(runtime.listContainers()).toEqual([]);
    await clock.advance(1);
    expect(started?.startedAt).toBe(250);
    expect(events).toEqual(['started@250']);

    let late: { state?: string } | undefined;
    void runtime.startContainer(sandbox.id, pod, container, 1).then((s) => (late = s));
    await runtime.close();
    await Promise.resolve();
    expect(late).toBeDefined();
    expect(runtime.listContainers().every((c) => c.state === 'exited')).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('simulated handlers', () => {
  it('hang: HTTP, gRPC and exec time out at timeoutSeconds on the clock; TCP still succeeds', async () => {
    const { clock, handlers, target, runtime, id } = await setup({ script: parseScript('hang'), probes: {} });
    const http = handlers.http({ url: 'http://127.0.0.1:8080/healthz', headers: [] }, 1000, undefined, undefined, target('liveness'));
    const grpc = handlers.grpc('127.0.0.1', 9000, '', 2000, undefined, target('liveness'));
    const exec = handlers.exec({ runInContainer: (i, c, t) => runtime.execSync(i, c, t) }, id, ['cat', 'x'], 3000, undefined, target('liveness'));
    expect(await handlers.tcp('127.0.0.1', 8080, 1000, undefined, target('liveness'))).toEqual({ result: 'success', output: '' });
    await clock.advance(3000);
    expect(await http).toEqual({ result: 'failure', output: 'Get "http://127.0.0.1:8080/healthz": context deadline exceeded (Client.Timeout exceeded while awaiting headers)' });
    expect(await grpc).toEqual({ result: 'failure', output: 'timeout: health rpc did not complete within 2s' });
    expect(await exec).toEqual({ result: 'failure', output: 'command timed out: "cat x" timed out after 3s' });
  });

  it('slow(D): healthy after D, a timeout when D ≥ timeoutSeconds; per-probe overrides win', async () => {
    const { clock, handlers, target } = await setup({ script: parseScript('slow(2s)'), probes: { readiness: parseScript('fail') } });
    let early: unknown;
    void handlers.http({ url: 'http://127.0.0.1:8080/', headers: [] }, 5000, undefined, undefined, target('liveness')).then((o) => (early = o));
    await clock.advance(1999);
    expect(early).toBeUndefined();
    await clock.advance(1);
    expect(early).toEqual({ result: 'success', output: 'ok' });
    const late = handlers.http({ url: 'http://127.0.0.1:8080/', headers: [] }, 2000, undefined, undefined, target('liveness'));
    await clock.advance(2000);
    expect((await late).result).toBe('failure');
    expect(await handlers.http({ url: 'http://127.0.0.1:8080/', headers: [] }, 1000, undefined, undefined, target('readiness'))).toEqual({
      result: 'failure',
      output: 'HTTP probe failed with statuscode: 500',
    });
  });

  it('down: connection refused in Go words', async () => {
    const { handlers, target } = await setup({ script: parseScript('down'), probes: {} });
    expect(await handlers.tcp('127.0.0.1', 81, 1000, undefined, target('readiness'))).toEqual({ result: 'failure', output: 'dial tcp 127.0.0.1:81: connect: connection refused' });
    expect((await handlers.http({ url: 'http://127.0.0.1:81/', headers: [] }, 1000, undefined, undefined, target('readiness'))).output).toBe(
      'Get "http://127.0.0.1:81/": dial tcp 127.0.0.1:81: connect: connection refused',
    );
  });
});

describe('SimRuntime behavioursFor (a cluster node: behaviours from each pod)', () => {
  it('gives each pod its own behaviours; a pod given none plays the runtime’s', async () => {
    const clock = new FakeClock(0, { settleTurns: 1 });
    const own = new Map<string, ContainerBehaviour>([['c', { probes: { readiness: parseScript('down') }, script: parseScript('up:5s,exit(2)') }]]);
    const runtime = new SimRuntime({
      clock,
      behaviours: new Map(),
      behavioursFor: (p) => (p.metadata?.name === 'scripted' ? own : undefined),
    });
    const start = async (name: string): Promise<string> => {
      const p: Pod = { metadata: { name, uid: `uid-${name}` }, spec: { containers: [container] } };
      const sandbox = await runtime.runPodSandbox(p);
      return (await runtime.startContainer(sandbox.id, p, container, 0)).id;
    };
    const scripted = await start('scripted');
    const plain = await start('plain');
    expect(runtime.stateOf(scripted, 'readiness')?.kind).toBe('down');
    expect(runtime.stateOf(scripted, 'liveness')?.kind).toBe('up');
    expect(runtime.stateOf(plain, 'readiness')?.kind).toBe('up');
    await clock.advance(5000);
    expect(runtime.containerStatus(scripted)).toMatchObject({ state: 'exited', exitCode: 2 });
    expect(runtime.containerStatus(plain)?.state).toBe('running');
    await runtime.close();
  });
});
