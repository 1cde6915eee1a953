/**
 * `image-pull-failure`: the image never came (waiting `ErrImagePull` / `ImagePullBackOff` …, or
 * `Failed to pull image` events), so nothing of the container ran and its probes played no part.
 * Asked first: it hides every other cause.
 */
import type { Statement } from '../causes.js';
import type { Diagnosis } from '../diagnosis.js';
import { IMAGE_WAITING_REASONS } from '../kubelet-words.js';
import type { ContainerTimeline } from '../timeline.js';
import { make, plural } from './common.js';

export function imagePull(t: ContainerTimeline): Diagnosis | undefined {
  const waiting = t.waiting && IMAGE_WAITING_REASONS.has(t.waiting.reason) ? t.waiting : undefined;
  if (!waiting && t.pullFailures.length === 0) return undefined;
  // A pull that failed once and then worked is history, not the cause.
  if (!waiting && t.instances.some((i) => i.from === 'state' && i.state === 'running')) return undefined;
  const failed = t.pullFailures.find((g) => g.message.startsWith('Failed to pull image'));
  const detail = failed?.message ?? waiting?.message ?? waiting?.reason ?? '';
  const attempts = failed?.count ?? 0;
  const evidence: Statement[] = [];
  if (waiting) evidence.push({ text: `waiting: ${waiting.reason}${waiting.message ? ` (${waiting.message})` : ''}`, confidence: 'certain', from: 'status' });
  for (const g of t.pullFailures) evidence.push({ text: `${g.reason} ×${g.count}: ${g.message}`, confidence: 'certain', from: 'events' });
  const notFound = /not found|manifest unknown|NotFound/i.test(detail);
  const auth = /unauthorized|authorization failed|denied|403 Forbidden|401 Unauthorized/i.test(detail);
  const why = notFound ? 'the registry has no such image or tag' : auth ? 'the registry refused the credentials' : 'the pull failed';
  const fix = notFound
    ? `set image to a tag that exists (now ${JSON.stringify(t.image)}): check it with \`crane ls\` or the registry's UI; the kubelet retries with back-off up to 5 min between pulls`
    : auth
      ? `give the pod an imagePullSecrets entry (or the ServiceAccount one) with credentials for the registry of ${JSON.stringify(t.image)}`
      : `make ${JSON.stringify(t.image)} reachable from the node (registry address, network, proxy), or set image to one that is`;
  return make(t, 'image-pull-failure', `${why}: ${detail}${attempts > 0 ? ` (${plural(attempts, 'failed pull')})` : ''}; nothing of the container ever ran, so its probes played no part`, evidence, { pullFailures: attempts }, { text: fix });
}
