/**
 * `probelet run`'s pull Secrets: there is no API server, so a pod's `imagePullSecrets` name
 * Secret documents of the manifests themselves. The files are read again at each pull that
 * needs them (never for standard input, which is read once), as the kubelet's secret manager
 * follows a Secret's updates: fix a wrong password in the file and the next pull uses it.
 * A Secret edited into one the API server would refuse is no Secret (the loader refuses it):
 * its problem is printed once, as the kubelet logs why it could not get a Secret, and the
 * pull goes on with `FailedToRetrieveImagePullSecret`.
 */
import { stat } from 'node:fs/promises';
import { formatProblem, loadManifests, STDIN_PATH, type ManifestLoad } from '../../api/documents.js';
import { secretData } from '../../api/secret-validation.js';
import type { PullSecret, SecretGetter } from '../../kubelet/pull-secrets.js';

/**
 * The getter over `files`, starting from the load that gave the pods (its Secrets, and its
 * problems, printed then); `warn` gets each problem a later reading finds, once — one made by an
 * edit before the first pull too.
 */
export function manifestSecretGetter(files: readonly string[], loaded: Pick<ManifestLoad, 'configs' | 'problems'>, warn: (line: string) => void = () => undefined): SecretGetter {
  let configs = loaded.configs ?? [];
  const rereadable = !files.includes(STDIN_PATH);
  let seen: string | undefined;
  let printed = loaded.problems.map(formatProblem);
  return async (namespace, name) => {
    // Read again only when a file changed (size or time): a big manifest is not parsed per pull.
    const now = rereadable ? await signature(files) : undefined;
    if (now !== undefined && now !== seen) {
      // A file that cannot be read now (being rewritten) leaves the last Secrets in force.
      const load = await loadManifests(files).catch(() => undefined);
      if (load) {
        configs = load.configs ?? [];
        const problems = load.problems.map(formatProblem);
        // The first load's problems were printed with the pods; then only new ones.
        for (const p of problems) if (!printed.includes(p)) warn(p);
        printed = problems;
        seen = now;
      }
    }
    const doc = configs.find((c) => c.kind === 'Secret' && (c.namespace || 'default') === namespace && c.name === name);
    return doc === undefined ? undefined : asPullSecret(doc.value);
  };
}

/** The files' sizes and modification times, or undefined when one cannot be read. */
async function signature(files: readonly string[]): Promise<string | undefined> {
  try {
    const stats = await Promise.all(files.map((f) => stat(f)));
    return stats.map((s) => `${s.size}:${s.mtimeMs}`).join(',');
  } catch {
    return undefined;
  }
}

/** The Secret as the API would serve it: `stringData` merged into `data` (base64), which it wins over. */
function asPullSecret(value: Record<string, unknown>): PullSecret {
  const data: Record<string, string> = {};
  for (const [key, bytes] of secretData(value)) data[key] = bytes.toString('base64');
  return { ...(typeof value['type'] === 'string' ? { type: value['type'] } : {}), data };
}
