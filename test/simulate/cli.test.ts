/**
 * `probelet simulate` as users call it: output shapes, determinism, bad input (exit 2), and
 * `--sweep` thresholds against the startup budget formula.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadManifests } from '../../src/api/documents.js';
import { podsOf } from '../../src/api/manifest.js';
import { setPodDefaults } from '../../src/api/defaults.js';
import { computeBudget, startupGuard, type TimeWindow } from '../../src/check/budgets.js';
import { BIN, REPO_ROOT, runCli } from '../cli/helpers.js';

const DEMO = 'examples/demo/pod.yaml';
const DEPLOYMENT = 'examples/simulate/deployment.yaml';
const dir = mkdtempSync(join(tmpdir(), 'probelet-simulate-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function manifest(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

interface Summary {
  type: 'summary';
  t: number;
  pods: {
    pod: string;
    namespace: string;
    readyAt: number | null;
    neverReady: string | null;
    containers: { name: string; readyAt: number | null; restarts: number; kills: { t: number; reason: string }[]; state: string; reason: string }[];
  }[];
}

function jsonLines(stdout: string): Record<string, unknown>[] {
  return stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('probelet simulate defaults and explanations', () => {
  const withInit = manifest(
    'init.yaml',
    `apiVersion: v1
kind: Pod
metadata: { name: web }
spec:
  initContainers:
    - { name: migrate, image: m:1 }
    - name: proxy
      image: p:1
      restartPolicy: Always
      startupProbe: { tcpSocket: { port: 15021 }, periodSeconds: 1 }
  containers:
    - name: app
      image: a:1
      readinessProbe: { httpGet: { path: /ready, port: 8080 }, periodSeconds: 5 }
`,
  );

  it('a plain init container completes by default (exit 0 after a moment) and the app containers start; a sidecar stays up', async () => {
    const run = await runCli(['simulate', withInit, '--for', '1m']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/ migrate +up:1s,exit\(0\) +\(no script given: an init container completes\)/);
    expect(run.stdout).toMatch(/ proxy +up +\(no script given: up from the start\)/);
    expect(run.stdout).toMatch(/^pod default\/web: Ready at \+\d+s$/m);
    expect(run.stdout).toMatch(/^ {2}migrate: .*, 0 restarts, now terminated \(Completed\)$/m);
    // A second after its start, which comes 1–2 s after the pod's (its sandbox: prober/start-latency.ts).
    expect(run.stdout).toContain('exited with code 0 at +3s (an init container completes by default)');
    expect(run.stdout).toMatch(/^ {2}proxy: ready at .*now running \(Ready\)$/m);
  });

  it('a pod never Ready says why in one line: which container, which state', async () => {
    const stuck = await runCli(['simulate', withInit, '-b', 'migrate=up', '--for', '1m']);
    expect(stuck.stdout).toContain('pod default/web: never Ready: init container "migrate" has not completed: still running at +1m0s (script up; an init container must exit 0 for the pod to go on)');
    const notReady = await runCli(['simulate', withInit, '-b', 'app.readiness=down', '--for', '1m']);
    expect(notReady.stdout).toContain("pod default/web: never Ready: container \"app\" is running, not ready: its readiness probe's script (down) still says `down` at +1m0s");
    const crashing = await runCli(['simulate', DEPLOYMENT, '-b', 'api=down:40s,up', '--for', '2m']);
    expect(crashing.stdout).toMatch(/pod default\/api\S*: never Ready: container "api" is (waiting \(CrashLoopBackOff\)|running, not ready) after \d restarts/);
  });

  it('a kill by hanging probes names the timeouts as the pace when they outlast the period', async () => {
    const hang = manifest(
      'hang.yaml',
      `apiVersion: v1
kind: Pod
metadata: { name: slowpoke }
spec:
  containers:
    - name: app
      image: a:1
      livenessProbe: { httpGet: { path: /healthz, port: 8080 }, periodSeconds: 5, timeoutSeconds: 10, failureThreshold: 3 }
`,
    );
    const run = await runCli(['simulate', hang, '-b', 'app=up:1m,hang', '--for', '2m']);
    expect(run.stdout).toContain('liveness failed 3 × timeout 10s back to back (the 10s timeouts, not the period 5s, set the pace) after initialDelay 0s');
    expect(run.stdout).not.toContain('3 × period 5s');
  });
});

describe('probelet simulate', () => {
  it('plays a slow-starting Deployment into a crash loop and explains each kill in numbers', async () => {
    const run = await runCli(['simulate', DEPLOYMENT, '-b', 'api=down:40s,up', '--for', '5m']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('+30s     pod/api{api}  Normal  Killing');
    // Restarted at once after the first four kills (the back-off measures from the exit before
    // the killed one, 30 s earlier, and its step is still shorter); CrashLoopBackOff from the fifth.
    // (The status shows it at the pod's next sync, a relist later.)
    expect(run.stdout).toMatch(/^\+2m3[01]s +api +0\/1 +CrashLoopBackOff/m);
    expect(run.stdout).not.toMatch(/^\+(1m0s|1m30s|2m0s) +api +0\/1 +CrashLoopBackOff/m);
    expect(run.stdout).toContain(
      // The first start comes 1–2 s after its worker (the sandbox), so its third probe at 28 s of age.
      'killed at +30s: liveness still `down` 28s after the container started (script down:40s,up), liveness failed 3 × period 10s after initialDelay 0s; a startupProbe with failureThreshold × period ≥ 50s would let it start',
    );
    expect(run.stdout).toMatch(/api: never ready, 6 restarts, now waiting \(CrashLoopBackOff\)/);
    // Kills at 30 s, 1m, 1m30s, 2m, 2m30s (restarted after the 40 s back-off and the pod worker's
    // jittered requeue, at 3m20s with seed 1), 3m50s (restarted at once: 80 s since the exit
    // before it, the step) and 4m20s (its restart due after 5m0s, the end).
    expect(run.stdout.match(/killed at \+/g)).toHaveLength(7);
    expect(run.stdout).toMatch(/^\+3m20s +pod\/api\{api\} +Normal +Started /m);
    expect(run.stdout).toContain('killed at +3m50s: liveness still `down` 30s after the container started');
    expect(run.stdout).toContain('killed at +4m20s: liveness still `down` 30s after the container started');
  });

  it('stamps each line on the clock its ages are read on: a row\'s AGE is its stamp, an event\'s "over" the stamps since its first; columns line up', async () => {
    // Seeds whose nodes' clocks fall at different phases of the second (a rounded stamp, or one
    // not on the node's clock, was a second off the ages beside it).
    for (const seed of ['1', '2', '3', '4']) {
      const run = await runCli(['simulate', DEPLOYMENT, '-b', 'api=down:40s,up', '--for', '1m10s', '--seed', seed]);
      expect(run.code).toBe(0);
      const seconds = (text: string): number => [...text.matchAll(/(\d+)([hms])/g)].reduce((n, [, v, u]) => n + Number(v) * (u === 'h' ? 3600 : u === 'm' ? 60 : 1), 0);
      const lines = run.stdout.split('\n').filter((l) => l.startsWith('+'));
      const header = lines.find((l) => l.includes('NAME   READY'));
      expect(header).toBeDefined();
      const columns = ['READY', 'STATUS', 'RESTARTS', 'AGE'].map((c) => (header ?? '').indexOf(c));
      const firstSeen = new Map<string, number>();
      let rows = 0;
      let overs = 0;
      for (const line of lines) {
        const at = seconds(line.slice(0, line.indexOf(' ')));
        if (/^\+\S+ +api +\d\/\d /.test(line)) {
          rows++;
          // Every cell starts under its header.
          for (const c of columns) expect(line.slice(c - 1, c + 1), `seed ${seed}: ${line}`).toMatch(/^ \S/);
          expect(seconds(line.slice(columns[3])), `seed ${seed}: ${line}`).toBe(at);
          continue;
        }
        const event = /^\+\S+ +(pod\/\S+ +\S+ +\S+) +(\S+)(?: \(x\d+ over (\S+)\))? +kubelet +(.*)$/.exec(line);
        if (!event) continue;
        const key = `${event[1]} ${event[4]}`;
        expect(event[2], `seed ${seed}: ${line}`).toBe('0s');
        if (event[3] === undefined) firstSeen.set(key, at);
        else {
          overs++;
          expect(seconds(event[3]), `seed ${seed}: ${line}`).toBe(at - (firstSeen.get(key) ?? NaN));
        }
      }
      expect(rows).toBeGreaterThanOrEqual(3);
      expect(overs).toBeGreaterThanOrEqual(10);
    }
  });

  it('says which containers have no script (they are up from the start)', async () => {
    const run = await runCli(['simulate', DEMO, '-b', 'app=down:5s,up', '--for', '10s']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/ proxy +up +\(no script given: up from the start\)/);
    expect(run.stdout).toMatch(/ app +down:5s,up\n/);
  });

  it('prints the run JSON lines stamped with t, then the summary line in its documented shape', async () => {
    const run = await runCli(['simulate', DEPLOYMENT, '-b', 'api=down:40s,up', '--for', '2m', '-o', 'json']);
    expect(run.code).toBe(0);
    const lines = jsonLines(run.stdout);
    expect(lines[0]?.['type']).toBe('simulate');
    const body = lines.slice(1, -1);
    expect(body.length).toBeGreaterThan(5);
    for (const line of body) {
      expect(['pod', 'containerStatus', 'event']).toContain(line['type']);
      expect(Object.keys(line).slice(0, 2)).toEqual(['type', 't']);
      expect(typeof line['t']).toBe('number');
    }
    const summary = lines.at(-1) as unknown as Summary;
    expect(Object.keys(summary)).toEqual(['type', 't', 'pods']);
    expect(summary).toEqual({
      type: 'summary',
      t: 120,
      pods: [
        {
          pod: 'api',
          namespace: 'default',
          readyAt: null,
          // The text summary's reason, word for word.
          neverReady: 'container "api" is running, not ready after 3 restarts: its readiness probe\'s script (down:40s,up) still says `down` at +2m0s',
          containers: [
            {
              name: 'api',
              readyAt: null,
              restarts: 3,
              kills: [
                { t: 30, reason: 'Container api failed liveness probe, will be restarted' },
                { t: 60, reason: 'Container api failed liveness probe, will be restarted' },
                { t: 90, reason: 'Container api failed liveness probe, will be restarted' },
                { t: 120, reason: 'Container api failed liveness probe, will be restarted' },
              ],
              // Killed at 2m0s sharp; its restart (at once) starts a fraction of a second later (δ).
              state: 'running',
              reason: 'NotReady',
            },
          ],
        },
      ],
    });
  });

  it('the JSON summary carries the text summary\'s never-Ready reason, and null for a pod that was Ready', async () => {
    const args = ['simulate', DEPLOYMENT, '-b', 'api=down:40s,up', '--for', '2m'];
    const text = await runCli(args);
    const json = jsonLines((await runCli([...args, '-o', 'json'])).stdout).at(-1) as unknown as Summary;
    expect(text.stdout).toContain(`pod default/api: never Ready: ${json.pods[0]?.neverReady ?? 'missing'}\n`);
    const ready = jsonLines((await runCli(['simulate', DEPLOYMENT, '-b', 'api=down:5s,up', '--for', '1m', '-o', 'json'])).stdout).at(-1) as unknown as Summary;
    expect(ready.pods[0]?.readyAt).not.toBeNull();
    expect(ready.pods[0]?.neverReady).toBeNull();
  });

  it('is deterministic: the same inputs and seed give byte-identical output (table and JSON, with jitter)', async () => {
    for (const extra of [[], ['-o', 'json'], ['--kubelet-restart', '--seed', '42']]) {
      const args = ['simulate', DEMO, '-b', 'app=down:5s,up:25s,fail', '--for', '3m', ...extra];
      const a = await runCli(args);
      const b = await runCli(args);
      expect(a.code).toBe(0);
      expect(a.stdout).toBe(b.stdout);
      expect(a.stdout.length).toBeGreaterThan(1000);
    }
    // The seed does matter once the kubelet jitters its first probes.
    const s1 = await runCli(['simulate', DEMO, '--kubelet-restart', '--seed', '1', '--for', '30s']);
    const s2 = await runCli(['simulate', DEMO, '--kubelet-restart', '--seed', '2', '--for', '30s']);
    expect(s1.stdout).not.toBe(s2.stdout);
  });

  it.each([
    [['-b', 'app=dwn:5s,up'], '-b app=dwn:5s,up: unknown state "dwn": the states are down, up, fail, fail(HTTP status), hang, slow(D), redirect(URL), exit(N)'],
    [['-b', 'app=down:5x,up'], '-b app=down:5x,up: bad duration "5x" in phase "down:5x": use a positive duration such as 30s, 1m30s or 500ms'],
    [['-b', 'app=down,up'], '-b app=down,up: phase "down" needs a duration (only the last phase lasts for ever): e.g. down:30s'],
    [['-b', 'web=up'], '-b web=up: no container "web" in pod demo (containers: proxy, app, worker)'],
    [['-b', 'app.ready=up'], '-b app.ready=up: unknown probe "ready": write app.liveness, app.readiness or app.startup'],
    [['-b', 'app.liveness=exit(1)'], "-b app.liveness=exit(1): exit(N) ends the container, not a probe: put it in the container's script (-b app=…)"],
    [['-b', 'app=slow(x)'], '-b app=slow(x): bad duration in "slow(x)": write slow(D) with D such as 2s or 500ms'],
    [['-b', 'app'], '--behaviour app: no such file, and not CONTAINER[.PROBE]=SCRIPT: give a behaviour file that exists or e.g. -b app=down:30s,up'],
    [['--for', 'soon'], '--for: invalid duration "soon"'],
    [['--sweep', 'app=10s..1m'], '--sweep app=10s..1m: write --sweep CONTAINER=FROM..TO/STEP'],
    [['--sweep', 'app=10s..1m/10s'], "--sweep app=10s..1m/10s: the sweep varies the first phase of app's script, which needs at least two phases"],
    [['-b', 'app=down:5s,up', '--sweep', 'app=1s..2h/1s'], '--sweep app=1s..2h/1s: 7200 values to try, at most 1000: use a larger STEP (e.g. /8s) or a shorter range'],
  ])('bad input %j → exit 2 naming the flag and the fix', async (args, message) => {
    const run = await runCli(['simulate', DEMO, ...args]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`probelet: ${message}`);
    expect(run.stdout).toBe('');
  });

  it('reads behaviours from --behavior FILE (flags win) and rejects bad files with exit 2', async () => {
    const file = manifest('behaviour.yaml', 'app: down:20s,up\nworker:\n  readiness: down\n  sigterm: ignore\n');
    const run = await runCli(['simulate', DEMO, '--behavior', file, '--for', '1m', '-o', 'json']);
    expect(run.code).toBe(0);
    const summary = jsonLines(run.stdout).at(-1) as unknown as Summary;
    const containers = summary.pods[0]?.containers ?? [];
    expect(containers.find((c) => c.name === 'worker')?.readyAt).toBeNull();
    // down:20s from its start, which comes after its sidecar's, a relist later, and after the
    // pod's sandbox (prober/start-latency.ts).
    expect(containers.find((c) => c.name === 'app')?.readyAt).toBe(22);

    const bad = manifest('bad.yaml', 'app:\n  script: hop\n');
    const refused = await runCli(['simulate', DEMO, '--behavior', bad]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`probelet: --behaviour ${bad}: app.script: unknown state "hop"`);
  });

  it.each([
    ['the demo pod for 24 h', [DEMO, '--behavior', 'examples/simulate/demo-behaviour.yaml', '--for', '24h']],
    ['230 pods on three nodes for 1 h', ['MANY', '--for', '1h']],
  ])('stops quietly, exit 0, when its output is closed (`probelet simulate … | head`): %s', async (_name, args) => {
    const many = manifest(
      'many.yaml',
      Array.from({ length: 230 }, (_, i) => `apiVersion: v1\nkind: Pod\nmetadata: { name: web-${i} }\nspec:\n  containers:\n    - name: app\n      image: nginx\n      readinessProbe: { tcpSocket: { port: 80 }, periodSeconds: 5 }\n`).join('---\n'),
    );
    // The built command as its own process: far more output than a pipe holds.
    const child = spawn(process.execPath, [BIN, 'simulate', ...args.map((a) => (a === 'MANY' ? many : a))], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.stdout.once('data', () => child.stdout.destroy());
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const [code] = (await once(child, 'close')) as [number | null];
    clearTimeout(killer);
    expect(stderr).not.toContain('EPIPE');
    expect(code).toBe(0);
  });

  it('--threads: pods on three nodes print the same with --threads 1 as planned by default; a bad count exits 2', async () => {
    const many = manifest(
      'many-threads.yaml',
      Array.from({ length: 230 }, (_, i) => `apiVersion: v1\nkind: Pod\nmetadata: { name: web-${i} }\nspec:\n  containers:\n    - name: app\n      image: nginx\n      livenessProbe: { httpGet: { path: /, port: 80 }, periodSeconds: 5 }\n`).join('---\n'),
    );
    const args = ['simulate', many, '-b', 'app=up:1m,fail', '--for', '3m', '-o', 'json'];
    // One thread and the default plan (threads only for big work; this is small) give the same
    // output; that any number of threads does is tested at the API (nodes.test.ts), where the
    // threads of a source checkout cost less of the CPU the other test files share.
    const one = await runCli([...args, '--threads', '1']);
    const planned = await runCli(args);
    expect(one.code).toBe(0);
    expect(one.stderr).toBe('');
    expect((jsonLines(one.stdout).at(-1) as unknown as Summary).pods).toHaveLength(230);
    expect(planned.stdout).toBe(one.stdout);
    // The table's first line counts them rather than naming 230 pods.
    const table = await runCli(['simulate', many, '--for', '10s']);
    expect(table.stdout.split('\n')[0]).toBe('Simulating 230 pods (web-0 … web-229) on 3 nodes of up to 110 for 10s of virtual time (seed 1); behaviours:');
    for (const bad of ['0', '-1', '1.5', 'two']) {
      const refused = await runCli([...args, '--threads', bad]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`probelet: --threads: expected a whole number from 1 (e.g. --threads 1 for the least memory), got "${bad}"`);
    }
  });

  it('says so in one line, exit 1, when its output cannot be written (a full disk: /dev/full)', async () => {
    const full = openSync('/dev/full', 'w');
    try {
      const child = spawn(process.execPath, [BIN, 'simulate', DEMO, '--for', '1h'], { cwd: REPO_ROOT, stdio: ['ignore', full, 'pipe'] });
      let stderr = '';
      child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr += text));
      const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const [code] = (await once(child, 'close')) as [number | null];
      clearTimeout(killer);
      expect(stderr).toBe('probelet: writing the output failed: ENOSPC: no space left on device, write\n');
      expect(code).toBe(1);
    } finally {
      closeSync(full);
    }
  });

});

/**
 * `check`'s budgets for the manifest's one container: `startupBudgetSeconds` (the longest
 * start-up that can survive, in the most favourable phase of the probe's ticks) and the
 * start-up that always survives, whatever the phase.
 */
async function checkBudgets(file: string): Promise<{ budget: number | null; alwaysSurvives: number | undefined; firstStartKill: TimeWindow | undefined }> {
  const load = await loadManifests([file]);
  const [found] = podsOf(load.objects).pods;
  if (!found) throw new Error(`no pod in ${file}`);
  const pod = setPodDefaults(found.pod);
  const container = pod.spec?.containers[0];
  if (!container) throw new Error(`no container in ${file}`);
  return {
    budget: computeBudget(found.object, pod, container, 'container').startupBudgetSeconds,
    alwaysSurvives: startupGuard(container)?.alwaysSurvivesSeconds,
    firstStartKill: startupGuard(container)?.firstStartKill,
  };
}

describe('the advice of a kill explanation', () => {
  it.each([
    // The ticker starts δ before the container: the 4th probe comes at 40 s − δ, still down.
    [5, 0, 50],
    [4, 1, null],
  ])('a startupProbe of %i × 10s for a 40 s start-up: %i kills, ready at %s', async (failureThreshold, kills, readyAt) => {
    const file = manifest(
      `advice-${failureThreshold}.yaml`,
      readFileSync(DEPLOYMENT, 'utf8').replace(
        '          livenessProbe:',
        `          startupProbe:\n            httpGet: { path: /healthz, port: http }\n            periodSeconds: 10\n            failureThreshold: ${failureThreshold}\n          livenessProbe:`,
      ),
    );
    const run = await runCli(['simulate', file, '-b', 'api=down:40s,up', '--for', '60s', '-o', 'json']);
    expect(run.code).toBe(0);
    const api = (jsonLines(run.stdout).at(-1) as unknown as Summary).pods[0]?.containers[0];
    expect(api?.kills.length).toBe(kills);
    expect(api?.readyAt).toBe(readyAt);
  });
});

describe('probelet simulate --sweep', () => {
  it('takes fractional durations (1.5s..2.5s/0.5s) and plain seconds', async () => {
    const run = await runCli(['simulate', DEMO, '-b', 'app=down:5s,up', '--for', '30s', '--sweep', 'app=1.5s..2.5s/0.5s', '-o', 'json']);
    expect(run.stderr).toBe('');
    expect(jsonLines(run.stdout).filter((l) => l['type'] === 'sweep').map((l) => l['value'])).toEqual([1.5, 2, 2.5]);
    const plain = await runCli(['simulate', DEMO, '-b', 'app=down:5s,up', '--for', '30s', '--sweep', 'app=1..2/0.5', '-o', 'json']);
    expect(jsonLines(plain.stdout).filter((l) => l['type'] === 'sweep').map((l) => l['value'])).toEqual([1, 1.5, 2]);
  });

  it.each([
    { initialDelaySeconds: 0, failureThreshold: 3, periodSeconds: 10 },
    { initialDelaySeconds: 0, failureThreshold: 5, periodSeconds: 3 },
    { initialDelaySeconds: 15, failureThreshold: 1, periodSeconds: 10 },
    { initialDelaySeconds: 5, failureThreshold: 4, periodSeconds: 5 },
  ])('the threshold agrees with check\'s startup budget for the liveness probe %j', async (liveness) => {
    const file = manifest(
      `sweep-${liveness.initialDelaySeconds}-${liveness.failureThreshold}-${liveness.periodSeconds}.yaml`,
      `apiVersion: apps/v1
kind: Deployment
metadata: { name: web }
spec:
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      containers:
        - name: web
          image: web:1
          readinessProbe:
            httpGet: { path: /ready, port: 8080 }
            periodSeconds: 1
          livenessProbe:
            httpGet: { path: /healthz, port: 8080 }
            initialDelaySeconds: ${liveness.initialDelaySeconds}
            failureThreshold: ${liveness.failureThreshold}
            periodSeconds: ${liveness.periodSeconds}
`,
    );
    // The first start is tied to the worker's ticker (δ after it): it is killed inside check's
    // firstStartKill window, itself inside the bounds of any phase; every δ of the range gives
    // the same whole-second threshold.
    const { budget: checkBudget, alwaysSurvives, firstStartKill } = await checkBudgets(file);
    const earliest = firstStartKill?.earliestSeconds ?? NaN;
    const threshold = Math.ceil(earliest);
    expect(Math.ceil(firstStartKill?.latestSeconds ?? NaN)).toBe(threshold);
    expect(earliest).toBeGreaterThanOrEqual(alwaysSurvives ?? Infinity);
    expect(firstStartKill?.latestSeconds).toBeLessThanOrEqual(checkBudget ?? -Infinity);
    const p = liveness.periodSeconds;
    // (⌊D/P⌋ + F) × P − δ: an initialDelaySeconds that is a multiple of the period costs a period
    // more, and a first start's δ (its sandbox: 1–2 s, FIRST_START_LATENCY) a second less.
    expect(threshold).toBe((Math.floor(liveness.initialDelaySeconds / p) + liveness.failureThreshold) * p - 1);
    const budget = threshold - 1;
    const run = await runCli(['simulate', file, '-b', 'web=down:1s,up', '--for', '5m', '--sweep', `web=${budget - 5}s..${budget + 5}s/1s`, '-o', 'json']);
    expect(run.code).toBe(0);
    const lines = jsonLines(run.stdout);
    expect(lines.filter((l) => l['type'] === 'sweep')).toHaveLength(11);
    expect(lines.at(-1)).toEqual({ type: 'threshold', value: budget + 1 });
    const ok = lines.find((l) => l['value'] === budget);
    expect(ok).toMatchObject({ type: 'sweep', restarts: 0, state: 'running' });
    // Ready at the first readiness probe (1 s period) after the app is up, δ (a first start's:
    // under 2 s) and a relist after the start.
    expect(ok?.['readyAt']).toBeGreaterThanOrEqual(budget);
    expect(ok?.['readyAt']).toBeLessThanOrEqual(budget + 3);
  });

  it('prints a row per value and the threshold line', async () => {
    const run = await runCli(['simulate', DEPLOYMENT, '-b', 'api=down:40s,up', '--for', '10m', '--sweep', 'api=10s..60s/10s']);
    expect(run.code).toBe(0);
    // Liveness 3 × 10s: its third probe comes at 30 s − δ after the start (the ticker runs ahead;
    // a first start's δ, with its sandbox, is 1–2 s).
    expect(run.stdout).toMatch(/^20s +\+24s +0 +running \(Ready\)$/m);
    // 30 s: killed at first; a restart after a back-off starts at any phase of the ticks and can
    // live (its first probe up to a relist past a period: docs/timing-model.md §4). Seed 1: Ready after 5.
    expect(run.stdout).toMatch(/^30s +\+3m52s +5 +running \(Ready\)$/m);
    expect(run.stdout).toMatch(/^40s +never +\d+ +waiting \(CrashLoopBackOff\)$/m);
    // Two thresholds, as the table shows: 30 s is restarted yet ends Ready; 40 s never is.
    expect(run.stdout).toContain('api is restarted when its start-up takes ≥ 30s\napi is never Ready in 10m0s when its start-up takes ≥ 40s\n');
    expect(run.stdout).not.toContain('crash-looping');
  });
});
