/**
 * Pulls from a real registry through containerd (`npm run registry:up`: Debian's
 * docker-registry with TLS from its own CA, trusted by cri:up's containerd through the
 * registry config_path; a public instance and one behind htpasswd): `imagePullPolicy: Always`
 * pulls with the kubelet's events; the private image fails without credentials and is pulled
 * with the `kubernetes.io/dockerconfigjson` Secret named in `imagePullSecrets`, passed as the
 * CRI `AuthConfig`; a wrong password works once the Secret is updated; a missing tag is the
 * runtime's NotFound; serialized pulls never overlap, parallel ones do.
 */
import { existsSync, readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import { afterEach, expect, it } from 'vitest';
import type { PullSecret } from '../../src/kubelet/pull-secrets.js';
import type { Pod } from '../../src/api/types.js';
import type { RegistryAuth } from '../../src/runtime/types.js';
import { parseDurationMs } from '../../src/util/duration.js';
import { current, eventsWith, run, statusOf, until, waitEvent, waitRunning } from '../e2e/helpers.js';
import { bb, criUnavailable, describeWhen, pod, startCriKubelet, stopRuntimeKubelets, type CriHarness } from './helpers.js';

const PUBLIC = process.env.PROBELET_REGISTRY ?? '127.0.0.1:5000';
const PRIVATE = process.env.PROBELET_REGISTRY_PRIVATE ?? '127.0.0.1:5001';
const SECRET = process.env.PROBELET_REGISTRY_SECRET ?? '/tmp/probelet-registry/pull-secret.yaml';
const PUB_IMAGE = `${PUBLIC}/probelet/busybox:test`;
const PRIV_IMAGE = `${PRIVATE}/private/busybox:test`;
/** `Successfully pulled image "x" in 12ms (30ms including waiting). Image size: 123 bytes.` */
const PULLED = /^Successfully pulled image "([^"]+)" in (\S+) \((\S+) including waiting\)\. Image size: (\d+) bytes\.$/;

function registryUnavailable(): string | undefined {
  return criUnavailable() ?? (existsSync(SECRET) ? undefined : `no test registry (${SECRET} missing: run \`npm run registry:up\`)`);
}

/** The Secret registry:up wrote, as the keyring reads it. */
function pullSecret(): { name: string; secret: PullSecret } {
  const doc = yaml.load(readFileSync(SECRET, 'utf8')) as { metadata: { name: string }; type: string; data: Record<string, string> };
  return { name: doc.metadata.name, secret: { type: doc.type, data: doc.data } };
}

/** The same Secret with another password. */
function withPassword(secret: PullSecret, password: string): PullSecret {
  const config = JSON.parse(Buffer.from(secret.data?.['.dockerconfigjson'] ?? '', 'base64').toString('utf8')) as { auths: Record<string, { username: string }> };
  for (const entry of Object.values(config.auths)) Object.assign(entry, { password, auth: Buffer.from(`${entry.username}:${password}`).toString('base64') });
  return { type: secret.type ?? '', data: { '.dockerconfigjson': Buffer.from(JSON.stringify(config)).toString('base64') } };
}

const always = { imagePullPolicy: 'Always' as const };
/** How long each pull of the serialization test takes at least: longer than two sandboxes' start apart. */
const SLOW_PULL_MS = 3_000;
const quick = { terminationGracePeriodSeconds: 1 };

afterEach(async ({ task }) => {
  await stopRuntimeKubelets(task.id);
});

/**
 * The runtime's pull calls as [start, end] wall-clock instants, recorded around the real call;
 * with `slowMs`, each call waits that long first (a slow registry: two pods' pulls, asked for
 * within that time of each other, then fall in the same window whatever their sandboxes took).
 */
function timePulls(h: CriHarness, slowMs = 0): Array<{ image: string; auth: RegistryAuth | undefined; start: number; end: number }> {
  const calls: Array<{ image: string; auth: RegistryAuth | undefined; start: number; end: number }> = [];
  const real = h.runtime.pullImage.bind(h.runtime);
  h.runtime.pullImage = async (image: string, p: Pod, auth?: RegistryAuth) => {
    const start = performance.now();
    try {
      if (slowMs > 0) await new Promise((r) => setTimeout(r, slowMs));
      return await real(image, p, auth);
    } finally {
      calls.push({ image, auth, start, end: performance.now() });
    }
  };
  return calls;
}

describeWhen(
  'cri: pulls from a registry through containerd',
  () => {
    it('Always pulls with the kubelet’s events; the private image: anonymous fails (ErrImagePull), its imagePullSecrets pass the AuthConfig', async ({ task }) => {
      const { name, secret } = pullSecret();
      const h = await startCriKubelet(task.id, { getSecret: (ns, n) => Promise.resolve(ns === 'default' && n === name ? secret : undefined) });
      const calls = timePulls(h);
      run(
        h,
        pod('public', [bb(h, 'c', ['sleep', '600'], { image: PUB_IMAGE, ...always })], quick),
        pod('anonymous', [bb(h, 'c', ['sleep', '600'], { image: PRIV_IMAGE, ...always })], quick),
        pod('with-secret', [bb(h, 'c', ['sleep', '600'], { image: PRIV_IMAGE, ...always })], { ...quick, imagePullSecrets: [{ name }] }),
      );
      await waitEvent(h, 'public', 'Pulling', `Pulling image "${PUB_IMAGE}"`, 20_000);
      const pulled = await waitEvent(h, 'public', 'Pulled', `Successfully pulled image "${PUB_IMAGE}" in `, 30_000);
      const [, , took, , size] = PULLED.exec(pulled.message ?? '') ?? [];
      expect(took, pulled.message).toMatch(/^\d+(\.\d+)?(ms|s)$/);
      expect(Number(size)).toBeGreaterThan(100_000);
      await waitRunning(h, 'public', 'c', 'regular', 30_000);
      await waitEvent(h, 'with-secret', 'Pulled', `Successfully pulled image "${PRIV_IMAGE}" in `, 30_000);
      await waitRunning(h, 'with-secret', 'c', 'regular', 30_000);
      // containerd's Unknown status, its message alone as the kubelet's CRI client gives it.
      const failed = await waitEvent(h, 'anonymous', 'Failed', `Failed to pull image "${PRIV_IMAGE}": failed to pull and unpack image "${PRIV_IMAGE}": `, 30_000);
      expect(failed.type).toBe('Warning');
      expect(failed.message).toMatch(/401 Unauthorized|unauthorized/i);
      await waitEvent(h, 'anonymous', 'Failed', 'Error: ErrImagePull', 10_000);
      await until(() => statusOf(current(h, 'anonymous'), 'c')?.state?.waiting?.reason?.match(/^(ErrImagePull|ImagePullBackOff)$/), 20_000);
      // The credentials went to containerd as the AuthConfig, for the private image only.
      const withAuth = calls.filter((c) => c.auth !== undefined);
      expect(withAuth.map((c) => c.image)).toEqual([PRIV_IMAGE]);
      expect(withAuth[0]?.auth?.username).toBe('probelet');
    }, 90_000);

    it('a wrong password fails; the Secret updated, the next pull after the back-off works; a missing tag is NotFound', async ({ task }) => {
      const { name, secret } = pullSecret();
      let secretNow = withPassword(secret, 'wrong');
      const h = await startCriKubelet(task.id, { getSecret: (_ns, n) => Promise.resolve(n === name ? secretNow : undefined) });
      const missing = `${PUBLIC}/probelet/busybox:nope`;
      run(
        h,
        pod('password', [bb(h, 'c', ['sleep', '600'], { image: PRIV_IMAGE, ...always })], { ...quick, imagePullSecrets: [{ name }] }),
        pod('missing', [bb(h, 'c', ['sleep', '600'], { image: missing })], quick),
      );
      const wrong = await waitEvent(h, 'password', 'Failed', `Failed to pull image "${PRIV_IMAGE}": failed to pull and unpack image "${PRIV_IMAGE}": `, 30_000);
      expect(wrong.message).toMatch(/401 Unauthorized|unauthorized/i);
      secretNow = secret;
      await waitEvent(h, 'password', 'Pulled', `Successfully pulled image "${PRIV_IMAGE}" in `, 40_000);
      await waitRunning(h, 'password', 'c', 'regular', 20_000);
      const notFound = await waitEvent(h, 'missing', 'Failed', `Failed to pull image "${missing}": rpc error: code = NotFound desc = failed to pull and unpack image "${missing}": `, 30_000);
      expect(notFound.message).toContain('not found');
      await until(() => (statusOf(current(h, 'missing'), 'c')?.state?.waiting?.message?.startsWith(`Back-off pulling image "${missing}": ErrImagePull: rpc error: code = NotFound`) ? true : undefined), 30_000);
    }, 90_000);

    it('serializeImagePulls: two pods pulling at once never overlap, and the second waits; false: they overlap', async ({ task }) => {
      const { name, secret } = pullSecret();
      const getSecret = (_ns: string, n: string): Promise<PullSecret | undefined> => Promise.resolve(n === name ? secret : undefined);
      const pods = (h: CriHarness): Pod[] => [
        pod('a', [bb(h, 'c', ['sleep', '600'], { image: PUB_IMAGE, ...always })], quick),
        pod('b', [bb(h, 'c', ['sleep', '600'], { image: PRIV_IMAGE, ...always })], { ...quick, imagePullSecrets: [{ name }] }),
      ];
      const serial = await startCriKubelet(task.id, { getSecret });
      const serialCalls = timePulls(serial, SLOW_PULL_MS);
      run(serial, ...pods(serial));
      await waitRunning(serial, 'a', 'c', 'regular', 30_000);
      await waitRunning(serial, 'b', 'c', 'regular', 30_000);
      const [first, second] = [...serialCalls].sort((x, y) => x.start - y.start);
      expect(second?.start ?? 0).toBeGreaterThanOrEqual(first?.end ?? Infinity);
      // The one that waited says so: its time including waiting is longer than its pull.
      const waited = (h: CriHarness, p: string): number => {
        const m = PULLED.exec(eventsWith(h, p, 'Pulled', 'Successfully pulled image')[0]?.message ?? '');
        return (parseDurationMs(m?.[3] ?? '') ?? NaN) - (parseDurationMs(m?.[2] ?? '') ?? NaN);
      };
      const secondPod = second?.image === PUB_IMAGE ? 'a' : 'b';
      // It asked during the first's pull (else this test proves nothing) and says how long it waited.
      expect(waited(serial, secondPod)).toBeGreaterThan(0);

      const parallel = await startCriKubelet(task.id, { getSecret, serializeImagePulls: false });
      const parallelCalls = timePulls(parallel, SLOW_PULL_MS);
      run(parallel, ...pods(parallel));
      await waitRunning(parallel, 'a', 'c', 'regular', 30_000);
      await waitRunning(parallel, 'b', 'c', 'regular', 30_000);
      const [p1, p2] = [...parallelCalls].sort((x, y) => x.start - y.start);
      expect(p2?.start ?? Infinity).toBeLessThan(p1?.end ?? 0);
    }, 90_000);
  },
  registryUnavailable(),
  'PROBELET_REQUIRE_REGISTRY',
  'the test registries',
);
