/**
 * The kubelet's image step (`EnsureImageExists`) over the scripted runtime given image
 * support, on the FakeClock: pull policies, upstream's event wording, ErrImagePull then
 * ImagePullBackOff with its own 10 s → 20 s back-off, and admission asking for `command`
 * only from runtimes that do not run images. A runtime without images pulls nothing.
 */
import { describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../src/api/types.js';
import { Kubelet } from '../../src/kubelet/kubelet.js';
import { shouldPullImage } from '../../src/kubelet/images.js';
import type { ImageInfo } from '../../src/runtime/types.js';
import { FakeClock } from '../../src/util/clock.js';
import { FakeRuntime } from '../helpers/fake-runtime.js';
import { closeKubeletsAfterEach } from '../helpers/kubelets.js';

const T0 = Date.UTC(2026, 0, 1);

/** The scripted runtime with images: `local` are present; pulls of `pullable` succeed after 1.5 s, others fail. */
class ImageRuntime extends FakeRuntime {
  readonly runsImages = true;
  readonly local = new Set<string>();
  readonly pullable = new Set<string>();
  readonly pulls: string[] = [];

  constructor(private readonly fakeClock: FakeClock) {
    super(fakeClock);
  }

  imageStatus(image: string): Promise<ImageInfo | undefined> {
    return Promise.resolve(this.local.has(image) ? { ref: `sha256:${image.length}`, size: 1234 } : undefined);
  }

  async pullImage(image: string): Promise<ImageInfo> {
    this.pulls.push(image);
    if (!this.pullable.has(image)) throw new Error('rpc error: code = NotFound desc = no such image');
    await new Promise<void>((resolve) => this.fakeClock.setTimeout(resolve, 1500));
    this.local.add(image);
    return { ref: 'sha256:x', size: 2_130_593 };
  }
}

const kubelets = closeKubeletsAfterEach();

function setup(runtimeKind: 'images' | 'plain' = 'images'): { clock: FakeClock; runtime: ImageRuntime | FakeRuntime; kubelet: Kubelet; events: () => string[] } {
  const clock = new FakeClock(T0);
  const runtime = runtimeKind === 'images' ? new ImageRuntime(clock) : new FakeRuntime(clock);
  const kubelet = new Kubelet({ runtime, clock, random: () => 0.5 });
  kubelets.push(kubelet);
  return { clock, runtime, kubelet, events: () => kubelet.listEvents().map((e) => `${e.type} ${e.reason} ${e.message}${(e.count ?? 1) > 1 ? ` (x${e.count})` : ''}`) };
}

function pod(container: Partial<Container>): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, spec: { containers: [{ name: 'c', ...container }] } };
}

function waiting(kubelet: Kubelet): string | undefined {
  return kubelet.listPods()[0]?.status?.containerStatuses?.[0]?.state?.waiting?.reason;
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

  it('a failing pull: ErrImagePull, then ImagePullBackOff until the 10 s back-off passes, then a pull again and a 20 s back-off', async () => {
    const { clock, runtime, kubelet, events } = setup();
    const r = runtime as ImageRuntime;
    kubelet.addPods([pod({ image: 'nope:1' })]);
    await clock.advance(10);
    expect(r.pulls).toHaveLength(1);
    expect(waiting(kubelet)).toBe('ErrImagePull');
    expect(events()).toEqual([
      'Normal Pulling Pulling image "nope:1"',
      'Warning Failed Failed to pull image "nope:1": rpc error: code = NotFound desc = no such image',
      'Warning Failed Error: ErrImagePull',
    ]);
    await clock.advance(4000);
    expect(waiting(kubelet)).toBe('ErrImagePull');
    await clock.advance(1000);
    expect(waiting(kubelet)).toBe('ImagePullBackOff');
    expect(events()).toContain('Normal BackOff Back-off pulling image "nope:1"');
    expect(events()).toContain('Warning Failed Error: ImagePullBackOff');
    expect(r.pulls).toHaveLength(1);
    await clock.advance(5000);
    expect(r.pulls).toHaveLength(2);
    // The second failure doubles the back-off: no pull for 20 s.
    await clock.advance(19_000);
    expect(r.pulls).toHaveLength(2);
    await clock.advance(1500);
    expect(r.pulls).toHaveLength(3);
    expect(runtime.calls.filter((c) => c.startsWith('start'))).toEqual([]);
  });

  it('Never with a missing image: ErrImageNeverPull, no pull', async () => {
    const { clock, runtime, kubelet, events } = setup();
    kubelet.addPods([pod({ image: 'nope:1', imagePullPolicy: 'Never' })]);
    await clock.advance(10);
    expect(waiting(kubelet)).toBe('ErrImageNeverPull');
    expect(events()).toContain('Warning ErrImageNeverPull Container image "nope:1" is not present with pull policy of Never');
    expect((runtime as ImageRuntime).pulls).toEqual([]);
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
