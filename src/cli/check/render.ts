/**
 * `check --helm CHART` and `check --kustomize DIR`: the manifests as the cluster would get
 * them, rendered by the user's own `helm template` / `kustomize build` (or `kubectl
 * kustomize`), never by a re-implementation. Helm writes `# Source: CHART/templates/x.yaml`
 * above each document: findings keep the rendered line and name the template they came from.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { MAX_INPUT_BYTES } from '../../api/documents.js';
import { CliUsageError } from '../io.js';

/** Rendered manifests, with the template each rendered line came from (helm only). */
export interface Rendered {
  /** The name findings carry as their file: `helm template ./chart`, `kustomize build overlays/prod`. */
  source: string;
  text: string;
  /** The chart template (a path under the chart folder) of a rendered line, if helm named one. */
  templateAt(line: number): string | undefined;
}

const HELM_INSTALL = 'install helm 3 (https://helm.sh/docs/intro/install/; in a probelet checkout `npm run cluster:build` builds it and `eval "$(npm run -s cluster:env)"` puts it on PATH), or render yourself: helm template RELEASE CHART | probelet check -';
const KUSTOMIZE_INSTALL = 'install kubectl (https://kubernetes.io/docs/tasks/tools/) or kustomize (https://kubectl.docs.kubernetes.io/installation/kustomize/), or render yourself: kubectl kustomize DIR | probelet check -';

/** Runs `command args`, resolving its stdout; `undefined` when the command is not installed. */
function run(command: string, args: readonly string[]): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { maxBuffer: MAX_INPUT_BYTES, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') return resolve(undefined);
      if (err) return reject(new CliUsageError(`${command} ${args.join(' ')} failed: ${stderr.trim() || err.message}`));
      resolve(stdout);
    });
  });
}

/** `helm template probelet CHART -f VALUES… --set K=V…`. */
export async function renderHelm(chart: string, values: readonly string[], sets: readonly string[]): Promise<Rendered> {
  const args = ['template', 'probelet', chart, ...values.flatMap((v) => ['--values', v]), ...sets.flatMap((s) => ['--set', s])];
  const text = await run(process.env['PROBELET_HELM'] ?? 'helm', args);
  if (text === undefined) throw new CliUsageError(`--helm: helm is not installed: ${HELM_INSTALL}`);
  return { source: `helm template ${chart}`, text, templateAt: sourceIndex(text, chart) };
}

/** `kustomize build DIR`, else `kubectl kustomize DIR`. */
export async function renderKustomize(dir: string): Promise<Rendered> {
  let text = await run('kustomize', ['build', dir]);
  let source = `kustomize build ${dir}`;
  if (text === undefined) {
    text = await run('kubectl', ['kustomize', dir]);
    source = `kubectl kustomize ${dir}`;
  }
  if (text === undefined) throw new CliUsageError(`--kustomize: neither kustomize nor kubectl is installed: ${KUSTOMIZE_INSTALL}`);
  return { source, text, templateAt: () => undefined };
}

const SOURCE_COMMENT = '# Source: ';

/**
 * Line → template from helm's `# Source: NAME/templates/x.yaml` comments (NAME is the
 * chart's name, the folder is `chart`): each comment holds until the next.
 */
function sourceIndex(text: string, chart: string): (line: number) => string | undefined {
  const starts: { line: number; template: string }[] = [];
  let line = 1;
  let at = 0;
  while (at <= text.length) {
    const end = text.indexOf('\n', at);
    const stop = end < 0 ? text.length : end;
    if (text.startsWith(SOURCE_COMMENT, at)) {
      const named = text.slice(at + SOURCE_COMMENT.length, stop).trim();
      const slash = named.indexOf('/');
      starts.push({ line, template: join(chart, slash < 0 ? named : named.slice(slash + 1)) });
    }
    if (end < 0) break;
    at = end + 1;
    line++;
  }
  return (target) => {
    let found: string | undefined;
    for (const start of starts) {
      if (start.line > target) break;
      found = start.template;
    }
    return found;
  };
}
