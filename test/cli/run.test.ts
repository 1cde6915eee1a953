/**
 * `probelet run` end to end: the built executable as a child process, real containers
 * (local processes), real probes, real signals. Every test checks that nothing of its run
 * is left alive afterwards. `npm run build` first: bin/probelet.js runs dist/.
 */
import { existsSync, readdirSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseDuration, parseListen } from '../../src/cli/run/flags.js';
import { eventually } from '../helpers/processes.js';
import { runCli } from './helpers.js';
import { exitCode, nothingLeft, scratch, startRun, testPod, type Scratch } from './run-child.js';

const READY_NOW = { readinessProbe: { exec: { command: ['true'] }, periodSeconds: 1 } };
const NEVER_READY = { readinessProbe: { exec: { command: ['false'] }, periodSeconds: 1 } };
/** A container with a child of its own, so "nothing left" covers a whole process tree. */
const TREE = ['sh', '-c', 'sleep 300 & sleep 300'];

let s: Scratch;
beforeEach(() => {
  s = scratch();
});
afterEach(() => {
  s.cleanup();
});

/** Lines of the non-terminal view that are status rows of `pod`. */
function rows(stdout: string, pod: string): string[][] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith(`${pod} `))
    .map((line) => line.trim().split(/\s{2,}/));
}

describe('probelet run --exit-on-ready', () => {
  it('exits 0 once the pod is Ready, after printing the transition and deleting the pod', async () => {
    const file = s.manifest('pod.yaml', testPod(s, 'web', TREE, READY_NOW));
    const run = startRun(s, [file, '--listen', '127.0.0.1:0', '--exit-on-ready', '--timeout', '20s']);
    expect(await exitCode(run)).toBe(0);

    const table = rows(run.stdout(), 'web');
    const statuses = table.map(([, ready, status]) => `${ready ?? ''} ${status ?? ''}`);
    expect(statuses[0]).toMatch(/^0\/1 /);
    const readyAt = statuses.indexOf('1/1 Running');
    expect(readyAt).toBeGreaterThan(0);
    expect(statuses.slice(readyAt + 1)).toContain('1/1 Terminating');
    expect(run.stdout()).toMatch(/^NAME +READY +STATUS +RESTARTS +AGE$/m);
    expect(run.stdout()).toMatch(/^pod\/web\{main\} {2}Normal {2}Started {2}\d+s {2}kubelet {2}Container started$/m);
    expect(run.stderr()).toContain('every pod is Ready');

    // The temporary run directory was printed, and removed after this clean run.
    const runDir = /^Container logs: (.+)$/m.exec(run.stdout())?.[1] ?? '';
    expect(runDir.startsWith(s.dir)).toBe(true);
    expect(existsSync(runDir)).toBe(false);
    expect(run.stderr()).not.toContain('container logs kept');
    expect(await nothingLeft(s.marker)).toBe(true);
  });

  it('--log-dir writes the logs there and keeps them; --keep-logs keeps the temporary directory', async () => {
    const file = s.manifest('pod.yaml', testPod(s, 'web', TREE, READY_NOW));
    const logDir = `${s.dir}/logs/here`;
    const first = startRun(s, [file, '--listen', '127.0.0.1:0', '--exit-on-ready', '--timeout', '20s', '--log-dir', logDir]);
    expect(await exitCode(first)).toBe(0);
    expect(first.stdout()).toContain(`Container logs: ${logDir}\n`);
    expect(readdirSync(logDir)).toEqual([expect.stringMatching(/^default_web_/)]);

    const second = startRun(s, [file, '--listen', '127.0.0.1:0', '--exit-on-ready', '--timeout', '20s', '--keep-logs']);
    expect(await exitCode(second)).toBe(0);
    const runDir = /^Container logs: (.+)$/m.exec(second.stdout())?.[1] ?? '';
    expect(readdirSync(runDir)).toEqual([expect.stringMatching(/^default_web_/)]);
    expect(second.stderr()).toContain(`probelet: container logs kept in ${runDir}\n`);
    expect(await nothingLeft(s.marker)).toBe(true);
  });

  it('exits 1 when --timeout passes before the pod is Ready, after a graceful shutdown', async () => {
    const file = s.manifest('pod.yaml', testPod(s, 'slow', TREE, NEVER_READY));
    const started = Date.now();
    const run = startRun(s, [file, '--listen', '127.0.0.1:0', '--exit-on-ready', '--timeout', '3s']);
    expect(await exitCode(run)).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
    expect(run.stderr()).toContain('--timeout 3s reached before every pod was Ready');
    expect(rows(run.stdout(), 'slow').map((r) => r[1])).not.toContain('1/1');
    expect(run.stdout()).toContain('Readiness probe failed');
    // A failed run keeps its logs and says where they are.
    const runDir = /^Container logs: (.+)$/m.exec(run.stdout())?.[1] ?? '';
    expect(run.stderr()).toContain(`probelet: container logs kept in ${runDir}\n`);
    expect(readdirSync(runDir)).toEqual([expect.stringMatching(/^default_slow_/)]);
    expect(await nothingLeft(s.marker)).toBe(true);
  });

  it('exits 1 at once when a pod finishes without ever being Ready', async () => {
    const file = s.manifest('pod.yaml', testPod(s, 'job', ['true'], NEVER_READY, { restartPolicy: 'Never' }));
    const started = Date.now();
    const run = startRun(s, [file, '--listen', '127.0.0.1:0', '--exit-on-ready', '--timeout', '20s']);
    expect(await exitCode(run)).toBe(1);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(run.stderr()).toContain('pod job is Succeeded and will never be Ready');
    expect(await nothingLeft(s.marker)).toBe(true);
  });
});

describe('probelet run: bad input', () => {
  it('prints every field error of an invalid pod and starts nothing (exit 2)', async () => {
    const bad = testPod(s, 'bad', TREE, {
      livenessProbe: { exec: { command: ['true'] }, successThreshold: 2 },
      readinessProbe: { exec: { command: ['true'] }, terminationGracePeriodSeconds: 3 },
    });
    const noCommand = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'nocmd' }, spec: { containers: [{ name: 'c', image: 'x' }] } };
    const file = s.manifest('bad.yaml', bad, noCommand);
    const run = await runCli(['run', file, '--listen', '127.0.0.1:0']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Pod "bad" is invalid');
    expect(run.stderr).toContain('spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1');
    expect(run.stderr).toContain('spec.containers[0].readinessProbe.terminationGracePeriodSeconds');
    expect(run.stderr).toContain('Pod "nocmd" is invalid');
    expect(run.stderr).toContain('spec.containers[0].command: Required value');
    expect(run.stdout).toBe('');
    expect(await nothingLeft(s.marker, 500)).toBe(true);
  });

  it('runs the valid pods when only some are invalid', async () => {
    const bad = testPod(s, 'bad', TREE, { livenessProbe: { exec: { command: ['true'] }, successThreshold: 2 } });
    const good = testPod(s, 'good', TREE, READY_NOW);
    const file = s.manifest('pods.yaml', bad, good);
    const run = startRun(s, [file, '--listen', '127.0.0.1:0', '--exit-on-ready', '--timeout', '20s']);
    // Every pod that could run was Ready; the invalid one makes the code 2 (one rule for every command).
    expect(await exitCode(run)).toBe(2);
    expect(run.stderr()).toContain('spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1');
    expect(run.stderr()).toContain('probelet: 1 problem in the input (above): the other pods ran');
    expect(rows(run.stdout(), 'good').map((r) => `${r[1] ?? ''} ${r[2] ?? ''}`)).toContain('1/1 Running');
    expect(rows(run.stdout(), 'bad')).toEqual([]);
    expect(await nothingLeft(s.marker)).toBe(true);
  });

  it('reports every unreadable or broken document with its file and line, runs the good pods, and refuses bad flags (exit 2)', async () => {
    const good = s.manifest('good.yaml', testPod(s, 'good', TREE));
    const broken = s.manifest('broken.yaml', 'x');
    const deployment = s.manifest('deploy.yaml', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: {} });
    const service = s.manifest('svc.yaml', { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' } });
    const missing = `${s.dir}/missing.yaml`;
    // A path that cannot be read stops everything before it starts, whatever else is given.
    const unreadable = await runCli(['run', good, missing, '--listen', '127.0.0.1:0']);
    expect(unreadable.code).toBe(2);
    expect(unreadable.stderr).toBe(`probelet: ${missing}: cannot read: no such file or directory\nprobelet: nothing was started (fix the path above)\n`);
    expect(unreadable.stdout).toBe('');
    const none = await runCli(['run', broken, deployment, service, '--listen', '127.0.0.1:0']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`probelet: ${broken}:1:1: document 1: expected a Kubernetes object`);
    expect(none.stderr).toContain(`probelet: ${deployment}:5:1: document 1: Deployment "d" has no spec.template`);
    expect(none.stderr).toContain('probelet: skipped 1 object without a pod template (Service)');
    expect(none.stdout).toBe('');

    const mixed = await runCli(['run', good, broken, '--listen', '127.0.0.1:0', '--output', 'json', '--timeout', '1s']);
    expect(mixed.stderr).toContain(`probelet: ${broken}:1:1: document 1: expected a Kubernetes object`);
    expect(mixed.stdout).toContain('good');
    // The good pod ran; the dropped document still makes the run exit 2, as check does.
    expect(mixed.stderr).toContain('probelet: 1 problem in the input (above): the other pods ran');
    expect(mixed.code).toBe(2);

    for (const flags of [['--timeout', 'soon'], ['--timeout', '0s'], ['--listen', 'localhost'], ['--listen', '0.0.0.0:0'], ['--output', 'yaml']]) {
      const refused = await runCli(['run', good, ...flags]);
      expect(refused.code, flags.join(' ')).toBe(2);
      expect(refused.stderr, flags.join(' ')).not.toBe('');
      expect(refused.stdout, flags.join(' ')).toBe('');
    }
    expect(await nothingLeft(s.marker, 500)).toBe(true);
  });
});

describe('probelet run: a crashed container', () => {
  it('shows its exit code and last log lines beside the status, and keeps its log after a clean stop', async () => {
    const crash = testPod(s, 'crash', ['sh', '-c', 'echo starting; echo "fatal: no config at /etc/app.conf" >&2; exit 3'], {}, { restartPolicy: 'Never' });
    const file = s.manifest('crash.yaml', crash);
    const run = startRun(s, [file, '--listen', '127.0.0.1:0', '--timeout', '3s']);
    expect(await exitCode(run)).toBe(0);
    expect(run.stdout()).toContain('pod/crash{main}  exited with code 3 (Error); last lines of its log:\n    | starting\n    | fatal: no config at /etc/app.conf\n');
    // The run ended cleanly (--timeout), yet the crashed container's log is kept, and named.
    const kept = /probelet: container logs kept in (\S+)\n/.exec(run.stderr())?.[1] ?? '';
    expect(kept).not.toBe('');
    const path = /probelet: {3}crash\/main exited with code 3: (\S+)\n/.exec(run.stderr())?.[1] ?? '';
    expect(path.startsWith(kept)).toBe(true);
    expect(existsSync(path)).toBe(true);
    expect(await nothingLeft(s.marker)).toBe(true);
  });
});

describe('probelet run: output and API', () => {
  it('--output json streams one object per line: the run, pods and events', async () => {
    const file = s.manifest('pod.yaml', testPod(s, 'web', TREE, READY_NOW));
    const run = startRun(s, [file, '--listen', '127.0.0.1:0', '--output', 'json', '--exit-on-ready', '--timeout', '20s']);
    expect(await exitCode(run)).toBe(0);
    const objects = run
      .stdout()
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; pod?: PodLike; event?: { reason?: string; involvedObject?: { name?: string } }; url?: string });
    expect(objects[0]).toMatchObject({ type: 'run', url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });
    const pods = objects.filter((o) => o.type === 'pod').map((o) => o.pod);
    const events = objects.filter((o) => o.type === 'event').map((o) => o.event);
    expect(objects.every((o) => ['run', 'pod', 'event', 'probe', 'measurements'].includes(o.type))).toBe(true);
    expect(pods.every((p) => p?.metadata?.name === 'web')).toBe(true);
    expect(pods.some((p) => p?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))).toBe(true);
    expect(pods.some((p) => p?.metadata?.deletionTimestamp !== undefined)).toBe(true);
    expect(events.map((e) => e?.reason)).toEqual(expect.arrayContaining(['Created', 'Started', 'Killing']));
    expect(events.every((e) => e?.involvedObject?.name === 'web')).toBe(true);
    expect(await nothingLeft(s.marker)).toBe(true);
  });

  it('serves the API on the printed address; SIGTERM deletes the pods gracefully and exits 0', async () => {
    const file = s.manifest('pod.yaml', testPod(s, 'web', TREE, READY_NOW));
    const run = startRun(s, [file, '--listen', '127.0.0.1:0']);
    await run.waitForStdout((out) => /^web +1\/1 +Running/m.test(out));
    const url = /^Read-only API: (http:\/\/127\.0\.0\.1:\d+) /m.exec(run.stdout())?.[1] ?? '';
    const healthz = await fetch(`${url}/healthz`);
    expect([healthz.status, await healthz.text()]).toEqual([200, 'ok']);
    const list = (await (await fetch(`${url}/pods`)).json()) as { kind: string; items: PodLike[] };
    expect(list.kind).toBe('PodList');
    expect(list.items.map((p) => p.metadata?.name)).toEqual(['web']);
    const events = (await (await fetch(`${url}/events`)).json()) as { items: { reason: string }[] };
    expect(events.items.map((e) => e.reason)).toContain('Started');
    // The container's whole tree is running and tagged.
    expect(await nothingLeft(s.marker, 0)).toBe(false);

    run.child.kill('SIGTERM');
    expect(await exitCode(run)).toBe(0);
    expect(run.stderr()).toContain('SIGTERM received: deleting every pod gracefully');
    expect(run.stdout()).toMatch(/^web +\d\/1 +Terminating/m);
    expect(run.stdout()).toContain('Stopping container main');
    expect(await nothingLeft(s.marker)).toBe(true);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });

  it('a second Ctrl-C kills at once a pod that ignores SIGTERM (exit 130), leaving nothing', async () => {
    const stubborn = testPod(s, 'stubborn', ['sh', '-c', "trap '' TERM; sleep 300 & wait"], READY_NOW, {
      terminationGracePeriodSeconds: 60,
    });
    const run = startRun(s, [s.manifest('pod.yaml', stubborn), '--listen', '127.0.0.1:0']);
    await run.waitForStdout((out) => /^stubborn +1\/1 +Running/m.test(out));
    run.child.kill('SIGINT');
    await run.waitForStdout((out) => out.includes('Stopping container main'));
    const killedAt = Date.now();
    run.child.kill('SIGINT');
    expect(await exitCode(run)).toBe(130);
    expect(Date.now() - killedAt).toBeLessThan(10_000);
    expect(run.stderr()).toContain('killing every container now');
    expect(await nothingLeft(s.marker)).toBe(true);
  });

  it('stops gracefully when its output is closed (`probelet run … | head`), leaving nothing', async () => {
    // Never ready: an Unhealthy event (a line to write) every second, so the closed pipe is noticed.
    const run = startRun(s, [s.manifest('pod.yaml', testPod(s, 'web', TREE, NEVER_READY)), '--listen', '127.0.0.1:0', '--output', 'json']);
    await run.waitForStdout((out) => out.includes('"type":"pod"'));
    run.child.stdout?.destroy();
    expect(await exitCode(run)).toBe(0);
    expect(run.stderr()).toContain('the output was closed: deleting every pod gracefully');
    expect(run.stderr()).not.toContain('EPIPE');
    expect(await nothingLeft(s.marker)).toBe(true);
  });

  it('--timeout without --exit-on-ready stops the run after that long (exit 0)', async () => {
    const run = startRun(s, [s.manifest('pod.yaml', testPod(s, 'web', TREE, NEVER_READY)), '--listen', '127.0.0.1:0', '--timeout', '2s']);
    expect(await exitCode(run)).toBe(0);
    expect(run.stderr()).toContain('--timeout 2s reached');
    expect(existsSync(s.dir)).toBe(true);
    expect(await nothingLeft(s.marker)).toBe(true);
  });
});

describe('probelet run: the kubelet it behaves like', () => {
  it('has been running a while by default: the first probe of a 60 s period runs at once', async () => {
    const slowPeriod = { readinessProbe: { exec: { command: ['true'] }, periodSeconds: 60 } };
    const file = s.manifest('pod.yaml', testPod(s, 'web', TREE, slowPeriod));
    const run = startRun(s, [file, '--listen', '127.0.0.1:0', '--exit-on-ready', '--timeout', '10s']);
    expect(await exitCode(run)).toBe(0);
    // --kubelet-restart is accepted (its jitter is random, up to the period: not timed here).
    const restarted = startRun(s, [file, '--listen', '127.0.0.1:0', '--kubelet-restart', '--timeout', '1s']);
    expect(await exitCode(restarted)).toBe(0);
    expect(await nothingLeft(s.marker)).toBe(true);
  });

  it('in-process, handles SIGINT/SIGTERM only while it runs', async () => {
    const before = [process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')];
    const file = s.manifest('pod.yaml', testPod(s, 'web', TREE));
    const tmp = process.env.TMPDIR;
    process.env.TMPDIR = s.dir; // where the run directory goes
    const running = runCli(['run', file, '--listen', '127.0.0.1:0', '--timeout', '1s']).finally(() => {
      if (tmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmp;
    });
    expect(await eventually(() => process.listenerCount('SIGINT') === (before[0] ?? 0) + 1, 5000)).toBe(true);
    expect(process.listenerCount('SIGTERM')).toBe((before[1] ?? 0) + 1);
    const result = await running;
    expect(result.code, result.stderr).toBe(0);
    expect([process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')]).toEqual(before);
    expect(await nothingLeft(s.marker)).toBe(true);
  });
});

describe('flag values', () => {
  it('parses durations like kubectl: 30s, 2m, 1m30s, 500ms, plain seconds', () => {
    expect(parseDuration('30s', '--timeout')).toBe(30_000);
    expect(parseDuration('2m', '--timeout')).toBe(120_000);
    expect(parseDuration('1m30s', '--timeout')).toBe(90_000);
    expect(parseDuration('1h2m3s', '--timeout')).toBe(3_723_000);
    expect(parseDuration('500ms', '--timeout')).toBe(500);
    expect(parseDuration('45', '--timeout')).toBe(45_000);
    expect(parseDuration('1.5', '--timeout')).toBe(1500);
    for (const bad of ['', 's', '1x', '-5s', '0', '0s', '1m 30s', 'soon']) {
      expect(() => parseDuration(bad, '--timeout'), bad).toThrow(/--timeout/);
    }
  });

  it('parses listen addresses: HOST:PORT, [IPv6]:PORT, :PORT', () => {
    expect(parseListen('127.0.0.1:10255')).toEqual({ host: '127.0.0.1', port: 10255 });
    expect(parseListen('localhost:0')).toEqual({ host: 'localhost', port: 0 });
    expect(parseListen('[::1]:8080')).toEqual({ host: '::1', port: 8080 });
    expect(parseListen(':9000')).toEqual({ host: '127.0.0.1', port: 9000 });
    for (const bad of ['127.0.0.1', '127.0.0.1:', '127.0.0.1:65536', '::1:80', 'host:port']) {
      expect(() => parseListen(bad), bad).toThrow(/--listen/);
    }
  });
});

interface PodLike {
  metadata?: { name?: string; deletionTimestamp?: string };
  status?: { conditions?: { type: string; status: string }[] };
}
