/**
 * The fleet file (src/node/fleet/): what it accepts, every problem named by file:line, the
 * field and the fix; behaviours matched by selector with the annotation on top; shards that
 * split a fleet without overlap.
 */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { fleetBehaviours, podBehaviours } from '../../src/node/fleet/behaviours.js';
import { FleetError, fleetNodes, parseFleet, SIMULATED_TAINT } from '../../src/node/fleet/fleet-file.js';
import { globError, matchesGlob } from '../../src/node/fleet/glob.js';
import { parseShard, shardOf } from '../../src/node/fleet/shard.js';
import { formatScript } from '../../src/simulate/script.js';

const EXAMPLE = `apiVersion: probelet.dev/v1alpha1
kind: Fleet
pools:
- name: edge                  # nodes edge-0 … edge-4
  count: 5
  labels: {zone: a}
  taints: [{key: probelet.dev/simulated, value: "true", effect: NoSchedule}]
  pods: 110
- name: core
  count: 2
behaviours:
- match: {namespace: shop, labels: {app: api}, container: api, image: "example/*"}
  script: down:20s,up
- match: {container: db}
  script: up
  probes: {readiness: "fail(503):5s,up"}
- match: {}
  script: up
`;

/** The problems of a file that must not load. */
function problems(text: string): string[] {
  try {
    parseFleet(text, 'fleet.yaml');
  } catch (err) {
    if (err instanceof FleetError) return [...err.problems];
    throw err;
  }
  throw new Error('the file loaded');
}

function pod(namespace: string, labels: Record<string, string>, containers: Array<{ name: string; image: string }>, annotations?: Record<string, string>): Pod {
  return {
    metadata: { name: 'p', namespace, uid: 'u', labels, ...(annotations ? { annotations } : {}) },
    spec: { containers, initContainers: [{ name: 'init', image: 'example/init:1' }, { name: 'sidecar', image: 'example/proxy:1', restartPolicy: 'Always' }] },
  } as Pod;
}

describe('fleet file', () => {
  it("reads the issue's shape: pools with labels, taints and pods, nodes <pool>-<i>, behaviours in order", () => {
    const fleet = parseFleet(EXAMPLE, 'fleet.yaml');
    expect(fleet.pools.map((p) => [p.name, p.count, p.labels, p.pods])).toEqual([
      ['edge', 5, { zone: 'a' }, 110],
      ['core', 2, {}, 110],
    ]);
    expect(fleet.pools[0]?.taints).toEqual([SIMULATED_TAINT]);
    // No `taints:` key: the simulated taint, so that nobody else's pods land there.
    expect(fleet.pools[1]?.taints).toEqual([SIMULATED_TAINT]);
    expect(fleetNodes(fleet).map((n) => n.name)).toEqual(['edge-0', 'edge-1', 'edge-2', 'edge-3', 'edge-4', 'core-0', 'core-1']);
    expect(fleet.behaviours.map((b) => formatScript(b.script))).toEqual(['down:20s,up', 'up', 'up']);
    expect(formatScript(fleet.behaviours[1]?.probes.readiness ?? [])).toBe('fail(503):5s,up');
  });

  it('names file:line, the field and the fix for each problem, all at once', () => {
    const text = `apiVersion: probelet.dev/v1
kind: Fleet
pools:
- name: edge
  count: 0
  taint: []
- name: Edge_1
  count: 2
  pods: -1
  taints: [{key: a, effect: NoScheduled}]
behaviours:
- match: {image: "example/[ab]*"}
  script: down:20s,upp
- match: {containers: api}
  script: up
- script: down,up
`;
    expect(problems(text)).toEqual([
      'fleet.yaml:1: apiVersion: expected probelet.dev/v1alpha1, got "probelet.dev/v1"',
      'fleet.yaml:6: pools[0].taint: unknown key: did you mean "taints"? (known: name, count, labels, taints, pods)',
      'fleet.yaml:5: pools[0].count: expected a whole number from 1 to 10000 (nodes in the pool), got 0',
      "fleet.yaml:7: pools[1].name: expected a pool name of lower-case letters, digits and '-', up to 50 characters (its nodes are <name>-0, <name>-1, …), got \"Edge_1\"",
      "fleet.yaml:9: pools[1].pods: expected a whole number from 1 to 10000 (allocatable pods of each of the pool's nodes), got -1",
      'fleet.yaml:10: pools[1].taints[0].effect: expected one of NoSchedule, PreferNoSchedule, NoExecute, got "NoScheduled"',
      'fleet.yaml:12: behaviours[0].match.image: "example/[ab]*": "[" is not glob syntax here: only * (any characters) and ? (one character) are wildcards',
      'fleet.yaml:13: behaviours[0].script: unknown state "upp": the states are down, up, fail, fail(HTTP status), hang, slow(D), redirect(URL), exit(N)',
      'fleet.yaml:14: behaviours[1].match.containers: unknown key: did you mean "container"? (known: namespace, labels, container, image)',
      'fleet.yaml:16: behaviours[2].match: expected a match {namespace, labels, container, image} ({} matches every container)',
      'fleet.yaml:16: behaviours[2].script: phase "down" needs a duration (only the last phase lasts for ever): e.g. down:30s',
    ]);
  });

  it('refuses a pool named twice, no pools, and more nodes than a fleet holds', () => {
    expect(problems('apiVersion: probelet.dev/v1alpha1\nkind: Fleet\npools:\n- {name: a, count: 1}\n- {name: a, count: 1}\n')).toEqual([
      'fleet.yaml:5: pools[1].name: pool "a" is named twice: give each pool its own name (node names must be unique)',
    ]);
    expect(problems('apiVersion: probelet.dev/v1alpha1\nkind: Fleet\n')[0]).toMatch(/^fleet\.yaml:1: pools: expected a list of pools/);
    expect(problems('apiVersion: probelet.dev/v1alpha1\nkind: Fleet\npools:\n- {name: a, count: 6000}\n- {name: b, count: 6000}\n')).toEqual([
      'fleet.yaml:3: pools: 12000 nodes in all: a fleet has at most 10000 (split it into several fleet files)',
    ]);
    expect(problems('a: [\n')[0]).toMatch(/^fleet\.yaml:\d+: /);
  });
});

describe('behaviours by selector', () => {
  const fleet = parseFleet(EXAMPLE, 'fleet.yaml');
  const scripts = (p: Pod): Record<string, string | undefined> =>
    Object.fromEntries([...(podBehaviours(fleet.behaviours, 'probelet.dev/behaviour', p).behaviours ?? new Map())].map(([k, b]) => [k, b.script && formatScript(b.script)]));

  it('first match wins, every key given must match, plain init containers are left alone', () => {
    const p = pod('shop', { app: 'api', tier: 'x' }, [
      { name: 'api', image: 'example/api:2' },
      { name: 'db', image: 'postgres:16' },
    ]);
    expect(scripts(p)).toEqual({ sidecar: 'up', api: 'down:20s,up', db: 'up' });
    // One key that does not match (namespace, label, image) and the next behaviour applies.
    expect(scripts(pod('other', { app: 'api' }, [{ name: 'api', image: 'example/api:2' }])).api).toBe('up');
    expect(scripts(pod('shop', { app: 'web' }, [{ name: 'api', image: 'example/api:2' }])).api).toBe('up');
    expect(scripts(pod('shop', { app: 'api' }, [{ name: 'api', image: 'other/api:2' }])).api).toBe('up');
    expect(fleetBehaviours(fleet.behaviours, p).has('init')).toBe(false);
  });

  it('the annotation overrides per pod: a container script replaces the fleet’s, a probe script only that probe', () => {
    const p = pod('shop', { app: 'api' }, [{ name: 'api', image: 'example/api:2' }, { name: 'db', image: 'postgres:16' }], { 'probelet.dev/behaviour': 'api=up db.liveness=down' });
    const b = podBehaviours(fleet.behaviours, 'probelet.dev/behaviour', p).behaviours;
    expect(formatScript(b?.get('api')?.script ?? [])).toBe('up');
    expect(formatScript(b?.get('db')?.script ?? [])).toBe('up');
    expect(formatScript(b?.get('db')?.probes.readiness ?? [])).toBe('fail(503):5s,up');
    expect(formatScript(b?.get('db')?.probes.liveness ?? [])).toBe('down');
    const bad = podBehaviours(fleet.behaviours, 'probelet.dev/behaviour', pod('shop', { app: 'api' }, [{ name: 'api', image: 'example/api:2' }], { 'probelet.dev/behaviour': 'nope=up' }));
    expect(bad.error).toBe('annotation probelet.dev/behaviour: "nope=up": no container "nope" in the pod (containers: init, sidecar, api); its containers play the fleet\'s behaviours');
    expect(formatScript(bad.behaviours?.get('api')?.script ?? [])).toBe('down:20s,up');
  });

  it('globs: * spans any characters (a slash too), ? one, nothing else is syntax', () => {
    expect(matchesGlob('example/team/api:2', 'example/*')).toBe(true);
    expect(matchesGlob('example2/api', 'example/*')).toBe(false);
    expect(matchesGlob('team-a', 'team-?')).toBe(true);
    expect(matchesGlob('api', 'api')).toBe(true);
    expect(globError('')).toMatch(/empty glob/);
    // What backtracks exponentially in a regex engine: here a table of pattern × text.
    expect(matchesGlob('a'.repeat(400), `${'*a'.repeat(200)}b`)).toBe(false);
  });
});

describe('--shard I/N', () => {
  it('splits the nodes into disjoint slices that cover the fleet, every pool spread over them', () => {
    const nodes = fleetNodes(parseFleet(EXAMPLE, 'fleet.yaml')).map((n) => n.name);
    const slices = [1, 2, 3].map((i) => shardOf(nodes, parseShard(`${i}/3`)));
    expect(slices).toEqual([
      ['edge-0', 'edge-3', 'core-1'],
      ['edge-1', 'edge-4'],
      ['edge-2', 'core-0'],
    ]);
    expect(slices.flat().sort()).toEqual([...nodes].sort());
  });

  it('refuses what is not I/N with 1 ≤ I ≤ N', () => {
    for (const bad of ['0/4', '5/4', '1', '1/0', 'a/b', '/4', '1/4/2']) {
      expect(() => parseShard(bad), bad).toThrow(/expected I\/N with 1 ≤ I ≤ N/);
    }
    expect(parseShard('4/4')).toEqual({ index: 4, count: 4 });
  });
});
