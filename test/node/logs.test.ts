/**
 * `kubectl logs` against a probelet node: the API server proxies `/containerLogs/…` to the
 * node's daemonEndpoints port over HTTPS, checking the node's serving certificate against the
 * cluster CA and presenting its kubelet client certificate, which the node checks against the
 * same CA. Real `kubectl logs` (plain, `--tail`, `--timestamps`, `--limit-bytes`, `-f`), the
 * built command in a child process with `--runtime cri`, a serving certificate signed here by
 * the CA `cluster:up` made. Skipped without a cluster, its CA key, a containerd or dist/.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { V1Pod } from '@kubernetes/client-node';
import { beforeAll, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { plain } from '../../src/node/kube.js';
import { detectNodeAddress } from '../../src/node/node-object.js';
import { CRI_ENDPOINT, criUnavailable } from '../cri/helpers.js';
import { describeCluster, distUnavailable, KUBECONFIG, kubectl, nodeAgentFixture, servingUnavailable, until } from './helpers.js';

const ENDPOINT = process.env.PROBELET_NODE_CRI_ENDPOINT ?? CRI_ENDPOINT;
const SOCKET = ENDPOINT.replace(/^unix:\/\//, '');
const NODE = `h20a-logs-${randomBytes(3).toString('hex')}`;
const ADDRESS = detectNodeAddress();

/** What this suite needs besides the cluster. */
function unavailable(): string | undefined {
  const cri = process.env.PROBELET_NODE_CRI_ENDPOINT === undefined ? criUnavailable() : existsSync(SOCKET) ? undefined : `no containerd at ${ENDPOINT}`;
  return servingUnavailable(ADDRESS) ?? cri ?? distUnavailable();
}

describeCluster(`kubectl logs from a probelet node (${ENDPOINT})`, () => {
  const f = nodeAgentFixture({ node: NODE, runtimeArgs: ['--runtime', 'cri', '--cri-endpoint', ENDPOINT], serving: { address: ADDRESS ?? '' } });
  const { namespace } = f;
  const output = (): string => f.agent?.output() ?? '';

  beforeAll(async () => {
    await f.start();
  }, 60_000);

  it('the Node names the authenticated port; kubectl logs, --tail, --timestamps, --limit-bytes and -f show what the container wrote', async () => {
    // stdout and stderr are two pipes: only lines a moment apart are in the file in the order written.
    const script = 'echo line 1; echo line 2; sleep 1; echo err >&2; i=0; while true; do sleep 1; i=$((i+1)); echo tick $i; done';
    const body = {
      metadata: { name: 'talker', namespace },
      spec: { nodeName: NODE, terminationGracePeriodSeconds: 1, containers: [{ name: 'app', image: 'probelet.local/busybox:test', imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', script] }] },
    } as V1Pod;
    await f.clients.core.createNamespacedPod({ namespace, body });
    await until('the pod Running', async () => (plain<Pod>(await f.clients.core.readNamespacedPod({ name: 'talker', namespace })).status?.phase === 'Running' ? true : undefined), 60_000);
    const port = output().match(/authenticated API \(kubectl logs\) https:\/\/[\d.]+:(\d+)/)?.[1];
    const node = await f.clients.core.readNode({ name: NODE });
    expect(String(node.status?.daemonEndpoints?.kubeletEndpoint?.Port)).toBe(port);

    const all = await until('two ticks in kubectl logs', async () => {
      const text = kubectl('-n', namespace, 'logs', 'talker');
      return /tick 2\n/.test(text) ? text : undefined;
    }, 20_000).catch((err: unknown) => {
      throw new Error(`${String(err)}; the agent's output:\n${output()}`);
    });
    expect(all).toMatch(/^line 1\nline 2\nerr\ntick 1\ntick 2\n/);
    expect(kubectl('-n', namespace, 'logs', 'talker', '-c', 'app', '--tail=1')).toMatch(/^tick \d+\n$/);
    const stamped = kubectl('-n', namespace, 'logs', 'talker', '--timestamps', '--tail=3').split('\n').filter((l) => l !== '');
    expect(stamped).toHaveLength(3);
    for (const line of stamped) expect(line).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z (tick \d+|err|line \d)$/);
    expect(kubectl('-n', namespace, 'logs', 'talker', '--limit-bytes=9')).toBe('line 1\nli');

    // -f: what the container writes next arrives while kubectl waits.
    const follow = spawn('kubectl', ['--kubeconfig', KUBECONFIG, '-n', namespace, 'logs', '-f', '--tail=0', 'talker'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let followed = '';
    follow.stdout.on('data', (d: Buffer) => (followed += d.toString()));
    try {
      await until('two new ticks through kubectl logs -f', async () => ((followed.match(/tick \d+\n/g)?.length ?? 0) >= 2 ? true : undefined), 15_000);
      expect(followed).not.toContain('line 1');
    } finally {
      follow.kill('SIGTERM');
    }

    // What the kubelet says of a container that is not there.
    expect(() => kubectl('-n', namespace, 'logs', 'talker', '-c', 'nope')).toThrow(/container "nope" not found in pod "talker"|container nope is not valid/);
    expect(() => kubectl('-n', namespace, 'logs', 'talker', '--previous')).toThrow(/previous terminated container "app" in pod "talker" not found/);
  }, 120_000);
}, unavailable);
