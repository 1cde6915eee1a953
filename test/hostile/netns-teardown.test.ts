/**
 * No pod network namespace outlives the private containerd (`npm run cri:up`/`cri:down`):
 * (1) `ip netns add` — podman does the same — run after a sandbox was made binds /run/netns
 * over itself, the sandbox's netns is then mounted twice, and containerd's StopPodSandbox
 * fails ("remove netns: unlinkat …: device or resource busy"): 54 netns were left so on a dev
 * machine; (2) containerd killed between stopping a sandbox and removing its netns, which
 * leaves a netns that no running task names either. Either way `cri-down` must leave nothing of the instance behind: no netns
 * (file or mount), directory, bridge or process.
 *
 * All of it runs in a mount namespace of this test's own (a process of `unshare -m` holds it,
 * each step enters it), whose /run/netns starts as a fresh machine's — no mount point, no
 * netns mounted — so that the machine's own /run/netns and the netns of other runtimes are
 * never touched; the netns files are on the disk all share, so "left" is seen from outside.
 * A containerd instance of the test's own (`cri-up.sh --name …`), never the shared one.
 *
 * Needs root, containerd, unshare and nsenter; skipped with the reason in its name otherwise,
 * failing instead under PROBELET_REQUIRE_CRI=1. PROBELET_HOSTILE_NETNS_INSTANCE names the instance.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createCriClient } from '../../src/runtime/cri/client.js';
import { describeCri, ownContainerdUnavailable } from '../cri/helpers.js';

const SCRIPTS = fileURLToPath(new URL('../../scripts/', import.meta.url));
const INSTANCE = process.env.PROBELET_HOSTILE_NETNS_INSTANCE ?? 'netns-left';
/** cri-instance.sh's directory of a named instance (PROBELET_CRI_DIR unset). */
const INSTANCE_DIR = `/tmp/probelet-cri-${INSTANCE}`;

/** Undoes, in the new mount namespace only, /run/netns's mount and every netns mounted in it (lazily: nested ones go with it). */
const FRESH_NETNS_DIR = `
for _ in 1 2 3 4; do
  umount -l /run/netns 2>/dev/null
  for m in $(awk '$2 ~ "^/run/netns/" { print $2 }' /proc/self/mounts); do umount -l "$m" 2>/dev/null; done
done
awk '$2 == "/run/netns" || $2 ~ "^/run/netns/" { bad = 1 } END { exit bad }' /proc/self/mounts && echo ready
exec sleep 3600`;

let holder: ChildProcess | undefined;
/** Every netns file a sandbox of this test had: removed by hand at the end should a check fail. */
const made = new Set<string>();

/** `script` run by bash in the test's mount namespace; its stdout. */
function inNs(script: string): string {
  try {
    return execFileSync('nsenter', [`--mount=/proc/${holder?.pid ?? 0}/ns/mnt`, 'bash', '-c', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    throw new Error(`${script}: ${(err as { stderr?: string }).stderr ?? String(err)}`);
  }
}

/** The netns mounted in /run/netns of the test's mount namespace: only the instance's (the namespace is private). */
function mountedNetns(): string[] {
  return inNs(`awk '$2 ~ "^/run/netns/" { print $2 }' /proc/self/mounts`).split('\n').filter((l) => l !== '');
}

/** `cri-up.sh --name INSTANCE` in the namespace and a sandbox with a pod network on it: its ID and netns file. */
async function sandboxWithNetwork(): Promise<{ id: string; netns: string }> {
  const endpoint = inNs(`bash ${SCRIPTS}cri-up.sh --name ${INSTANCE} 2>/dev/null`).trim().split('\n').at(-1) ?? '';
  expect(endpoint).toMatch(/^unix:\/\//);
  const client = createCriClient(endpoint);
  try {
    const { pod_sandbox_id: id } = await client.RunPodSandbox({
      config: {
        metadata: { name: 'netns', uid: `uid-netns-${Date.now()}`, namespace: 'default', attempt: 0 },
        log_directory: '',
        labels: {},
        annotations: {},
        // A network of the pod's own: the CNI bridge, in a netns containerd mounts in /run/netns.
        linux: { security_context: { namespace_options: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' } } },
      },
    });
    const mounted = mountedNetns();
    expect(mounted).toHaveLength(1);
    const netns = mounted[0] ?? '';
    made.add(netns);
    return { id, netns };
  } finally {
    client.close();
  }
}

/** `cri-down.sh --name INSTANCE` in the namespace: its exit status and what it said. */
function criDown(): { status: number; stderr: string } {
  try {
    execFileSync('nsenter', [`--mount=/proc/${holder?.pid ?? 0}/ns/mnt`, 'bash', `${SCRIPTS}cri-down.sh`, '--name', INSTANCE], {
      encoding: 'utf8',
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, PROBELET_CRI_FORCE: '1' },
    });
    return { status: 0, stderr: '' };
  } catch (err) {
    const e = err as { status?: number; stderr?: string };
    return { status: e.status ?? -1, stderr: e.stderr ?? '' };
  }
}

/** What is left of the instance: its netns (file or mount), directory, bridge, processes. Empty after a good cri-down. */
function leftOfInstance(netns: string): string[] {
  const left = mountedNetns().map((m) => `mounted netns ${m}`);
  if (existsSync(netns)) left.push(`netns file ${netns}`);
  if (existsSync(INSTANCE_DIR)) left.push(`directory ${INSTANCE_DIR}`);
  if (existsSync(`/sys/class/net/pl-${INSTANCE}`)) left.push(`bridge pl-${INSTANCE}`);
  for (const pid of readdirSync('/proc').filter((d) => /^[0-9]+$/.test(d))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ');
      if (cmdline.includes(`${INSTANCE_DIR}/`)) left.push(`process ${pid}: ${cmdline}`);
    } catch {
      // Gone meanwhile.
    }
  }
  return left;
}

describeCri(
  'hostile: no pod network namespace outlives cri-down',
  () => {
    beforeAll(async () => {
      holder = spawn('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', FRESH_NETNS_DIR], { stdio: ['ignore', 'pipe', 'inherit'] });
      const out = holder.stdout;
      await new Promise<void>((resolve, reject) => {
        out?.on('data', (chunk: Buffer) => (chunk.toString().includes('ready') ? resolve() : undefined));
        holder?.once('exit', (code) => reject(new Error(`unshare ended (${code ?? 'signal'}) before its /run/netns was made fresh`)));
      });
    }, 30_000);

    afterAll(() => {
      if (holder?.pid !== undefined && existsSync(`${INSTANCE_DIR}/containerd.pid`)) criDown();
      holder?.kill('SIGKILL');
      // Their mounts died with the namespace; the files are this test's, by name.
      for (const f of made) rmSync(f, { force: true });
    }, 120_000);

    it('`ip netns add` after the sandbox was made: cri-down removes the sandbox and its netns', async () => {
      const { netns } = await sandboxWithNetwork();
      // What podman does too, the first time it finds /run/netns no mount point.
      inNs(`ip netns add ${INSTANCE}-ip && ip netns del ${INSTANCE}-ip`);
      const down = criDown();
      expect(down, down.stderr).toEqual({ status: 0, stderr: '' });
      expect(leftOfInstance(netns)).toEqual([]);
    }, 240_000);

    it('containerd killed between stopping the sandbox and removing its netns: cri-down finds it in the instance’s metadata', async () => {
      const { id, netns } = await sandboxWithNetwork();
      // The sandbox's task stopped and deleted, as StopPodSandbox does, then containerd and its shim gone.
      const containerd = Number(readFileSync(`${INSTANCE_DIR}/containerd.pid`, 'utf8'));
      const shims = inNs(`pgrep -f '[c]ontainerd-shim.* -address ${INSTANCE_DIR}/containerd.sock' || true`).split('\n').filter((l) => l !== '').map(Number);
      for (const pid of [containerd, ...shims]) process.kill(pid, 'SIGKILL');
      const bundle = `${INSTANCE_DIR}/state/io.containerd.runtime.v2.task/k8s.io/${id}`;
      inNs(`runc --root ${INSTANCE_DIR}/runc/k8s.io kill ${id} KILL; runc --root ${INSTANCE_DIR}/runc/k8s.io delete -f ${id}; umount ${bundle}/rootfs && rm -rf ${bundle}`);
      expect(mountedNetns()).toEqual([netns]);
      const down = criDown();
      expect(down, down.stderr).toEqual({ status: 0, stderr: '' });
      expect(leftOfInstance(netns)).toEqual([]);
    }, 240_000);
  },
  () => ownContainerdUnavailable(['unshare', 'nsenter', 'ip']),
);
