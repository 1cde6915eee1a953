/**
 * What `probelet run` tells and refuses on the process runtime, which runs each container's
 * `command` as a process on this host, as the current user — its image, volumes and network
 * ignored. A manifest written for a cluster can then write to host paths without a word
 * (`/www/healthz` created as root by a deployment that mounts a volume at /www), so:
 * the run says so in one line at start (suggesting `--runtime cri` when a CRI runtime answers
 * here); a pod that mounts volumes (a write to the mount path would land on the host) or that
 * runs programs this host does not have is refused unless `--runtime process` was asked for
 * explicitly, and one whose commands write to host paths outside /tmp unless `--host-writes`
 * was (host-commands.ts reads the commands).
 */
import net from 'node:net';
import { userInfo } from 'node:os';
import type { Container, Pod } from '../../api/types.js';
import { hostCommandFindings } from './host-commands.js';
import { clearLongTimeout, setLongTimeout } from '../../util/timer.js';

/** How long the CRI socket gets to accept a connection before it counts as not answering. */
const CRI_ANSWER_TIMEOUT_MS = 300;

/** The one line at the start of a run on the process runtime. */
export function hostRuntimeNotice(criAnswering: string | undefined): string {
  const cri = criAnswering
    ? `a CRI runtime answers at ${criAnswering}: --runtime cri runs the images there`
    : '--runtime cri runs the images with containerd or CRI-O';
  return (
    `probelet: runtime "process": each container's command runs on this host as user ${currentUser()}; ` +
    `no image, volumes or network of its own: pods that mount volumes, need their image's programs or write outside /tmp are not run (${cri})\n`
  );
}

function currentUser(): string {
  try {
    return userInfo().username;
  } catch {
    return String(process.getuid?.() ?? 'unknown');
  }
}

/** Whether a unix socket endpoint (`unix:///path`) accepts a connection, within a short time. */
export function criEndpointAnswers(endpoint: string, timeoutMs = CRI_ANSWER_TIMEOUT_MS): Promise<boolean> {
  const path = endpoint.replace(/^unix:\/\//, '');
  return new Promise((resolve) => {
    const socket = net.connect({ path });
    const done = (answers: boolean): void => {
      clearLongTimeout(timer);
      socket.destroy();
      resolve(answers);
    };
    const timer = setLongTimeout(() => done(false), timeoutMs);
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** `pod "name": container "c" mounts volume "v" at /path` for each mount of the pod, in order. */
export function volumeMountsOf(pod: Pod): string[] {
  const spec = pod.spec;
  if (!spec) return [];
  // Before validation: a pod without `containers` (a `container:` typo) is refused later, not crashed on here.
  const containers: Container[] = [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
  const mounts: string[] = [];
  for (const c of containers) {
    for (const m of c.volumeMounts ?? []) mounts.push(`container "${c.name}" mounts volume "${m.name}" at ${m.mountPath}`);
    for (const d of c.volumeDevices ?? []) mounts.push(`container "${c.name}" maps volume "${d.name}" to ${d.devicePath}`);
  }
  return mounts;
}

/**
 * The pods that mount no volume; each of the others is named on stderr with its mounts, why it
 * is refused and the two ways on. Only asked for when the process runtime was not chosen
 * explicitly: `--runtime process` means "yes, on this host".
 */
export function refuseVolumeMounts(pods: readonly Pod[], stderr: (text: string) => void): Pod[] {
  const kept: Pod[] = [];
  for (const pod of pods) {
    const mounts = volumeMountsOf(pod);
    if (mounts.length === 0) {
      kept.push(pod);
      continue;
    }
    const lines = mounts.map((m) => `  * ${m}\n`).join('');
    stderr(
      `probelet: Pod ${JSON.stringify(podName(pod))} is not run: it mounts volumes, and on the process runtime ` +
        `its commands run on this host without them, so a write to a mount path would land on the host's own path:\n${lines}` +
        `  run it with --runtime cri (containers from their images, volumes mounted), or give --runtime process to run it on this host anyway\n`,
    );
  }
  return kept;
}

/** The pod's name, else what it would be named from (a refusal always names something). */
function podName(pod: Pod): string {
  return pod.metadata?.name || pod.metadata?.generateName || '';
}

/**
 * The pods whose commands can run on this host as they are. Refused, each named on stderr
 * with what was seen (host-commands.ts) and the ways on: a pod that runs programs this host
 * does not have (they come from its image: it was written for a container runtime) unless
 * `--runtime process` was given, and one whose commands write to host paths outside /tmp
 * (as this user, root included) unless `--host-writes` was.
 */
export function refuseHostCommands(
  pods: readonly Pod[],
  asked: { runtimeGiven: boolean; hostWrites: boolean },
  stderr: (text: string) => void,
  path?: string,
): Pod[] {
  const kept: Pod[] = [];
  for (const pod of pods) {
    const found = hostCommandFindings(pod, path);
    const missing = asked.runtimeGiven ? [] : found.missing;
    const writes = asked.hostWrites ? [] : found.writes;
    if (missing.length === 0 && writes.length === 0) {
      kept.push(pod);
      continue;
    }
    const why =
      writes.length > 0
        ? `its commands would write to this host's own files as user ${currentUser()}`
        : 'it needs programs from its image, which the process runtime does not have';
    const lines = [...writes, ...missing].map((m) => `  * ${m}
`).join('');
    const ways = [
      '--runtime cri (containers from their images)',
      ...(writes.length > 0 ? ['--host-writes to let its commands write on this host'] : []),
      ...(missing.length > 0 ? ['--runtime process to run it on this host anyway'] : []),
    ];
    stderr(`probelet: Pod ${JSON.stringify(podName(pod))} is not run on the process runtime: ${why}:\n${lines}  run it with ${ways.join(', or ')}\n`);
  }
  return kept;
}
