/**
 * Harness of the CRI tests: the real kubelet over the CRI runtime on a real containerd
 * (`npm run cri:up` starts a private one at /tmp/probelet-cri/containerd.sock; set
 * PROBELET_CRI_ENDPOINT or CONTAINER_RUNTIME_ENDPOINT for another), with busybox containers
 * of the test image `probelet.local/busybox:test`.
 *
 * Without containerd (or without root) the suites are skipped with that reason in their
 * name; with PROBELET_REQUIRE_CRI=1 (set by .ci/run) they fail instead.
 *
 * Every container carries the test's marker variable, so after `kubelet.close()` /proc
 * tells whether any of its processes is still alive; the CRI listings tell whether any
 * sandbox or container of the run is left.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Container, Pod, PodSpec } from '../../src/api/types.js';
import { Kubelet, type KubeletOptions } from '../../src/kubelet/kubelet.js';
import { createCriClient } from '../../src/runtime/cri/client.js';
import { createCriRuntime, type CriRuntime } from '../../src/runtime/cri/cri-runtime.js';
import { RUN_LABEL } from '../../src/runtime/cri/pod-config.js';
import { aliveWithMarker, eventually, killMarked, markerEnv } from '../helpers/processes.js';
import type { Harness } from '../e2e/helpers.js';
import type { ContainerRuntime } from '../../src/runtime/types.js';

export const CRI_ENDPOINT =
  process.env.PROBELET_CRI_ENDPOINT ?? process.env.CONTAINER_RUNTIME_ENDPOINT ?? 'unix:///tmp/probelet-cri/containerd.sock';
export const BUSYBOX = 'probelet.local/busybox:test';
const MARKER_VAR = 'PROBELET_TEST_MARKER';

/** Why the CRI tests cannot run here, or undefined when they can. */
export function criUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root (containerd needs root)';
  const socket = CRI_ENDPOINT.replace(/^unix:\/\//, '');
  if (!existsSync(socket)) return `no containerd at ${CRI_ENDPOINT} (run \`npm run cri:up\` as root)`;
  return undefined;
}

/**
 * Why a test cannot start a containerd instance of its own (`scripts/cri-up.sh --name …`), or
 * undefined when it can; `tools` are the other commands it needs.
 */
export function ownContainerdUnavailable(tools: readonly string[] = []): string | undefined {
  if (process.getuid?.() !== 0) return 'not root (containerd needs root)';
  for (const tool of ['containerd', 'runc', ...tools]) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      return `${tool} is not installed${tool === 'containerd' || tool === 'runc' ? ' (npm run cri:up installs it)' : ''}`;
    }
  }
  return undefined;
}

/**
 * `describe` when containerd is there; else a skipped suite whose name says why, or —
 * under PROBELET_REQUIRE_CRI=1 — a failing test saying the same. `unavailable` says why the
 * suite cannot run (undefined: it can); a suite with needs of its own (a containerd it starts
 * itself) passes its own.
 */
export function describeCri(name: string, body: () => void, unavailable: () => string | undefined = criUnavailable): void {
  describeWhen(name, body, unavailable(), 'PROBELET_REQUIRE_CRI', 'containerd');
}

/**
 * `describe` when `reason` is undefined; else a skipped suite whose name says why, or — with
 * `requireVar`=1 — a failing test saying the same (a runtime CI must have).
 */
export function describeWhen(name: string, body: () => void, reason: string | undefined, requireVar: string, what: string): void {
  if (reason === undefined) {
    describe(name, body);
  } else if (process.env[requireVar] === '1') {
    describe(name, () => {
      it(`needs ${what}: ${reason}`, () => {
        throw new Error(`${requireVar}=1 but ${reason}`);
      });
    });
  } else {
    describe.skip(`${name} — skipped: ${reason}`, body);
  }
}

export interface CriHarness extends Harness {
  runtime: CriRuntime;
}

/** A harness over any runtime that labels what it makes with its run (CRI, Docker). */
export interface RuntimeHarness<R extends ContainerRuntime & { runID: string } = ContainerRuntime & { runID: string }> extends Harness {
  runtime: R;
}

interface Held {
  h: RuntimeHarness;
  /** What the runtime still holds of the run, as its own API lists it. */
  leftIn: (runID: string) => Promise<string[]>;
  where: string;
}

const byTest = new Map<string, Held[]>();

/** A kubelet over `makeRuntime(runDir)`, closed by {@link stopRuntimeKubelets}(testId). */
export async function startRuntimeKubelet<R extends ContainerRuntime & { runID: string }>(
  testId: string,
  makeRuntime: (runDir: string) => Promise<R>,
  leftIn: (runID: string) => Promise<string[]>,
  where: string,
  options: Omit<KubeletOptions, 'runtime'> = {},
): Promise<RuntimeHarness<R>> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'probelet-rt-')));
  const runtime = await makeRuntime(join(dir, 'pods'));
  const kubelet = new Kubelet({ runtime, ...options });
  const history: Harness['history'] = new Map();
  kubelet.onPodStatus((pod) => {
    const name = pod.metadata?.name ?? '';
    let seen = history.get(name);
    if (!seen) history.set(name, (seen = []));
    seen.push({ atMs: performance.now(), pod: structuredClone(pod) });
  });
  const h: RuntimeHarness<R> = { kubelet, runtime, marker: markerEnv().marker, dir, history };
  byTest.set(testId, [...(byTest.get(testId) ?? []), { h, leftIn, where }]);
  return h;
}

/** A kubelet (with `options`: pull secrets, pull settings) over a fresh CRI runtime, closed by {@link stopCriKubelets}(testId). */
export function startCriKubelet(testId: string, options: Omit<KubeletOptions, 'runtime'> = {}): Promise<CriHarness> {
  return startRuntimeKubelet(testId, (runDir) => createCriRuntime({ endpoint: CRI_ENDPOINT, runDir }), leftInRuntime, 'containerd', options);
}

/** Closes the test's kubelets; nothing of theirs may be left in the runtime or in /proc. */
export async function stopRuntimeKubelets(testId: string): Promise<void> {
  const list = byTest.get(testId) ?? [];
  byTest.delete(testId);
  for (const { h, leftIn, where } of list) {
    await h.kubelet.close();
    expect(await leftIn(h.runtime.runID), `left in ${where}`).toEqual([]);
    const gone = await eventually(() => aliveWithMarker(h.marker).length === 0, 3000, 50);
    const leaked = gone ? [] : aliveWithMarker(h.marker).map((p) => `${p.pid} ${p.cmdline}`);
    killMarked(h.marker);
    rmSync(h.dir, { recursive: true, force: true });
    expect(leaked, 'container processes left after close()').toEqual([]);
  }
}

export const stopCriKubelets = stopRuntimeKubelets;

/** Sandboxes and containers carrying the run's label, as the CRI lists them. */
export async function leftInRuntime(runID: string): Promise<string[]> {
  const client = createCriClient(CRI_ENDPOINT);
  try {
    const selector = { label_selector: { [RUN_LABEL]: runID } };
    const { items } = await client.ListPodSandbox({ filter: selector });
    const { containers } = await client.ListContainers({ filter: selector });
    return [...items.map((s) => `sandbox ${s.id}`), ...containers.map((c) => `container ${c.id}`)];
  } finally {
    client.close();
  }
}

/** A busybox container whose processes carry the harness's marker. */
export function bb(h: Pick<Harness, 'marker'>, name: string, command: string[] | undefined, extra: Partial<Container> = {}): Container {
  return {
    name,
    image: BUSYBOX,
    ...(command ? { command } : {}),
    ...extra,
    env: [{ name: MARKER_VAR, value: h.marker }, ...(extra.env ?? [])],
  };
}

export function pod(name: string, containers: Container[], spec: Partial<PodSpec> = {}): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { ...spec, containers } };
}

/** `sh -c <script>` */
export function sh(script: string): string[] {
  return ['sh', '-c', script];
}

/** busybox httpd serving /www on `port`, with /www/healthz present for `healthySeconds` (forever when undefined). */
export function httpd(port: number, healthySeconds?: number): string[] {
  const drop = healthySeconds === undefined ? '' : `(sleep ${healthySeconds}; rm /www/healthz) & `;
  return sh(`mkdir -p /www; echo ok >/www/healthz; echo index >/www/index.html; ${drop}exec httpd -f -p ${port} -h /www`);
}
