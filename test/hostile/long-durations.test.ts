/**
 * Durations past 2^31 − 1 ms (24.8 days), which the apiserver accepts: Node's timers collapse
 * them to 1 ms (issue 21). One primitive (util/timer.ts) chains timers for any of them; the
 * real clock, the ticker, the prober's deadlines, the runtime's grace period and
 * `run --timeout` all go through it.
 */
import http from 'node:http';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { Ticker } from '../../src/prober/ticker.js';
import { createProcessRuntime } from '../../src/runtime/process-runtime.js';
import { FakeClock, realClock } from '../../src/util/clock.js';
import { MAX_TIMER_MS, clearLongTimeout, setLongTimeout } from '../../src/util/timer.js';
import { BIN, runCli } from '../cli/helpers.js';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';

/** Lets real time pass: long enough for a 1 ms timer (the collapsed delay) to have fired many times. */
const aMoment = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 100));

afterEach(() => {
  vi.useRealTimers();
});

describe('the timer primitive', () => {
  it('fires a delay of 3 × 2^31 ms once, when it is due, not before (Node timers faked)', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const fired: number[] = [];
    const start = performance.now();
    setLongTimeout(() => fired.push(performance.now() - start), 3 * MAX_TIMER_MS + 5);
    vi.advanceTimersByTime(3 * MAX_TIMER_MS + 4);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual([3 * MAX_TIMER_MS + 5]);
    vi.advanceTimersByTime(10 * MAX_TIMER_MS);
    expect(fired).toHaveLength(1);
  });

  it('a chained timer can be cleared between links; Infinity never fires; NaN and negatives are due now', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    let fired = 0;
    const handle = setLongTimeout(() => fired++, 2 * MAX_TIMER_MS);
    vi.advanceTimersByTime(MAX_TIMER_MS + 10);
    clearLongTimeout(handle);
    setLongTimeout(() => fired++, Infinity);
    vi.advanceTimersByTime(100 * MAX_TIMER_MS);
    expect(fired).toBe(0);
    setLongTimeout(() => fired++, Number.NaN);
    setLongTimeout(() => fired++, -5);
    vi.advanceTimersByTime(0);
    expect(fired).toBe(2);
  });

  it('realClock: 2^31 ms and a year do not fire at once (Node alone fires them after 1 ms)', async () => {
    let fired = 0;
    const handles = [realClock.setTimeout(() => fired++, 2 ** 31), realClock.setTimeout(() => fired++, 365 * 86_400_000)];
    await aMoment();
    for (const h of handles) realClock.clearTimeout(h);
    expect(fired).toBe(0);
  });

  it('FakeClock takes the same delays: a year is a year, NaN is now', async () => {
    const clock = new FakeClock();
    const at: number[] = [];
    clock.setTimeout(() => at.push(clock.now()), 365 * 86_400_000);
    clock.setTimeout(() => at.push(clock.now()), Number.NaN);
    await clock.advance(365 * 86_400_000);
    expect(at).toEqual([0, 365 * 86_400_000]);
  });
});

describe('durations past 2^31 ms in probes, kills and runs', () => {
  it('periodSeconds: 2147483647 does not tick in a hot loop on the real clock', async () => {
    let ticks = 0;
    const ticker = new Ticker(realClock, 2147483647 * 1000, () => ticks++);
    await aMoment();
    ticker.stop();
    expect(ticks).toBe(0);
  });

  it('timeoutSeconds: 2147484 waits for a slow answer instead of failing at once', async () => {
    const server = http.createServer((_req, res) => setTimeout(() => res.end('ok'), 300));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => void server.close());
    const port = (server.address() as { port: number }).port;
    const run = await runCli(['probe', '--http-get', `http://127.0.0.1:${port}/`, '--timeout', '2147484']);
    expect(run.stdout + run.stderr).not.toMatch(/timeout|deadline/i);
    expect(run.stdout).toMatch(/success/);
  });

  it('a grace period of 2^31 ms and more: SIGTERM, and no SIGKILL at once (the container finishes its shutdown: exit 0, not 137)', async () => {
    const runDir = realpathSync(mkdtempSync(join(tmpdir(), 'probelet-long-')));
    onTestFinished(() => rmSync(runDir, { recursive: true, force: true }));
    const runtime = createProcessRuntime({ runDir, hostname: 'node-a' });
    onTestFinished(() => runtime.close());
    // On SIGTERM it takes 200 ms to shut down, then exits 0: a SIGKILL 1 ms after SIGTERM comes first.
    const container = { name: 'app', image: 'x', command: ['sh', '-c', 'trap "sleep 0.2; exit 0" TERM; while :; do sleep 0.05; done'] };
    const pod: Pod = { metadata: { name: 'p', namespace: 'default', uid: 'u-long' }, spec: { containers: [container] } };
    const sandbox = await runtime.runPodSandbox(pod);
    const started = await runtime.startContainer(sandbox.id, pod, container, 0);
    await aMoment();
    // terminationGracePeriodSeconds is an int64: its largest value, in ms.
    await runtime.stopContainer(started.id, Number.MAX_SAFE_INTEGER * 1000);
    expect(runtime.containerStatus(started.id)).toMatchObject({ state: 'exited', exitCode: 0 });
  });

  it('run --timeout 600h keeps running (it stopped at once); Ctrl-C still stops it', async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'probelet-long-run-')));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'pod.yaml');
    writeFileSync(file, 'apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: app, image: x, command: [sleep, "60"]}]}\n');
    const child = spawn(process.execPath, [BIN, 'run', file, '--timeout', '600h', '--listen', '127.0.0.1:0', '--log-dir', join(dir, 'logs')], { stdio: ['ignore', 'pipe', 'pipe'] });
    onTestFinished(() => void child.kill('SIGKILL'));
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await expect.poll(() => output, { timeout: 15_000 }).toMatch(/Started/);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(child.exitCode).toBeNull();
    expect(output).not.toMatch(/--timeout 600h reached/);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(output).toMatch(/SIGINT received/);
  }, 30_000);
});
