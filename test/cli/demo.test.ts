/**
 * The demo `npm start` runs (examples/demo/pod.yaml, from the repository root): it must
 * become Ready (sidecar TCP, app startup + HTTP readiness, worker exec readiness) and stop
 * cleanly on SIGTERM. Uses the demo's fixed ports 18573 and 18574.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { eventually, isAlive, liveProcesses } from '../helpers/processes.js';
import { REPO_ROOT, runCli } from './helpers.js';
import { exitCode, nothingLeft, scratch, startRun, type Scratch } from './run-child.js';

interface PodLine {
  type: string;
  pod?: {
    metadata?: { name?: string };
    status?: {
      conditions?: { type: string; status: string }[];
      containerStatuses?: { name: string; ready: boolean; restartCount: number }[];
      initContainerStatuses?: { name: string; ready: boolean }[];
    };
  };
  event?: { reason?: string; message?: string };
}

let s: Scratch;
beforeEach(() => {
  s = scratch();
});
afterEach(() => {
  s.cleanup();
});

const parse = (stdout: string): PodLine[] =>
  stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as PodLine);

const isReady = (line: PodLine): boolean =>
  line.type === 'pod' && (line.pod?.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

it('the demo pod becomes Ready within 30 s and stops cleanly on SIGTERM', async () => {
  // probelet carries the marker; the demo's containers (whose env the manifest fixes) are found as its children.
  const run = startRun(s, ['examples/demo/pod.yaml', '--listen', '127.0.0.1:0', '--output', 'json']);
  await run.waitForStdout((out) => parse(out).some(isReady), 30_000);

  const lines = parse(run.stdout());
  const ready = lines.find(isReady)?.pod?.status;
  expect(ready?.containerStatuses?.map((c) => [c.name, c.ready])).toEqual([
    ['app', true],
    ['worker', true],
  ]);
  expect(ready?.initContainerStatuses?.map((c) => [c.name, c.ready])).toEqual([['proxy', true]]);
  // The app's slow start was seen by its startup probe; the worker's exec probe waited for its file.
  const messages = lines.filter((l) => l.type === 'event').map((l) => `${l.event?.reason ?? ''}: ${l.event?.message ?? ''}`);
  expect(messages).toContain('Unhealthy: Startup probe failed: HTTP probe failed with statuscode: 503');
  expect(messages.some((m) => m.startsWith('Unhealthy: Readiness probe failed: cat: /tmp/probelet-demo-worker-ready'))).toBe(true);

  // The demo's processes: children of probelet (containers run in process groups of their own),
  // besides probelet's exec spawner (spawn/spawner.ts) and its supervisor (spawn/supervisor.ts).
  // Not the worker's exec probe (`cat …`, every 2 s), nor a child caught between its vfork and its
  // exec (it still shows probelet's own command line while it joins its cgroup).
  const pid = run.child.pid ?? -1;
  const own = liveProcesses().find((p) => p.pid === pid)?.cmdline;
  const containers = liveProcesses().filter(
    (p) =>
      p.ppid === pid &&
      !p.cmdline.includes('spawner-main') &&
      !p.cmdline.includes('probelet-supervisor') &&
      p.cmdline !== own &&
      !p.cmdline.startsWith('cat '),
  );
  expect(containers.map((p) => p.cmdline).sort()).toEqual([
    'node examples/demo/app.mjs',
    'node examples/demo/sidecar.mjs',
    'node examples/demo/worker.mjs',
  ]);

  run.child.kill('SIGTERM');
  expect(await exitCode(run, 20_000)).toBe(0);
  const stopped = parse(run.stdout())
    .filter((l) => l.type === 'event' && l.event?.reason === 'Killing')
    .map((l) => l.event?.message);
  expect(stopped).toEqual(expect.arrayContaining(['Stopping container app', 'Stopping container worker', 'Stopping container proxy']));
  expect(await nothingLeft(s.marker)).toBe(true);
  expect(await eventually(() => containers.every((p) => !isAlive(p.pid)), 3000)).toBe(true);
  // The worker removes its readiness file when it is stopped.
  expect(existsSync('/tmp/probelet-demo-worker-ready')).toBe(false);
}, 60_000);

it('the demo tells its whole story within its first 2 minutes: killed, restarted at once, then CrashLoopBackOff', async () => {
  // The behaviour script mirrors the app (test/simulate/reality.test.ts holds it to a real run):
  // its liveness phase is the pod's UNHEALTHY_AFTER_SECONDS, plus Node's boot.
  const pod = readFileSync('examples/demo/pod.yaml', 'utf8');
  const unhealthyAfter = /UNHEALTHY_AFTER_SECONDS, value: '(\d+)'/.exec(pod)?.[1];
  expect(readFileSync('examples/simulate/demo-behaviour.yaml', 'utf8')).toContain(`liveness: up:${unhealthyAfter ?? '?'}s500ms,fail`);
  const run = await runCli(['simulate', 'examples/demo/pod.yaml', '--behavior', 'examples/simulate/demo-behaviour.yaml', '--for', '2m']);
  expect(run.code).toBe(0);
  const rows = run.stdout.split('\n').filter((l) => /^\+\S+ +demo /.test(l));
  // Restarted at once (Running with RESTARTS 1) before it backs off, and backs off before 1m30s.
  expect(rows.some((r) => /Running +1 \(/.test(r))).toBe(true);
  const backOff = rows.find((r) => r.includes('CrashLoopBackOff'));
  expect(backOff, run.stdout).toMatch(/^\+(\d+s|1m[0-2]?\ds) /);
});

it('npm start: one Ctrl-C (SIGINT to its process group, as a terminal sends it) stops the demo gracefully and npm exits 0', async () => {
  // In a process group of its own, as a terminal's foreground job: npm, scripts/start.mjs and
  // probelet all get the SIGINT, and npm forwards its own to its child too. dist/ is fresh
  // (the suite builds first), so start.mjs does not rebuild.
  const npm = spawn('npm', ['start', '--', '--listen', '127.0.0.1:0'], { cwd: REPO_ROOT, env: s.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  npm.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  npm.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const exited = once(npm, 'close').then(([code]) => code as number | null);
  expect(await eventually(() => /^demo +3\/3 +Running/m.test(stdout), 45_000), `${stdout}\n${stderr}`).toBe(true);
  process.kill(-(npm.pid ?? 0), 'SIGINT');
  const timer = setTimeout(() => process.kill(-(npm.pid ?? 0), 'SIGKILL'), 30_000);
  const code = await exited;
  clearTimeout(timer);
  expect(stderr).toContain('SIGINT received: deleting every pod gracefully');
  expect(stderr).not.toContain('killing every container now');
  expect(code, `${stdout}\n${stderr}`).toBe(0);
  expect(stdout).toContain('Stopping container app');
  expect(await nothingLeft(s.marker)).toBe(true);
}, 90_000);
