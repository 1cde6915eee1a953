/**
 * Harness of the tests against a real control plane: the cluster comes only from the
 * environment (`KUBECONFIG`, which `eval "$(npm run -s cluster:env)"` sets). Without one the
 * suites are skipped with that reason in their name; with PROBELET_REQUIRE_CLUSTER=1 they
 * fail instead.
 */
import { existsSync } from 'node:fs';
import { describe, it } from 'vitest';
import { loadKubeClients, type KubeClients } from '../../src/node/kube.js';

/** Why the cluster tests cannot run here, or undefined when they can. */
export function clusterUnavailable(): string | undefined {
  const path = process.env.KUBECONFIG;
  if (!path) return 'no KUBECONFIG (run `npm run cluster:up`, then eval "$(npm run -s cluster:env)")';
  const first = path.split(':')[0] ?? '';
  if (!existsSync(first)) return `KUBECONFIG ${first} does not exist`;
  return undefined;
}

/**
 * `describe` when the cluster (and whatever else `needs` says is missing, e.g. a containerd or
 * a built dist/) is there; else skipped with the reason in its name, or failing under
 * PROBELET_REQUIRE_CLUSTER=1.
 */
export function describeCluster(name: string, body: () => void, needs: () => string | undefined = () => undefined): void {
  const reason = clusterUnavailable() ?? needs();
  if (reason === undefined) describe(name, body);
  else if (process.env.PROBELET_REQUIRE_CLUSTER === '1') {
    describe(name, () => {
      it(`needs a cluster: ${reason}`, () => {
        throw new Error(`PROBELET_REQUIRE_CLUSTER=1 but ${reason}`);
      });
    });
  } else describe.skip(`${name} — skipped: ${reason}`, body);
}

export function clusterClients(): KubeClients {
  return loadKubeClients(process.env.KUBECONFIG?.split(':')[0]);
}

/** Polls `check` until it returns a value (not undefined) or `timeoutMs` passes; the error says what was awaited and the last value seen. */
export async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
