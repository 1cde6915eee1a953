import { describe, expect, it } from 'vitest';
import type { Container, Pod, PodStatus, Probe } from '../../src/api/types.js';
import { probeExec } from '../../src/probe/exec.js';
import type { CommandRunner, Outcome, ProbeOutcome } from '../../src/probe/types.js';
import { MAX_PROBE_RETRIES, Prober, type ProbeHandlers } from '../../src/prober/prober.js';
import type { EventRecorder, EventRef, ProbeType } from '../../src/prober/types.js';

const KINDS: readonly ProbeType[] = ['liveness', 'readiness', 'startup'];
const FIELD = { liveness: 'livenessProbe', readiness: 'readinessProbe', startup: 'startupProbe' } as const;
const CONTAINER_ID = 'test://foobar';

interface RecordedEvent {
  ref: EventRef;
  type: string;
  reason: string;
  message: string;
}

function recorder(): EventRecorder & { events: RecordedEvent[] } {
  const events: RecordedEvent[] = [];
  return { events, event: (ref, type, reason, message) => void events.push({ ref, type, reason, message }) };
}

const nullRunner: CommandRunner = {
  runInContainer: async () => ({ output: '', exitCode: 0 }),
};

/** Handlers that all return the same scripted outcome, counting their calls. */
function scripted(outcome: ProbeOutcome): { handlers: ProbeHandlers; calls: () => number } {
  let calls = 0;
  const answer = async (): Promise<ProbeOutcome> => {
    calls++;
    return outcome;
  };
  return { handlers: { exec: answer, http: answer, tcp: answer, grpc: answer }, calls: () => calls };
}

function podWith(container: Container): Pod {
  return { metadata: { name: 'testPod', namespace: 'ns', uid: 'uid-1' }, spec: { containers: [container] } };
}

const emptyStatus: PodStatus = {};

function containerWith(kind: ProbeType, probe: Probe | undefined, extra: Partial<Container> = {}): Container {
  return { name: 'c', ...(probe ? { [FIELD[kind]]: probe } : {}), ...extra };
}

const execProbe: Probe = { exec: { command: ['/bin/true'] }, timeoutSeconds: 1 };
const httpProbe: Probe = { httpGet: { path: '/healthz', port: 1 }, timeoutSeconds: 1 };
const tcpProbe: Probe = { tcpSocket: { port: 1 }, timeoutSeconds: 1 };
const grpcProbe: Probe = { grpc: { port: 1 }, timeoutSeconds: 1 };

describe('Prober.probe (T29)', () => {
  for (const kind of KINDS) {
    describe(kind, () => {
      it('29.1 nil probe → success, no error', async () => {
        const prober = new Prober({ runner: nullRunner });
        const c = containerWith(kind, undefined);
        expect(await prober.probe(kind, podWith(c), emptyStatus, c, CONTAINER_ID)).toEqual({ result: 'success' });
      });

      it('29.2 probe without a handler → failure with the missing-handler error', async () => {
        const prober = new Prober({ runner: nullRunner });
        const c = containerWith(kind, { timeoutSeconds: 1 });
        const verdict = await prober.probe(kind, podWith(c), emptyStatus, c, CONTAINER_ID);
        expect(verdict.result).toBe('failure');
        expect(verdict.error?.message).toBe('missing probe handler for testPod_ns(uid-1):c');
      });

      const rows: Array<[string, Probe, Outcome | string, boolean, 'success' | 'failure', boolean]> = [
        ['29.3 exec failure', execProbe, 'failure', false, 'failure', false],
        ['29.4 exec success', execProbe, 'success', false, 'success', false],
        ['29.5 exec warning', execProbe, 'warning', false, 'success', false],
        ['29.6 exec unknown without error', execProbe, 'unknown', false, 'failure', false],
        ['29.7 exec unknown with error', execProbe, 'unknown', true, 'failure', true],
        ['29.11 exec unsupported outcome', execProbe, 'CustomUnsupportedResult', false, 'failure', false],
        ['29.12 http success', httpProbe, 'success', false, 'success', false],
        ['29.13 http failure', httpProbe, 'failure', false, 'failure', false],
        ['29.14 http warning', httpProbe, 'warning', false, 'success', false],
        ['29.15 http unknown', httpProbe, 'unknown', false, 'failure', false],
        ['29.17 tcp success', tcpProbe, 'success', false, 'success', false],
        ['29.18 tcp failure', tcpProbe, 'failure', false, 'failure', false],
        ['29.19 tcp warning', tcpProbe, 'warning', false, 'success', false],
        ['29.20 tcp unknown', tcpProbe, 'unknown', false, 'failure', false],
        ['29.22 grpc success', grpcProbe, 'success', false, 'success', false],
        ['29.23 grpc failure', grpcProbe, 'failure', false, 'failure', false],
        ['29.24 grpc warning', grpcProbe, 'warning', false, 'success', false],
        ['29.25 grpc unknown', grpcProbe, 'unknown', false, 'failure', false],
      ];
      for (const [name, probe, outcome, withError, want, wantError] of rows) {
        it(`${name} → ${want}${wantError ? ' with error' : ''}`, async () => {
          const { handlers } = scripted({
            result: outcome as Outcome,
            output: '',
            ...(withError ? { error: new Error('boom') } : {}),
          });
          const prober = new Prober({ runner: nullRunner, handlers });
          const c = containerWith(kind, probe);
          const verdict = await prober.probe(kind, podWith(c), emptyStatus, c, CONTAINER_ID);
          expect(verdict.result).toBe(want);
          expect(verdict.error !== undefined).toBe(wantError);
        });
      }

      for (const [name, probe] of [
        ['29.16 http', { httpGet: { path: '/', port: 'abc' } }],
        ['29.21 tcp', { tcpSocket: { port: 'abc' } }],
      ] as const) {
        it(`${name} with an unresolvable named port → failure with error`, async () => {
          const prober = new Prober({ runner: nullRunner });
          const c = containerWith(kind, probe);
          const verdict = await prober.probe(kind, podWith(c), emptyStatus, c, CONTAINER_ID);
          expect(verdict.result).toBe('failure');
          expect(verdict.error?.message).toBe('strconv.Atoi: parsing "abc": invalid syntax');
        });
      }
    });
  }

  it('29.8 an unknown probe type → failure with `unknown probe type: "UNKNOWN"`', async () => {
    const prober = new Prober({ runner: nullRunner });
    const c = containerWith('liveness', execProbe);
    const verdict = await prober.probe(666 as unknown as ProbeType, podWith(c), emptyStatus, c, CONTAINER_ID);
    expect(verdict.result).toBe('failure');
    expect(verdict.error?.message).toBe('unknown probe type: "UNKNOWN"');
  });

  it('29.9 the exec prober hands the command to the runner unchanged', async () => {
    const seen: Array<{ id: string; cmd: string[] }> = [];
    const runner: CommandRunner = {
      runInContainer: async (id, cmd) => {
        seen.push({ id, cmd });
        return { output: '', exitCode: 0 };
      },
    };
    const prober = new Prober({ runner });
    const c = containerWith('readiness', { exec: { command: ['/bin/bash', '-c', 'some script'] } });
    expect((await prober.probe('readiness', podWith(c), emptyStatus, c, CONTAINER_ID)).result).toBe('success');
    expect(seen).toEqual([{ id: CONTAINER_ID, cmd: ['/bin/bash', '-c', 'some script'] }]);
  });

  it('29.10 $(VAR) in the command is expanded from literal env values only', async () => {
    const seen: string[][] = [];
    const runner: CommandRunner = {
      runInContainer: async (_id, cmd) => {
        seen.push(cmd);
        return { output: '', exitCode: 0 };
      },
    };
    const prober = new Prober({ runner });
    const c = containerWith(
      'readiness',
      { exec: { command: ['/bin/bash', '-c', 'some $(A) $(B)'] } },
      { env: [{ name: 'A', value: 'script' }] },
    );
    await prober.probe('readiness', podWith(c), emptyStatus, c, CONTAINER_ID);
    expect(seen).toEqual([['/bin/bash', '-c', 'some script $(B)']]);
  });
});

describe('Prober retries and events (§5.2, §5.3)', () => {
  it(`retries only errored attempts, ${MAX_PROBE_RETRIES} attempts in all, then records one errored event`, async () => {
    const rec = recorder();
    const { handlers, calls } = scripted({ result: 'unknown', output: '', error: new Error('no such container') });
    const prober = new Prober({ runner: nullRunner, recorder: rec, handlers });
    const c = containerWith('startup', execProbe);
    const verdict = await prober.probe('startup', podWith(c), emptyStatus, c, CONTAINER_ID);
    expect(calls()).toBe(3);
    expect(verdict).toEqual({ result: 'failure', error: new Error('no such container') });
    expect(rec.events.map((e) => [e.type, e.reason, e.message])).toEqual([
      ['Warning', 'Unhealthy', 'Startup probe errored and resulted in unknown state: no such container'],
    ]);
    expect(rec.events[0]?.ref.containerName).toBe('c');
  });

  it('stops retrying at the first attempt that did not error', async () => {
    let n = 0;
    const flaky = async (): Promise<ProbeOutcome> =>
      ++n === 1 ? { result: 'unknown', output: '', error: new Error('transient') } : { result: 'success', output: 'ok' };
    const rec = recorder();
    const prober = new Prober({ runner: nullRunner, recorder: rec, handlers: { exec: flaky } });
    const c = containerWith('readiness', execProbe);
    expect(await prober.probe('readiness', podWith(c), emptyStatus, c, CONTAINER_ID)).toEqual({ result: 'success' });
    expect(n).toBe(2);
    expect(rec.events).toEqual([]);
  });

  it('does not retry a failure and records `<Kind> probe failed: <output>`', async () => {
    const rec = recorder();
    const { handlers, calls } = scripted({ result: 'failure', output: 'HTTP probe failed with statuscode: 500' });
    const prober = new Prober({ runner: nullRunner, recorder: rec, handlers });
    const c = containerWith('liveness', httpProbe);
    await prober.probe('liveness', podWith(c), emptyStatus, c, CONTAINER_ID);
    expect(calls()).toBe(1);
    expect(rec.events.map((e) => `${e.type} ${e.reason} ${e.message}`)).toEqual([
      'Warning Unhealthy Liveness probe failed: HTTP probe failed with statuscode: 500',
    ]);
  });

  it('records a ProbeWarning for a warning and nothing for success or unknown-without-error', async () => {
    for (const [outcome, want] of [
      ['warning', ['Warning ProbeWarning Readiness probe warning: Probe terminated redirects, Response body: moved']],
      ['success', []],
      ['unknown', []],
    ] as const) {
      const rec = recorder();
      const output = outcome === 'warning' ? 'Probe terminated redirects, Response body: moved' : '';
      const prober = new Prober({ runner: nullRunner, recorder: rec, handlers: scripted({ result: outcome, output }).handlers });
      const c = containerWith('readiness', httpProbe);
      await prober.probe('readiness', podWith(c), emptyStatus, c, CONTAINER_ID);
      expect(rec.events.map((e) => `${e.type} ${e.reason} ${e.message}`)).toEqual(want);
    }
  });

  it('probeWithDetails tells the outcome and the event the verdict came from', async () => {
    const rec = recorder();
    const prober = new Prober({
      runner: nullRunner,
      recorder: rec,
      handlers: scripted({ result: 'failure', output: 'dial tcp 127.0.0.1:1: connect: connection refused' }).handlers,
    });
    const c = containerWith('readiness', tcpProbe);
    const details = await prober.probeWithDetails('readiness', podWith(c), emptyStatus, c, CONTAINER_ID);
    expect(details.outcome).toEqual({ result: 'failure', output: 'dial tcp 127.0.0.1:1: connect: connection refused' });
    expect(details.event).toEqual({
      type: 'Warning',
      reason: 'Unhealthy',
      message: 'Readiness probe failed: dial tcp 127.0.0.1:1: connect: connection refused',
    });
  });

  it('turns a throwing handler into an errored attempt instead of rejecting', async () => {
    const prober = new Prober({
      runner: nullRunner,
      handlers: {
        tcp: async () => {
          throw new Error('handler bug');
        },
      },
    });
    const c = containerWith('readiness', tcpProbe);
    const verdict = await prober.probe('readiness', podWith(c), emptyStatus, c, CONTAINER_ID);
    expect(verdict.result).toBe('failure');
    expect(verdict.error?.message).toBe('handler bug');
  });
});

describe('Prober.runProbe request building', () => {
  it('passes the pod IP, the resolved named port and timeoutSeconds × 1000 to the handlers', async () => {
    const calls: unknown[][] = [];
    const record =
      (name: string) =>
      async (...args: unknown[]): Promise<ProbeOutcome> => {
        calls.push([name, ...args]);
        return { result: 'success', output: '' };
      };
    const prober = new Prober({
      runner: nullRunner,
      handlers: { http: record('http'), tcp: record('tcp'), grpc: record('grpc') },
    });
    const c: Container = { name: 'c', ports: [{ name: 'web', containerPort: 8080 }] };
    const pod = podWith(c);
    const status: PodStatus = { podIP: '10.0.0.5' };
    await prober.runProbe('readiness', { tcpSocket: { port: 'web' }, timeoutSeconds: 2 }, pod, status, c, CONTAINER_ID);
    await prober.runProbe('readiness', { tcpSocket: { port: 81, host: 'db' }, timeoutSeconds: 1 }, pod, status, c, CONTAINER_ID);
    await prober.runProbe('readiness', { grpc: { port: 9000 }, timeoutSeconds: 5 }, pod, status, c, CONTAINER_ID);
    await prober.runProbe('readiness', { httpGet: { path: '/healthz', port: 'web', scheme: 'HTTP' }, timeoutSeconds: 3 }, pod, status, c, CONTAINER_ID);
    // Then the flight recorder's observation sink (none without a recorder), then whose probe
    // of which kind it is (the simulator's seam).
    const target = { probeType: 'readiness', pod, container: c, containerID: CONTAINER_ID };
    expect(calls[0]).toEqual(['tcp', '10.0.0.5', 8080, 2000, undefined, target]);
    expect(calls[1]).toEqual(['tcp', 'db', 81, 1000, undefined, target]);
    expect(calls[2]).toEqual(['grpc', '10.0.0.5', 9000, '', 5000, undefined, target]);
    expect(calls[3]?.[0]).toBe('http');
    expect((calls[3]?.[1] as { url: string }).url).toBe('http://10.0.0.5:8080/healthz');
    expect(calls[3]?.[2]).toBe(3000);
    expect(calls[3]?.[5]).toEqual(target);
  });

  it('tells a replacement handler the probe kind, pod, container and container ID it answers for', async () => {
    const seen: unknown[] = [];
    const prober = new Prober({
      runner: nullRunner,
      handlers: {
        exec: async (_runner, _id, _cmd, _timeout, _seen, target) => {
          seen.push(target);
          return { result: 'success', output: '' };
        },
      },
    });
    const c: Container = { name: 'c', livenessProbe: { exec: { command: ['true'] } } };
    const pod = podWith(c);
    await prober.probe('liveness', pod, {}, c, CONTAINER_ID);
    expect(seen).toEqual([{ probeType: 'liveness', pod, container: c, containerID: CONTAINER_ID }]);
  });

  it('dispatches in the order exec, httpGet, tcpSocket, grpc', async () => {
    const order: string[] = [];
    const mark =
      (name: string) =>
      async (): Promise<ProbeOutcome> => {
        order.push(name);
        return { result: 'success', output: '' };
      };
    const prober = new Prober({
      runner: nullRunner,
      handlers: { exec: mark('exec'), http: mark('http'), tcp: mark('tcp'), grpc: mark('grpc') },
    });
    const c: Container = { name: 'c' };
    const all: Probe = { exec: { command: ['x'] }, httpGet: { port: 1 }, tcpSocket: { port: 1 }, grpc: { port: 1 } };
    await prober.runProbe('liveness', all, podWith(c), emptyStatus, c, CONTAINER_ID);
    await prober.runProbe('liveness', { ...all, exec: undefined }, podWith(c), emptyStatus, c, CONTAINER_ID);
    await prober.runProbe('liveness', { tcpSocket: { port: 1 }, grpc: { port: 1 } }, podWith(c), emptyStatus, c, CONTAINER_ID);
    expect(order).toEqual(['exec', 'http', 'tcp']);
  });
});

describe('T31 new Prober', () => {
  it('keeps the runner and recorder it was given and wires the real handlers by default', async () => {
    const rec = recorder();
    const prober = new Prober({ runner: nullRunner, recorder: rec });
    expect(prober.runner).toBe(nullRunner);
    expect(prober.recorder).toBe(rec);
    // The default exec handler is the real one: a non-zero exit is a failure with the output.
    const runner: CommandRunner = { runInContainer: async () => ({ output: 'nope', exitCode: 3 }) };
    const real = new Prober({ runner, recorder: rec });
    const c = containerWith('readiness', execProbe);
    expect(await real.probe('readiness', podWith(c), emptyStatus, c, CONTAINER_ID)).toEqual({ result: 'failure' });
    expect(rec.events.at(-1)?.message).toBe('Readiness probe failed: nope');
    expect(probeExec).toBeTypeOf('function');
  });
});
