/**
 * `probelet run --runtime cri` as a real child process on containerd: the example
 * Deployment becomes Ready on its pod IP and is restarted by its liveness probe; Ctrl-C (graceful) and a second Ctrl-C (forced)
 * both leave nothing behind — no sandbox or container of the run in the CRI listings, no
 * container process, no pod network namespace (the signal scenario is every runtime's:
 * test/cli/run-signals.ts; the network namespace is checked here).
 */
import { readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { createCriClient } from '../../src/runtime/cri/client.js';
import { PID_LABEL } from '../../src/runtime/cri/pod-config.js';
import { exitCode, readyPod, scratch, startRun, type Scratch } from '../cli/run-child.js';
import { signalStop, type RunRuntime } from '../cli/run-signals.js';
import { CRI_ENDPOINT, describeCri } from './helpers.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/cri/deployment.yaml', import.meta.url));

let s: Scratch | undefined;
afterEach(() => {
  s?.cleanup();
  s = undefined;
});

/** What the CRI still lists for the probelet process `pid`. */
async function listedFor(pid: number): Promise<string[]> {
  const client = createCriClient(CRI_ENDPOINT);
  try {
    const filter = { label_selector: { [PID_LABEL]: String(pid) } };
    const { items } = await client.ListPodSandbox({ filter });
    const { containers } = await client.ListContainers({ filter });
    return [...items.map((x) => `sandbox ${x.id}`), ...containers.map((x) => `container ${x.id}`)];
  } finally {
    client.close();
  }
}

/** The /run/netns entries that are the network namespace of one of these processes. */
function netnsOf(pids: number[]): string[] {
  const inodes = new Set<number>();
  for (const pid of pids) {
    try {
      inodes.add(statSync(`/proc/${pid}/ns/net`).ino);
    } catch {
      // Gone meanwhile.
    }
  }
  let names: string[] = [];
  try {
    names = readdirSync('/run/netns');
  } catch {
    return [];
  }
  return names.filter((name) => {
    try {
      return inodes.has(statSync(`/run/netns/${name}`).ino);
    } catch {
      return false;
    }
  });
}

describeCri('cri: probelet run --runtime cri', () => {
  it('examples/cri/deployment.yaml: Ready on its pod IP, then a liveness kill and a restart, with the process runtime’s events', async () => {
    s = scratch();
    const run = startRun(s, [EXAMPLE, '--runtime', 'cri', '--cri-endpoint', CRI_ENDPOINT, '--listen', '127.0.0.1:0', '-o', 'json']);
    await run.waitForStdout((out) => readyPod(out) !== undefined, 20_000);
    expect(readyPod(run.stdout())?.status?.podIP).toMatch(/^169\.254\.\d+\.\d+$/);
    // /healthz disappears 20 s after start; two failed liveness probes 3 s apart → Killing → restart.
    await run.waitForStdout((out) => /"restartCount":1/.test(out) && eventMessages(out).includes('Container started (2)'), 45_000);
    const events = eventMessages(run.stdout());
    for (const expected of [
      'Container image "probelet.local/busybox:test" already present on machine and can be accessed by the pod',
      'Container created',
      'Container started',
      'Liveness probe failed: HTTP probe failed with statuscode: 404',
      'Container httpd failed liveness probe, will be restarted',
    ]) {
      expect(events).toContain(expected);
    }
    const pid = run.child.pid ?? 0;
    run.child.kill('SIGINT');
    expect(await exitCode(run, 20_000)).toBe(0);
    expect(await listedFor(pid)).toEqual([]);
  }, 75_000);

  const cri: RunRuntime = {
    args: (file) => [file, '--runtime', 'cri', '--cri-endpoint', CRI_ENDPOINT, '--listen', '127.0.0.1:0', '-o', 'json'],
    wwwVolume: false,
    leftIn: listedFor,
    whileReady: (_listed, containerPids) => {
      const netns = netnsOf(containerPids);
      expect(netns).toHaveLength(1);
      return () => expect(readdirSafe('/run/netns').filter((n) => netns.includes(n))).toEqual([]);
    },
    readyMs: 20_000,
    exitMs: 20_000,
  };
  for (const forced of [false, true]) {
    it(`${forced ? 'a second Ctrl-C (kill at once)' : 'Ctrl-C (graceful)'}: Ready on the pod IP, then no sandbox, container, process or netns left`, async () => {
      s = scratch();
      await signalStop(s, cri, 'SIGINT', forced);
    }, 40_000);
  }
});

/** Event messages of the JSON output, a repeat as `<message> (<count>)`. */
function eventMessages(stdout: string): string[] {
  const out: string[] = [];
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{"type":"event"')) continue;
    const { event } = JSON.parse(line) as { event: { message?: string; count?: number } };
    out.push((event.count ?? 1) > 1 ? `${event.message ?? ''} (${event.count ?? 1})` : (event.message ?? ''));
  }
  return out;
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
