/**
 * Side by side with the real kubelet, through the API for both: a few of the oracle's
 * scenarios (test/oracle/scenarios.ts) created at once on the cluster's kubelet node and on a
 * `probelet node --runtime cri` (the built command, on a containerd instance this test starts),
 * each bound with `spec.nodeName`, watched through the API and compared by the oracle's
 * comparator (events with counts, container starts, exits, readiness, waiting reasons, pod
 * conditions). A difference must be fixed or listed in test/oracle/known-differences.ts with
 * its section in docs/differences.md.
 *
 * Skipped, with the reason in the suite's name, without a cluster, root (for containerd) or a
 * built dist/; under PROBELET_REQUIRE_CLUSTER=1 each of those fails instead.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { formatOutcome, ROOT, runSideBySide, type ScenarioOutcome } from '../oracle/oracle.js';
import { SCENARIOS } from '../oracle/scenarios.js';
import { clusterClients, deleteNodeObjects, describeCluster, until } from './helpers.js';

/** The oracle's scenarios compared here: a readiness flap, a liveness kill and restart, an exec readiness failure, a pod that fails. */
const NAMES = ['http-readiness-flap', 'http-liveness-500', 'exec-exit-code', 'never-exit-1'];
const CHOSEN = SCENARIOS.filter((s) => NAMES.includes(s.name));
/** probelet's containerd instance (at most 12 characters: it names the bridge). */
const INSTANCE = process.env.PROBELET_SIDE_BY_SIDE_INSTANCE ?? 'side-by-side';

function unavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root (the test starts a containerd of its own)';
  if (!existsSync(join(ROOT, 'dist/cli/main.js'))) return 'dist/ is not built (npm run build)';
  return undefined;
}

describeCluster('side by side with the real kubelet, through the API for both', () => {
  const suffix = randomBytes(3).toString('hex');
  const node = `probelet-side-${suffix}`;
  const namespaces = { kubelet: `side-kubelet-${suffix}`, probelet: `side-probelet-${suffix}` };
  const kubeconfig = process.env.KUBECONFIG?.split(':')[0] ?? '';
  let agentTmp = '';
  let agent: ChildProcess | undefined;
  let output = '';
  let outcomes: ScenarioOutcome[] = [];

  beforeAll(async () => {
    agentTmp = mkdtempSync(join(tmpdir(), 'probelet-side-agent-'));
    const endpoint = execFileSync('bash', [join(ROOT, 'scripts/cri-up.sh'), '--name', INSTANCE], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim().split('\n').at(-1) ?? '';
    // The admin identity: a node name of the test's own, which no `system:node:` certificate names.
    agent = spawn(process.execPath, [join(ROOT, 'bin/probelet.js'), 'node', '--kubeconfig', kubeconfig, '--name', node, '--runtime', 'cri', '--cri-endpoint', endpoint, '--listen', '127.0.0.1:0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, TMPDIR: agentTmp },
    });
    agent.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    agent.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    await until(`node ${node} to register`, async () => (output.includes(`node ${node} registered`) ? true : undefined), 30_000).catch((err: unknown) => {
      throw new Error(`${String(err)}; its output:\n${output}`);
    });
    outcomes = await runSideBySide({ scenarios: CHOSEN, kubeconfig, probeletNode: node, namespaces });
  }, 150_000);

  afterAll(async () => {
    const clients = clusterClients();
    try {
      if (agent && agent.exitCode === null && agent.signalCode === null) {
        const exited = new Promise<void>((resolve) => agent?.once('exit', () => resolve()));
        agent.kill('SIGTERM');
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 30_000))]);
        if (agent.exitCode === null && agent.signalCode === null) agent.kill('SIGKILL');
      }
    } finally {
      for (const name of Object.values(namespaces)) await clients.core.deleteNamespace({ name }).catch(() => undefined);
      await deleteNodeObjects(clients, node);
      execFileSync('bash', [join(ROOT, 'scripts/cri-down.sh'), '--name', INSTANCE], { stdio: 'ignore' });
      if (agentTmp !== '') rmSync(agentTmp, { recursive: true, force: true });
    }
  }, 90_000);

  for (const s of CHOSEN) {
    it(`scenario ${s.name}: the same events, container statuses and pod conditions as the kubelet's (or a listed difference)`, () => {
      const o = outcomes.find((x) => x.scenario.name === s.name);
      expect(o, 'no outcome').toBeDefined();
      if (o === undefined) return;
      expect(o.unlisted, `${formatOutcome(o)}\nthe node's output:\n${output.slice(-2000)}`).toEqual([]);
    });
  }
}, unavailable);
