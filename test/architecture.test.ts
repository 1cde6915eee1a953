import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * DESIGN.md's layering rules: an arrow only points down. `probe/` knows nothing of workers,
 * `prober/` nothing of processes or the CLI, `runtime/` nothing of probes; `util/` and
 * `api/` are below everything; only `cli/` sits on top. `spawn/` (process supervision) sits
 * just above `util/`, for the layers that start processes, and is entered only through
 * `spawn/index.ts`.
 */
const allowed: Record<string, readonly string[]> = {
  util: ['util'],
  spawn: ['spawn', 'util'],
  api: ['api', 'util', 'prober/types'],
  probe: ['probe', 'api', 'spawn', 'util'],
  prober: ['prober', 'probe', 'api', 'util'],
  // prober/start-latency: the PLEG's relist period, which the runtimes' relist loop (runtime/relist.ts) runs on.
  runtime: ['runtime', 'api', 'spawn', 'util', 'prober/start-latency'],
  // kubelet/lifecycle: an httpGet hook is the probe's request and transport (upstream's
  // pkg/kubelet/lifecycle uses pkg/probe/http the same way).
  kubelet: ['kubelet', 'prober', 'probe', 'runtime', 'api', 'util'],
  server: ['server', 'api', 'util'],
  // Static analysis: the API layer and the prober's pure statements of the semantics, never anything that runs.
  // prober/kill-policy: the kill grace and back-off formulas the kubelet applies and the budgets predict;
  // prober/start-latency: when a worker first sees a container, which simulate plays and the budgets bound.
  // kubelet/backoff: the crash-loop back-off gate itself (a pure state machine on a clock), which check drives to predict a crash loop.
  check: ['check', 'api', 'util', 'prober/types', 'prober/kill-policy', 'prober/start-latency', 'kubelet/backoff'],
  // The simulator is a runtime and a set of handlers under the unchanged kubelet and prober.
  simulate: ['simulate', 'kubelet', 'prober', 'probe', 'runtime', 'api', 'spawn', 'util'],
  // The cluster agent: a source of pods and a sink of status for the unchanged kubelet (DESIGN.md, "Growing the house").
  // probe/constants: the Kubernetes version the engine follows, for nodeInfo.kubeletVersion.
  // prober/start-latency: the PLEG's relist period, whose phase the node's Kubelet and runtime share.
  node: ['node', 'kubelet', 'runtime', 'api', 'util', 'prober/types', 'prober/start-latency', 'probe/constants'],
  // node/fleet (DESIGN.md, "Growing the house"): the fleet file's behaviours by selector are simulate's
  // scripts, played by simulate's runtime and handlers under the node's unchanged Kubelet.
  'node/fleet': ['node', 'simulate', 'kubelet', 'prober', 'probe', 'runtime', 'api', 'util'],
  // `probelet explain` and check --cluster's object source: reads a pod's status and events (node/kube's
  // helpers over client-node; check --cluster's lists as raw JSON over node/connections' transport) and
  // judges them with check's budgets and the kubelet's pure rules and words; --verify runs simulate on the pod's spec.
  explain: ['explain', 'check', 'simulate', 'api', 'util', 'node/kube', 'node/connections', 'kubelet/events', 'kubelet/backoff', 'kubelet/restart-rule', 'prober/types', 'prober/kill-policy', 'prober/start-latency'],
  cli: ['cli', 'check', 'explain', 'simulate', 'node', 'kubelet', 'prober', 'probe', 'runtime', 'server', 'api', 'spawn', 'util'],
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('layering (DESIGN.md)', () => {
  const root = join(import.meta.dirname, '..', 'src');
  for (const file of sources(root).filter((f) => !f.endsWith('index.ts') || relative(root, f).includes('/'))) {
    const rel = relative(root, file);
    // A room with rules of its own (`node/fleet`) goes by them; every other file by its top folder.
    const layer = Object.keys(allowed).find((room) => room.includes('/') && rel.startsWith(`${room}/`)) ?? rel.split('/')[0] ?? '';
    it(`${relative(root, file)} imports only from ${layer}'s allowed layers`, () => {
      const imports = [...readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)].map((m) => m[1] ?? '');
      const targets = imports.map((spec) => relative(root, join(file, '..', spec)).replace(/\.js$/, ''));
      const bad = targets.filter((t) => !(allowed[layer] ?? []).some((ok) => t === ok || t.startsWith(`${ok}/`)));
      expect(bad).toEqual([]);
    });
  }
});

describe('spawn/ has one entry point', () => {
  const root = join(import.meta.dirname, '..', 'src');
  for (const file of sources(root).filter((f) => !relative(root, f).startsWith('spawn/'))) {
    it(`${relative(root, file)} enters spawn/ only through spawn/index`, () => {
      const imports = [...readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)].map((m) => m[1] ?? '');
      const targets = imports.map((spec) => relative(root, join(file, '..', spec)).replace(/\.js$/, ''));
      expect(targets.filter((t) => t.startsWith('spawn/') && t !== 'spawn/index')).toEqual([]);
    });
  }
});
