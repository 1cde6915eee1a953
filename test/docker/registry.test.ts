/**
 * Pulls from a real registry on the Docker runtime (`npm run registry:up`: TLS, a public and an
 * htpasswd-protected instance): `imagePullPolicy: Always` pulls with the kubelet's events; the
 * private image fails without credentials (ErrImagePull) and is pulled with the credentials the
 * kubelet's keyring finds in the `kubernetes.io/dockerconfigjson` Secret named in
 * `imagePullSecrets`, passed to the Engine.
 */
import { existsSync, readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import { afterEach, expect, it } from 'vitest';
import type { PullSecret } from '../../src/kubelet/pull-secrets.js';
import { current, run, statusOf, until, waitEvent, waitRunning } from '../e2e/helpers.js';
import { bb, describeWhen, pod, stopRuntimeKubelets } from '../cri/helpers.js';
import { dockerUnavailable, startDockerKubelet } from './helpers.js';

const PUBLIC = process.env.PROBELET_REGISTRY ?? '127.0.0.1:5000';
const PRIVATE = process.env.PROBELET_REGISTRY_PRIVATE ?? '127.0.0.1:5001';
const SECRET = process.env.PROBELET_REGISTRY_SECRET ?? '/tmp/probelet-registry/pull-secret.yaml';

function registryUnavailable(): string | undefined {
  return dockerUnavailable() ?? (existsSync(SECRET) ? undefined : `no test registry (${SECRET} missing: run \`npm run registry:up\`)`);
}

afterEach(async ({ task }) => {
  await stopRuntimeKubelets(task.id);
});

describeWhen('docker: pulls from a registry', () => {
  it('Always pulls with the kubelet’s events; a private image needs its imagePullSecrets', async ({ task }) => {
    // registry:up's Secret, as `run` reads it from the manifests and a node from the API: the
    // kubelet's keyring finds the credentials, the runtime passes them to the Engine.
    const secret = yaml.load(readFileSync(SECRET, 'utf8')) as { metadata: { name: string }; type: string; data: Record<string, string> };
    const getSecret = (ns: string, name: string): Promise<PullSecret | undefined> =>
      Promise.resolve(ns === 'default' && name === secret.metadata.name ? { type: secret.type, data: secret.data } : undefined);
    const h = await startDockerKubelet(task.id, undefined, undefined, { getSecret });
    const pub = `${PUBLIC}/probelet/busybox:test`;
    const priv = `${PRIVATE}/private/busybox:test`;
    const always = { imagePullPolicy: 'Always' as const };
    run(
      h,
      pod('public', [bb(h, 'c', ['sleep', '600'], { image: pub, ...always })], { terminationGracePeriodSeconds: 1 }),
      pod('anonymous', [bb(h, 'c', ['sleep', '600'], { image: priv, ...always })], { terminationGracePeriodSeconds: 1 }),
      pod('with-secret', [bb(h, 'c', ['sleep', '600'], { image: priv, ...always })], { terminationGracePeriodSeconds: 1, imagePullSecrets: [{ name: secret.metadata.name }] }),
    );
    await waitEvent(h, 'public', 'Pulling', `Pulling image "${pub}"`, 20_000);
    await waitEvent(h, 'public', 'Pulled', `Successfully pulled image "${pub}" in `, 20_000);
    await waitRunning(h, 'public', 'c', 'regular', 20_000);
    await waitEvent(h, 'with-secret', 'Pulled', `Successfully pulled image "${priv}" in `, 20_000);
    await waitRunning(h, 'with-secret', 'c', 'regular', 20_000);
    const failed = await waitEvent(h, 'anonymous', 'Failed', `Failed to pull image "${priv}": rpc error: code = Unknown desc = Error response from daemon: `, 20_000);
    expect(failed.type).toBe('Warning');
    await until(() => statusOf(current(h, 'anonymous'), 'c')?.state?.waiting?.reason?.match(/^(ErrImagePull|ImagePullBackOff)$/), 20_000);
  }, 60_000);
}, registryUnavailable(), 'PROBELET_REQUIRE_REGISTRY', 'the test registries');
