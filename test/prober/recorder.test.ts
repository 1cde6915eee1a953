/**
 * The flight recorder's ring: wrap-around, limits, transitions, what the handlers saw, and
 * that it records nothing for idle workers. Workers run on a FakeClock with the scripted
 * prober, except where the handler's view is the point (a real HTTP server on 127.0.0.1).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Prober, type ProbeHandlers } from '../../src/prober/prober.js';
import type { ProbeOutcome } from '../../src/probe/types.js';
import { FlightRecorder, type RecorderEntry } from '../../src/prober/recorder.js';
import { LocalCommandRunner } from '../../src/probe/local-runner.js';
import { FakeClock, type Clock } from '../../src/util/clock.js';
import { TEST_CONTAINER_ID, TEST_POD_NAME, TEST_POD_UID, TEST_CONTAINER_NAME, fixturePod, makeEngine, runningStatus, testProbe, withStatus } from '../helpers/engine.js';

describe('flight recorder ring', () => {
  it('keeps the last `capacity` attempts, newest first, and counts all of them', async () => {
    const e = makeEngine({ flightRecorder: { capacity: 3 } });
    const w = e.newWorker('readiness');
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    for (let i = 0; i < 5; i++) {
      e.prober.result = i % 2 === 0 ? 'success' : 'failure';
      await w.doProbe();
      await e.clock.advance(1000);
    }
    const [history] = e.manager.flightRecorder?.histories() ?? [];
    expect(history?.total).toBe(5);
    expect(history?.failures).toBe(2);
    expect(history?.attempts.map((a) => a.seq)).toEqual([5, 4, 3]);
    expect(history?.attempts.map((a) => a.verdict)).toEqual(['success', 'failure', 'success']);
    expect(history).toMatchObject({ pod: TEST_POD_NAME, podUID: TEST_POD_UID, container: TEST_CONTAINER_NAME, probeType: 'readiness', handler: 'exec', timeoutSeconds: 1, periodSeconds: 1 });
  });

  it('wraps around more than once without losing order', async () => {
    const e = makeEngine({ flightRecorder: { capacity: 4 } });
    const w = e.newWorker('liveness');
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    for (let i = 0; i < 11; i++) {
      await w.doProbe();
      await e.clock.advance(10);
    }
    const [history] = e.manager.flightRecorder?.histories() ?? [];
    expect(history?.attempts.map((a) => a.seq)).toEqual([11, 10, 9, 8]);
    expect(history?.attempts.map((a) => a.start)).toEqual([1_000_100, 1_000_090, 1_000_080, 1_000_070]);
  });

  it('limit and filters pick rings and attempts', async () => {
    const e = makeEngine();
    const liveness = e.newWorker('liveness');
    const readiness = e.newWorker('readiness');
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    for (let i = 0; i < 4; i++) {
      await liveness.doProbe();
      await readiness.doProbe();
    }
    const recorder = e.manager.flightRecorder;
    expect(recorder?.histories().map((h) => h.probeType)).toEqual(['liveness', 'readiness']);
    expect(recorder?.histories({ probeType: 'readiness', limit: 2 }).map((h) => h.attempts.length)).toEqual([2]);
    expect(recorder?.histories({ pod: 'other' })).toEqual([]);
    expect(recorder?.histories({ container: TEST_CONTAINER_NAME, limit: 0 })[0]?.attempts).toEqual([]);
  });

  it('records verdict changes, the threshold crossing with the cached result, and kubelet actions', async () => {
    const e = makeEngine();
    const w = e.newWorker('liveness', testProbe({ failureThreshold: 3 }));
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    for (const result of ['success', 'failure', 'failure', 'failure'] as const) {
      e.prober.result = result;
      await w.doProbe();
      await e.clock.advance(1000);
    }
    const recorder = e.manager.flightRecorder;
    recorder?.noteAction(TEST_POD_UID, TEST_CONTAINER_NAME, 'liveness', 'Killing', 'Container c failed liveness probe, will be restarted');
    const [history] = recorder?.histories() ?? [];
    expect(history?.attempts.map((a) => [a.verdict, a.result])).toEqual([
      ['failure', 'failure'],
      ['failure', 'success'],
      ['failure', 'success'],
      ['success', 'success'],
    ]);
    expect(history?.transitions.map((t) => [t.kind, t.seq, t.from, t.to, t.reason])).toEqual([
      ['action', 4, undefined, undefined, 'Killing'],
      ['threshold', 4, 'success', 'failure', undefined],
      ['verdict', 2, 'success', 'failure', undefined],
    ]);
    expect(history?.transitions[1]?.message).toBe('failureThreshold 3 reached: result success → failure');
  });

  it('keeps only the last transitions per ring', async () => {
    const e = makeEngine();
    const w = e.newWorker('readiness');
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    for (let i = 0; i < 100; i++) {
      e.prober.result = i % 2 === 0 ? 'success' : 'failure';
      await w.doProbe();
    }
    const [history] = e.manager.flightRecorder?.histories() ?? [];
    expect(history?.transitions).toHaveLength(32);
    expect(history?.transitions[0]?.seq).toBe(100);
  });

  it('an errored attempt is recorded but neither counted nor a verdict change', async () => {
    const e = makeEngine();
    const w = e.newWorker('readiness');
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    await w.doProbe();
    e.prober.error = new Error('no such port');
    await w.doProbe();
    const [history] = e.manager.flightRecorder?.histories() ?? [];
    expect(history?.attempts[0]).toMatchObject({ errored: true, message: 'no such port', result: 'success' });
    expect(history?.errored).toBe(1);
    expect(history?.failures).toBe(0);
    expect(history?.transitions.map((t) => t.kind)).toEqual(['threshold']);
    expect(history?.firstSuccessAt).toBe(1_000_000);
  });

  it('records due time and lateness of a probe that overran its period', async () => {
    const e = makeEngine();
    e.prober.durationMs = 1500;
    const pod = withStatus(fixturePod('readiness', testProbe({ periodSeconds: 1, timeoutSeconds: 2 })), {});
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    e.manager.addPod(pod);
    await e.clock.advance(3100);
    const closing = e.manager.close();
    await e.clock.advance(2000);
    await closing;
    const attempts = e.manager.flightRecorder?.histories()[0]?.attempts.reverse() ?? [];
    expect(attempts.map((a) => [a.due - 1_000_000, a.start - 1_000_000, a.latenessMs, a.durationMs])).toEqual([
      [0, 0, 0, 1500],
      [1000, 1500, 500, 1500],
      [3000, 3000, 0, 1500],
    ]);
  });

  it('a tick whose timer fires a millisecond early is on time, not a period late', async () => {
    // Node runs timers on the event loop's monotonic clock, in whole ms: a tick can run while
    // Date.now() still reads 1 ms before it. Its probe was filed under the tick before, 999 ms
    // "late" (about 1 % of the probes of `npm run bench -- --scenario stream`).
    const fake = new FakeClock(1_000_000);
    const early: Clock = { now: () => fake.now(), setTimeout: (fn, ms) => fake.setTimeout(fn, Math.max(0, ms - 1)), clearTimeout: (h) => fake.clearTimeout(h) };
    const e = makeEngine({ clock: early });
    const pod = withStatus(fixturePod('readiness', testProbe({ periodSeconds: 1 })), {});
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    e.manager.addPod(pod);
    await fake.advance(3500);
    const closing = e.manager.close();
    await fake.advance(1000);
    await closing;
    const attempts = e.manager.flightRecorder?.histories()[0]?.attempts.reverse() ?? [];
    expect(attempts.map((a) => [a.due - 1_000_000, a.start - 1_000_000, a.latenessMs])).toEqual([
      [0, 0, 0],
      [1000, 999, 0],
      [2000, 1999, 0],
      [3000, 2999, 0],
    ]);
  });

  it('an idle worker holds no ring; none at all when disabled', async () => {
    const e = makeEngine();
    e.manager.addPod(fixturePod('liveness'));
    await e.clock.advance(5000);
    expect(e.manager.flightRecorder?.histories()).toEqual([]);
    await e.manager.close();

    const off = makeEngine({ flightRecorder: false });
    off.statuses.set(TEST_POD_UID, runningStatus(off.clock, { started: true }));
    await off.newWorker('liveness').doProbe();
    expect(off.manager.flightRecorder).toBeUndefined();
    expect(off.prober.calls).toHaveLength(1);
  });

  it('drops the oldest ring without a running worker beyond maxRings', () => {
    const recorder = new FlightRecorder(new FakeClock(), { maxRings: 2 });
    const info = (podUID: string) => ({ podUID, pod: podUID, namespace: 'default', container: 'c', probeType: 'liveness' as const, handler: 'exec' as const, periodSeconds: 1, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 1 });
    const a = recorder.ringFor(info('a'));
    recorder.ringFor(info('b'));
    recorder.ringFor(info('c'));
    expect(recorder.histories().map((h) => h.podUID)).toEqual(['a', 'b', 'c']);
    a.live = false;
    recorder.ringFor(info('d'));
    expect(recorder.histories().map((h) => h.podUID)).toEqual(['b', 'c', 'd']);
    recorder.forgetPod('c');
    expect(recorder.histories().map((h) => h.podUID)).toEqual(['b', 'd']);
  });

  it('forgetPod drops every ring of the pod (each container and kind), also after rings were dropped and made again', () => {
    const recorder = new FlightRecorder(new FakeClock(), { maxRings: 3 });
    const info = (podUID: string, container: string, probeType: 'liveness' | 'readiness') => ({ podUID, pod: podUID, namespace: 'default', container, probeType, handler: 'exec' as const, periodSeconds: 1, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 1 });
    recorder.ringFor(info('a', 'c1', 'liveness')).live = false;
    recorder.ringFor(info('a', 'c1', 'readiness'));
    recorder.ringFor(info('a', 'c2', 'liveness'));
    recorder.ringFor(info('b', 'c1', 'liveness')); // drops a/c1/liveness, the only idle ring
    recorder.ringFor(info('a', 'c1', 'liveness')); // made again
    const rings = () => recorder.histories().map((h) => `${h.podUID}/${h.container}/${h.probeType}`);
    expect(rings()).toEqual(['a/c1/readiness', 'a/c2/liveness', 'b/c1/liveness', 'a/c1/liveness']);
    recorder.forgetPod('a');
    expect(rings()).toEqual(['b/c1/liveness']);
    recorder.forgetPod('a');
    recorder.ringFor(info('a', 'c2', 'readiness'));
    expect(rings()).toEqual(['b/c1/liveness', 'a/c2/readiness']);
    recorder.forgetPod('b');
    expect(rings()).toEqual(['a/c2/readiness']);
  });

  it('attempts that saw the same message, body and headers as the last keep them right when they change, and a reader cannot alter what is kept', () => {
    const recorder = new FlightRecorder(new FakeClock(), { capacity: 10 });
    const ring = recorder.ringFor({ podUID: 'p', pod: 'p', namespace: 'default', container: 'c', probeType: 'readiness', handler: 'httpGet', periodSeconds: 1, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 });
    const answers: Array<[number, string, Record<string, string>]> = [
      [200, 'ok', { 'content-type': 'text/plain' }],
      [200, 'ok', { 'content-type': 'text/plain' }],
      [500, 'down', { 'content-type': 'text/plain', 'retry-after': '5' }],
      [200, 'ok', { 'content-type': 'text/plain' }],
      [200, 'ok', { 'content-type': 'application/json' }],
    ];
    for (const [i, [statusCode, body, headers]] of answers.entries()) {
      const slot = ring.begin(i * 1000, i * 1000, 'id');
      Object.assign(slot.seen, { statusCode, body, headers: { ...headers } });
      slot.outcome = statusCode === 200 ? { result: 'success', output: body } : { result: 'failure', output: `HTTP probe failed with statuscode: ${statusCode}` };
      ring.commit(slot, i * 1000 + 5, statusCode === 200 ? 'success' : 'failure', undefined, undefined, undefined);
    }
    const read = () => recorder.histories()[0]?.attempts.reverse().map((a) => [a.message, a.details?.body, a.details?.headers]);
    const want = answers.map(([code, body, headers]) => [code === 200 ? body : `HTTP probe failed with statuscode: ${code}`, body, headers]);
    expect(read()).toEqual(want);
    const first = recorder.histories()[0]?.attempts.at(-1);
    if (first?.details?.headers) first.details.headers['content-type'] = 'changed by a reader';
    expect(read()).toEqual(want);
  });

  it('refuses a capacity that is not a positive integer, naming the field', () => {
    expect(() => makeEngine({ flightRecorder: { capacity: 0 } })).toThrow('flightRecorder.capacity must be a positive integer, got 0');
  });

  it('listeners get copies of attempts and transitions; a throwing one harms nothing', async () => {
    const e = makeEngine();
    const w = e.newWorker('readiness');
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    const seen: RecorderEntry[] = [];
    const off = e.manager.flightRecorder?.subscribe((entry) => seen.push(entry));
    const offThrowing = e.manager.flightRecorder?.subscribe(() => {
      throw new Error('listener bug');
    });
    await w.doProbe();
    off?.();
    offThrowing?.();
    await w.doProbe();
    expect(seen.map((s) => s.kind)).toEqual(['attempt', 'transition']);
    expect(seen[0]?.kind === 'attempt' && seen[0].attempt.containerID).toBe(TEST_CONTAINER_ID);
    expect(e.manager.flightRecorder?.histories()[0]?.total).toBe(2);
  });
});

describe('flight recorder: what the handler saw (real prober, real targets)', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  it('HTTP: status code, headers and the body of a failed probe; the retry count', async () => {
    server = createServer((_req, res) => {
      res.writeHead(503, { 'Content-Type': 'text/html', 'Retry-After': '5' });
      res.end('<script>alert(1)</script> not yet');
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const clock = new FakeClock(1_000_000);
    const e = makeEngine({ prober: new Prober({ runner: new LocalCommandRunner(), clock }) });
    const w = e.newWorker('readiness', testProbe({ exec: undefined, httpGet: { host: '127.0.0.1', port, path: '/ready' } }));
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    await w.doProbe();
    const attempt = e.manager.flightRecorder?.histories()[0]?.attempts[0];
    expect(attempt).toMatchObject({
      attempt: 1,
      outcome: 'failure',
      verdict: 'failure',
      message: 'HTTP probe failed with statuscode: 503',
      details: { statusCode: 503, headers: { 'content-type': 'text/html', 'retry-after': '5' }, body: '<script>alert(1)</script> not yet' },
    });
  });

  it('TCP: the error code of a refused connection; exec: the exit code', async () => {
    server = createServer();
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    server = undefined;
    const e = makeEngine({ prober: new Prober({ runner: new LocalCommandRunner() }) });
    const tcp = e.newWorker('liveness', testProbe({ exec: undefined, tcpSocket: { host: '127.0.0.1', port } }));
    const exec = e.newWorker('readiness', testProbe({ exec: { command: ['sh', '-c', 'echo nope; exit 3'] } }));
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    await tcp.doProbe();
    await exec.doProbe();
    const [t, x] = e.manager.flightRecorder?.histories() ?? [];
    expect(t?.attempts[0]?.details).toEqual({ errorCode: 'ECONNREFUSED' });
    expect(t?.attempts[0]?.message).toContain('connect: connection refused');
    expect(x?.attempts[0]).toMatchObject({ details: { exitCode: 3 }, message: 'nope\n', outcome: 'failure' });
  });
});

describe('flight recorder: retries', () => {
  it('keeps what the attempt that counted saw, not what an errored try before it saw', async () => {
    let calls = 0;
    const tcp: ProbeHandlers['tcp'] = async (_host, _port, _timeout, seen) => {
      calls++;
      if (seen !== undefined && calls === 1) {
        seen.errorCode = 'ECONNRESET';
        return { result: 'unknown', output: '', error: new Error('read: connection reset by peer') };
      }
      if (seen !== undefined) seen.connectMs = 1;
      return { result: 'success', output: '' };
    };
    const unused = async (): Promise<ProbeOutcome> => ({ result: 'failure', output: 'not this handler' });
    const e = makeEngine({ prober: new Prober({ runner: new LocalCommandRunner(), handlers: { tcp, http: unused, grpc: unused, exec: unused } }) });
    const w = e.newWorker('liveness', testProbe({ exec: undefined, tcpSocket: { host: '127.0.0.1', port: 9 } }));
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    await w.doProbe();
    expect(calls).toBe(2);
    expect(e.manager.flightRecorder?.histories()[0]?.attempts[0]).toMatchObject({ outcome: 'success', details: { connectMs: 1 } });
    expect(e.manager.flightRecorder?.histories()[0]?.attempts[0]?.details).toEqual({ connectMs: 1 });
  });
});

describe('flight recorder: long texts', () => {
  it('keeps the first 1024 characters of a message', async () => {
    const e = makeEngine();
    const w = e.newWorker('readiness');
    e.statuses.set(TEST_POD_UID, runningStatus(e.clock, { started: true }));
    e.prober.error = new Error('x'.repeat(5000));
    await w.doProbe();
    expect(e.manager.flightRecorder?.histories()[0]?.attempts[0]?.message).toBe('x'.repeat(1024));
  });
});
