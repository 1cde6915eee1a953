/**
 * The kubelet's image step (`EnsureImageExists`) over the scripted runtime given image
 * support, on the FakeClock: pull policies, upstream's event wording, ErrImagePull then
 * ImagePullBackOff with its own 10 s → 20 s back-off (each failed sync requeued after the pod
 * worker's jittered 10 s), the credentials of the pod's pull secrets passed to the runtime,
 * serialized and parallel pulls, and admission asking for `command` only from runtimes that
 * do not run images. A runtime without images pulls nothing.
 */
import { describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../src/api/types.js';
import { Kubelet } from '../../src/kubelet/kubelet.js';
import { shouldPullImage } from '../../src/kubelet/images.js';
import type { PullSecret } from '../../src/kubelet/pull-secrets.js';
import type { ImageInfo, RegistryAuth } from '../../src/runtime/types.js';
import { FakeClock } from '../../src/util/clock.js';
import { FakeRuntime } from '../helpers/fake-runtime.js';
import { closeKubeletsAfterEach } from '../helpers/kubelets.js';

const T0 = Date.UTC(2026, 0, 1);

/**
 * The scripted runtime with images: `local` are present; pulls of `pullable` succeed after
 * 1.5 s, others fail; with `password` set, a pull needs it (else `unauthorized`).
 */
class ImageRuntime extends FakeRuntime {
  readonly runsImages = true;
  readonly local = new Set<string>();
  readonly pullable = new Set<string>();
  readonly pulls: string[] = [];
  readonly auths: Array<RegistryAuth | undefined> = [];
  password: string | undefined;

  constructor(private readonly fakeClock: FakeClock) {
    super(fakeClock);
  }

  imageStatus(image: string): Promise<ImageInfo | undefined> {
    return Promise.resolve(this.local.has(image) ? { ref: `sha256:${image.length}`, size: 1234 } : undefined);
  }

  async pullImage(image: string, _pod: Pod, auth?: RegistryAuth): Promise<ImageInfo> {
    this.pulls.push(image);
    this.auths.push(auth);
    if (this.password !== undefined && auth?.password !== this.password) throw new Error(`rpc error: code = Unknown desc = ${auth?.password ?? 'anonymous'}: unauthorized`);
    if (!this.pullable.has(image)) throw new Error('rpc error: code = NotFound desc = no such image');
    await new Promise<void>((resolve) => this.fakeClock.setTimeout(resolve, 1500));
    this.local.add(image);
    return { ref: 'sha256:x', size: 2_130_593 };
  }
}

const kubelets = closeKubeletsAfterEach();

function setup(
  runtimeKind: 'images' | 'plain' = 'images',
  options: Pick<ConstructorParameters<typeof Kubelet>[0], 'getSecret' | 'serializeImagePulls' | 'maxParallelImagePulls'> = {},
): { clock: FakeClock; runtime: ImageRuntime | FakeRuntime; kubelet: Kubelet; events: () => string[] } {
  const clock = new FakeClock(T0);
  const runtime = runtimeKind === 'images' ? new ImageRuntime(clock) : new FakeRuntime(clock);
  const kubelet = new Kubelet({ runtime, clock, random: () => 0.5, ...options });
  kubelets.push(kubelet);
  return { clock, runtime, kubelet, events: () => kubelet.listEvents().map((e) => `${e.type} ${e.reason} ${e.message}${(e.count ?? 1) > 1 ? ` (x${e.count})` : ''}`) };
}

function pod(container: Partial<Container>, name = 'p', extra: Partial<NonNullable<Pod['spec']>> = {}): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { containers: [{ name: 'c', ...container }], ...extra } };
}

function waiting(kubelet: Kubelet): string | undefined {
  return kubelet.listPods()[0]?.status?.containerStatuses?.[0]?.state?.waiting?.reason;
}

function waitingMessage(kubelet: Kubelet): string | undefined {
  return kubelet.listPods()[0]?.status?.containerStatuses?.[0]?.state?.waiting?.message;
}

/** A `kubernetes.io/dockerconfigjson` Secret for `registry` with this user and password. */
function dockerConfigSecret(registry: string, username: string, password: string): PullSecret {
  const auth = Buffer.from(`${username}:${password}`).toString('base64');
  const config = JSON.stringify({ auths: { [registry]: { username, password, auth } } });
  return { type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': Buffer.from(config).toString('base64') } };
}

describe('kubelet: images', () => {
  it('shouldPullImage: Never → no, Always → yes, IfNotPresent → only when missing', () => {
    expect([shouldPullImage('Never', false), shouldPullImage('Always', true), shouldPullImage('IfNotPresent', true), shouldPullImage('IfNotPresent', false)]).toEqual([false, true, false, true]);
  });

  it('a present image with IfNotPresent: "already present on machine and can be accessed by the pod", then Created/Started; no pull', async () => {
    const { clock, runtime, kubelet, events } = setup();
    (runtime as ImageRuntime).local.add('busybox:1.36');
    expect(kubelet.addPods([pod({ image: 'busybox:1.36' })]).errors).toEqual([]);
    await clock.advance(10);
    expect(events()).toEqual([
      'Normal Pulled Container image "busybox:1.36" already present on machine and can be accessed by the pod',
      'Normal Created Container created',
      'Normal Started Container started',
    ]);
    expect((runtime as ImageRuntime).pulls).toEqual([]);
  });

  it(':latest defaults to Always: pulled even when present, with the pull time and size in the event', async () => {
    const { clock, runtime, kubelet, events } = setup();
    const r = runtime as ImageRuntime;
    r.local.add('busybox:latest');
    r.pullable.add('busybox:latest');
    kubelet.addPods([pod({ image: 'busybox:latest' })]);
    await clock.advance(2000);
    expect(r.pulls).toEqual(['busybox:latest']);
    expect(events().slice(0, 2)).toEqual([
      'Normal Pulling Pulling image "busybox:latest"',
      'Normal Pulled Successfully pulled image "busybox:latest" in 1.5s (1.5s including waiting). Image size: 2130593 bytes.',
    ]);
    expect(kubelet.listPods()[0]?.status?.containerStatuses?.[0]?.state?.running).toBeDefined();
  });

  it('a failing pull: ErrImagePull, then ImagePullBackOff until the 10 s back-off passes, then a pull again and a 20 s back-off; each failed sync requeued after 10 s × jitter', async () => {
    const { clock, runtime, kubelet, events } = setup();
    const r = runtime as ImageRuntime;
    kubelet.addPods([pod({ image: 'nope:1' })]);
    await clock.advance(10);
    expect(r.pulls).toHaveLength(1);
    // The sync after the new sandbox's PLEG event shows the first sync's reason and meets the back-off.
    expect(waiting(kubelet)).toBe('ErrImagePull');
    expect(waitingMessage(kubelet)).toBe('rpc error: code = NotFound desc = no such image');
    expect(events()).toEqual([
      'Normal Pulling Pulling image "nope:1"',
      'Warning Failed Failed to pull image "nope:1": rpc error: code = NotFound desc = no such image',
      'Warning Failed Error: ErrImagePull',
      'Normal BackOff Back-off pulling image "nope:1"',
      'Warning Failed Error: ImagePullBackOff',
    ]);
    // The pod worker's requeue: 10 s × (1 + 0.5 × 0.5) = 12.5 s. Its status shows the previous sync's reason.
    await clock.advance(12_400);
    expect(r.pulls).toHaveLength(1);
    await clock.advance(200);
    expect(r.pulls).toHaveLength(2);
    expect(waiting(kubelet)).toBe('ImagePullBackOff');
    expect(waitingMessage(kubelet)).toBe('Back-off pulling image "nope:1": ErrImagePull: rpc error: code = NotFound desc = no such image');
    // 25 s: 12.5 s since the failed pull, inside its 20 s back-off: no pull.
    await clock.advance(12_500);
    expect(r.pulls).toHaveLength(2);
    expect(waiting(kubelet)).toBe('ErrImagePull');
    // 37.5 s: 25 s since, past 20 s: pulled again.
    await clock.advance(12_500);
    expect(r.pulls).toHaveLength(3);
    expect(runtime.calls.filter((c) => c.startsWith('start'))).toEqual([]);
  });

  it('Never with a missing image: ErrImageNeverPull, no pull', async () => {
    const { clock, runtime, kubelet, events } = setup();
    kubelet.addPods([pod({ image: 'nope:1', imagePullPolicy: 'Never' })]);
    await clock.advance(10);
    expect(waiting(kubelet)).toBe('ErrImageNeverPull');
    // Once at the first sync, once at the sync after the new sandbox's PLEG event; then at each requeue.
    expect(events()).toContain('Warning ErrImageNeverPull Container image "nope:1" is not present with pull policy of Never (x2)');
    await clock.advance(12_500);
    expect(events()).toContain('Warning ErrImageNeverPull Container image "nope:1" is not present with pull policy of Never (x3)');
    expect((runtime as ImageRuntime).pulls).toEqual([]);
  });

  it('imagePullSecrets: the credentials of the Secret for the image\'s registry go to the runtime; a Secret for another registry gives none', async () => {
    const secrets = new Map<string, PullSecret>([
      ['default/pull', dockerConfigSecret('127.0.0.1:5001', 'probelet', 'right')],
      ['default/other', dockerConfigSecret('other.example:5000', 'x', 'y')],
    ]);
    const { clock, runtime, kubelet, events } = setup('images', { getSecret: (ns, name) => Promise.resolve(secrets.get(`${ns}/${name}`)) });
    const r = runtime as ImageRuntime;
    r.password = 'right';
    r.pullable.add('127.0.0.1:5001/private/busybox:test');
    kubelet.addPods([pod({ image: '127.0.0.1:5001/private/busybox:test' }, 'p', { imagePullSecrets: [{ name: 'other' }, { name: 'pull' }] })]);
    await clock.advance(2000);
    expect(r.auths).toEqual([{ username: 'probelet', password: 'right' }]);
    expect(events()).toContain('Normal Pulled Successfully pulled image "127.0.0.1:5001/private/busybox:test" in 1.5s (1.5s including waiting). Image size: 2130593 bytes.');
  });

  it('a wrong password, then the Secret updated: the next pull after the back-off uses the new one', async () => {
    const secrets = new Map<string, PullSecret>([['default/pull', dockerConfigSecret('127.0.0.1:5001', 'probelet', 'wrong')]]);
    const { clock, runtime, kubelet, events } = setup('images', { getSecret: (ns, name) => Promise.resolve(secrets.get(`${ns}/${name}`)) });
    const r = runtime as ImageRuntime;
    r.password = 'right';
    r.pullable.add('127.0.0.1:5001/private/busybox:test');
    kubelet.addPods([pod({ image: '127.0.0.1:5001/private/busybox:test' }, 'p', { imagePullSecrets: [{ name: 'pull' }] })]);
    await clock.advance(10);
    expect(events()).toContain('Warning Failed Failed to pull image "127.0.0.1:5001/private/busybox:test": rpc error: code = Unknown desc = wrong: unauthorized');
    secrets.set('default/pull', dockerConfigSecret('127.0.0.1:5001', 'probelet', 'right'));
    // The requeue at 12.5 s pulls with the new password (1.5 s), starts the container; the next sync shows it.
    await clock.advance(16_000);
    expect(r.auths.map((a) => a?.password)).toEqual(['wrong', 'right']);
    expect(kubelet.listPods()[0]?.status?.containerStatuses?.[0]?.state?.running).toBeDefined();
  });

  it('several matching credentials are tried in turn; all failing, the errors are aggregated as `[a, b]`', async () => {
    const secrets = new Map<string, PullSecret>([
      ['default/a', dockerConfigSecret('127.0.0.1:5001', 'u', 'one')],
      ['default/b', dockerConfigSecret('127.0.0.1:5001/private', 'u', 'two')],
    ]);
    const { clock, runtime, kubelet, events } = setup('images', { getSecret: (ns, name) => Promise.resolve(secrets.get(`${ns}/${name}`)) });
    const r = runtime as ImageRuntime;
    r.password = 'three';
    kubelet.addPods([pod({ image: '127.0.0.1:5001/private/busybox:test' }, 'p', { imagePullSecrets: [{ name: 'a' }, { name: 'b' }] })]);
    await clock.advance(10);
    // The longer key (with the path) first, as the keyring sorts them.
    expect(r.auths.map((a) => a?.password)).toEqual(['two', 'one']);
    expect(events()).toContain(
      'Warning Failed Failed to pull image "127.0.0.1:5001/private/busybox:test": [rpc error: code = Unknown desc = two: unauthorized, rpc error: code = Unknown desc = one: unauthorized]',
    );
  });

  it('a pull secret that cannot be had: FailedToRetrieveImagePullSecret on the pod, and the pull goes on anonymously', async () => {
    const { clock, runtime, kubelet, events } = setup('images', { getSecret: () => Promise.resolve(undefined) });
    const r = runtime as ImageRuntime;
    r.pullable.add('reg.example/x:1');
    kubelet.addPods([pod({ image: 'reg.example/x:1' }, 'p', { imagePullSecrets: [{ name: 'gone' }, { name: '' }] })]);
    await clock.advance(2000);
    expect(events()).toContain('Warning FailedToRetrieveImagePullSecret Unable to retrieve some image pull secrets (gone); attempting to pull the image may not succeed.');
    expect(r.auths).toEqual([undefined]);
  });

  it('a pull Secret whose docker config does not decode (the API server let it through): the start fails with json.Unmarshal\'s error, no pull, never an anonymous one', async () => {
    // `{"auths": "x"}` is a JSON object, all ValidateSecret asks for; the kubelet's keyring cannot read it.
    const malformed: PullSecret = { type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': Buffer.from('{"auths":"x"}').toString('base64') } };
    const { clock, runtime, kubelet, events } = setup('images', { getSecret: () => Promise.resolve(malformed) });
    const r = runtime as ImageRuntime;
    r.pullable.add('reg.example/x:1');
    kubelet.addPods([pod({ image: 'reg.example/x:1' }, 'p', { imagePullSecrets: [{ name: 'broken' }] })]);
    await clock.advance(10);
    const error = 'json: cannot unmarshal string into Go struct field DockerConfigJSON.auths of type credentialprovider.DockerConfig';
    // kubelet 1.35: lookupPullCredentials fails before `Pulling` and without the image back-off,
    // so the sync after the sandbox's PLEG event fails the same way; startContainer's event says
    // it each time, and reasonCache shows it from that second sync on.
    expect(events()).toEqual([`Warning Failed Error: ${error} (x2)`]);
    expect(r.pulls).toEqual([]);
    expect(waiting(kubelet)).toBe(error);
    expect(waitingMessage(kubelet)).toBe(error);
  });

  it('a pull Secret that stops decoding while the image is in back-off: its error, not the back-off (the keyring is made before pullImage checks the back-off)', async () => {
    let secret: PullSecret = dockerConfigSecret('reg.example', 'u', 'p');
    const { clock, runtime, kubelet, events } = setup('images', { getSecret: () => Promise.resolve(secret) });
    const r = runtime as ImageRuntime;
    kubelet.addPods([pod({ image: 'reg.example/nope:1' }, 'p', { imagePullSecrets: [{ name: 'regcred' }] })]);
    // Pulled and failed at once, again after the 10 s back-off (12.5 s, the requeue): now 20 s of back-off.
    await clock.advance(12_600);
    expect(r.pulls).toHaveLength(2);
    const backOffs = events().filter((e) => e.includes('Back-off pulling')).length;
    // Broken inside that back-off: the next sync (25 s) meets the keyring's error, not the back-off.
    secret = { type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': Buffer.from('{"auths":"x"}').toString('base64') } };
    await clock.advance(12_500);
    const error = 'json: cannot unmarshal string into Go struct field DockerConfigJSON.auths of type credentialprovider.DockerConfig';
    expect(events().filter((e) => e.includes('Back-off pulling')).length).toBe(backOffs);
    expect(events().at(-1)).toBe(`Warning Failed Error: ${error}`);
    expect(r.pulls).toHaveLength(2);
  });

  it('serializeImagePulls (default): one pull at a time, the second waits — "in 1.5s (3s including waiting)"', async () => {
    const { clock, runtime, kubelet, events } = setup();
    const r = runtime as ImageRuntime;
    r.pullable.add('a:1').add('b:1');
    kubelet.addPods([pod({ image: 'a:1' }, 'pa'), pod({ image: 'b:1' }, 'pb')]);
    await clock.advance(3100);
    const pulled = events().filter((e) => e.startsWith('Normal Pulled'));
    expect(pulled).toEqual([
      'Normal Pulled Successfully pulled image "a:1" in 1.5s (1.5s including waiting). Image size: 2130593 bytes.',
      'Normal Pulled Successfully pulled image "b:1" in 1.5s (3s including waiting). Image size: 2130593 bytes.',
    ]);
  });

  it('serializeImagePulls false: pulls at once; maxParallelImagePulls 2 lets the third wait', async () => {
    const { clock, runtime, kubelet, events } = setup('images', { serializeImagePulls: false, maxParallelImagePulls: 2 });
    const r = runtime as ImageRuntime;
    r.pullable.add('a:1').add('b:1').add('c:1');
    kubelet.addPods([pod({ image: 'a:1' }, 'pa'), pod({ image: 'b:1' }, 'pb'), pod({ image: 'c:1' }, 'pc')]);
    await clock.advance(3100);
    expect(events().filter((e) => e.startsWith('Normal Pulled')).map((e) => /in (\S+) \((\S+) including/.exec(e)?.slice(1).join('/'))).toEqual(['1.5s/1.5s', '1.5s/1.5s', '1.5s/3s']);
  });

  it('admission: a container without command is fine for a runtime that runs images, refused for one that runs commands', () => {
    const images = setup('images').kubelet.addPods([pod({ image: 'busybox:1.36' })]);
    expect(images.errors).toEqual([]);
    const plain = setup('plain').kubelet.addPods([pod({ image: 'busybox:1.36' })]);
    expect(plain.errors[0]?.message).toContain('spec.containers[0].command: Required value');
  });

  it('a runtime without images (the process runtime) has nothing to pull: no image events', async () => {
    const { clock, kubelet, events } = setup('plain');
    kubelet.addPods([pod({ image: 'busybox:1.36', command: ['sleep', '1'] })]);
    await clock.advance(10);
    expect(events()).toEqual(['Normal Created Container created', 'Normal Started Container started']);
  });
});
