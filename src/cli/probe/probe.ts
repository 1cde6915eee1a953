import { performance } from 'node:perf_hooks';
import { Command, Option } from 'commander';
import { setPodDefaults, setProbeDefaults } from '../../api/defaults.js';
import { formatProblem, loadManifests, skippedNote } from '../../api/documents.js';
import { podsOf } from '../../api/manifest.js';
import type { Container, Pod, PodStatus, Probe } from '../../api/types.js';
import { validatePod, validateProbe } from '../../api/validation.js';
import { LocalCommandRunner } from '../../probe/local-runner.js';
import type { ProbeClose } from '../../probe/types.js';
import { Prober, type ProbeDetails } from '../../prober/prober.js';
import type { ProbeType } from '../../prober/types.js';
import { addExamples, outputOption, parseWholeSeconds } from '../flags.js';
import { requireReadable } from '../inputs.js';
import { CliUsageError, type CliIO } from '../io.js';
import { probeCloseOption } from './close-flag.js';

const PROBE_TYPES: readonly ProbeType[] = ['liveness', 'readiness', 'startup'];

interface ProbeFlags {
  httpGet?: string;
  header: string[];
  tcp?: string;
  grpc?: string;
  service?: string;
  exec?: boolean;
  timeout: string;
  type: string;
  filename?: string;
  pod?: string;
  container?: string;
  podIp: string;
  output: string;
  probeClose: ProbeClose;
}

/** What one `probelet probe` run is about: the pod and container the probe belongs to. */
interface ProbeTarget {
  pod: Pod;
  container: Container;
  podIP: string;
  /** How the probe is shown to the user (`httpGet http://…`). */
  description: string;
  /** Problems of other documents of the manifest, printed on stderr before the verdict. */
  problems?: string[];
}

export function registerProbeCommand(program: Command, io: CliIO, setExit: (code: number) => void): void {
  const command = program
    .command('probe')
    .description('Run one probe once, exactly as the kubelet would, and print its verdict and message.')
    .argument('[command...]', 'with --exec: the command and its arguments, after --')
    .option('--http-get <url>', 'HTTP GET probe of this URL (http or https)')
    .option('-H, --header <header>', "HTTP header 'Name: value' (repeatable)", collect, [])
    .option('--tcp <host:port>', 'TCP socket probe')
    .option('--grpc <host:port>', 'gRPC health probe (grpc.health.v1.Health/Check)')
    .option('--service <name>', 'with --grpc: the service to ask about (default: the whole server)')
    .option('--exec', 'exec probe: runs the command given after -- as a local process')
    .option('--timeout <duration>', "the probe's timeoutSeconds: 1s, 2m or plain seconds; whole seconds, as the API keeps it", '1')
    .addOption(new Option('--type <type>', 'probe type').choices(PROBE_TYPES).default('readiness'))
    .option('-f, --filename <manifest>', 'take the probe from a manifest (Pod, List or a workload template)')
    .option('--pod <name>', 'with -f: the pod, when the manifest holds several')
    .option('--container <name>', 'with -f: the container whose probe to run')
    .option('--pod-ip <ip>', 'with -f: the pod IP probes default to', '127.0.0.1')
    .addOption(outputOption(['text', 'json'] as const, 'output format'))
    .addOption(probeCloseOption())
    .action(async (args: string[], flags: ProbeFlags, cmd: Command) => {
      checkFlagCombination(args, flags, (option) => cmd.getOptionValueSource(option) === 'cli');
      setExit(await runProbeCommand(args, flags, io));
    });
  addExamples(command, [
    'probelet probe --http-get http://127.0.0.1:8080/healthz --timeout 2s',
    'probelet probe --exec -- cat /tmp/ready',
    'probelet probe -f pod.yaml --container app --type liveness',
  ]);
}

/**
 * Refuses flags that the chosen form would silently ignore (`-f` with `--tcp`, `--timeout`
 * with `-f`, `--service` without `--grpc`...): a user who gives them expects them to count.
 * `given` tells whether an option (by attribute name) came from the command line, not a default.
 */
function checkFlagCombination(command: string[], flags: ProbeFlags, given: (option: string) => boolean): void {
  const named = (pairs: [boolean, string][]): string => pairs.filter(([on]) => on).map(([, name]) => name).join(', ');
  if (flags.filename !== undefined) {
    const extra = named([
      [flags.httpGet !== undefined, '--http-get'],
      [flags.tcp !== undefined, '--tcp'],
      [flags.grpc !== undefined, '--grpc'],
      [flags.exec === true, '--exec'],
      [flags.header.length > 0, '--header'],
      [flags.service !== undefined, '--service'],
      [given('timeout'), '--timeout'],
      [command.length > 0, 'a command'],
    ]);
    if (extra) throw new CliUsageError(`-f: the probe comes from the manifest; ${extra} cannot be given with it`);
    return;
  }
  const manifestOnly = named([
    [flags.pod !== undefined, '--pod'],
    [flags.container !== undefined, '--container'],
    [given('podIp'), '--pod-ip'],
  ]);
  if (manifestOnly) throw new CliUsageError(`${manifestOnly}: only with -f MANIFEST`);
  if (flags.header.length > 0 && flags.httpGet === undefined) throw new CliUsageError('--header: only with --http-get');
  if (flags.service !== undefined && flags.grpc === undefined) throw new CliUsageError('--service: only with --grpc');
  if (command.length > 0 && !flags.exec) {
    throw new CliUsageError(`unexpected arguments ${JSON.stringify(command)}: a command goes with --exec -- CMD [ARG...]`);
  }
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

async function runProbeCommand(command: string[], flags: ProbeFlags, io: CliIO): Promise<number> {
  const probeType = flags.type as ProbeType;
  if (flags.filename !== undefined) await requireReadable([flags.filename]);
  const target = flags.filename !== undefined ? await targetFromManifest(flags, probeType) : targetFromFlags(command, flags, probeType);
  for (const problem of target.problems ?? []) io.stderr(`probelet: ${problem}\n`);
  const runner = new LocalCommandRunner({
    env: { ...stringEnv(process.env), ...staticEnv(target.container) },
    cwd: target.container.workingDir,
    // One command, then exit: forking from here is cheaper than starting a spawner.
    spawner: false,
  });
  const prober = new Prober({ runner, probeClose: flags.probeClose });
  const status: PodStatus = { podIP: target.podIP, phase: 'Running' };
  const started = performance.now();
  const details = await prober.probeWithDetails(probeType, target.pod, status, target.container, 'probelet://probe');
  const durationMs = Math.round((performance.now() - started) * 10) / 10;

  if (flags.output === 'json') {
    io.stdout(
      `${JSON.stringify({
        result: details.result,
        outcome: details.outcome.result,
        output: details.outcome.output,
        error: details.error ? details.error.message : null,
        durationMs,
      })}\n`,
    );
  } else {
    io.stdout(formatText(target, probeType, details, durationMs));
  }
  const problems = target.problems?.length ?? 0;
  if (problems > 0) {
    // The one rule of every command: a dropped document is exit 2, after the rest was done.
    io.stderr(`probelet: ${problems} problem${problems === 1 ? '' : 's'} in ${flags.filename ?? ''} (above): the probe ran, the code says the input needs fixing\n`);
    return 2;
  }
  if (details.error) return 2;
  return details.result === 'success' ? 0 : 1;
}

function formatText(target: ProbeTarget, probeType: ProbeType, details: ProbeDetails, durationMs: number): string {
  const verdict = details.error ? 'errored' : details.outcome.result;
  const event = details.event
    ? `${details.event.type} ${details.event.reason}: ${details.event.message}`
    : details.outcome.result === 'success'
      ? '(none: probe succeeded)'
      : '(none: probe unknown without error)';
  const lines = [
    `Probe:    ${probeType} ${target.description}`,
    `Verdict:  ${verdict}`,
    `Event:    ${event}`,
    `Took:     ${durationMs}ms`,
  ];
  return `${lines.join('\n')}\n`;
}

/** `--timeout` stands for `timeoutSeconds`: any duration, in whole seconds (the API's unit). */
function parseTimeout(text: string): number {
  return parseWholeSeconds(text, '--timeout', 'timeoutSeconds');
}

/** Splits `host:port` (IPv6 as `[::1]:80`), naming the flag in any error. */
function parseHostPort(flag: string, text: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(text);
  const port = match ? Number(match[3]) : NaN;
  if (!match || port < 1 || port > 65535) {
    throw new CliUsageError(`${flag}: invalid value ${JSON.stringify(text)}: expected HOST:PORT with a port from 1 to 65535`);
  }
  return { host: match[1] ?? match[2] ?? '', port };
}

function targetFromFlags(command: string[], flags: ProbeFlags, probeType: ProbeType): ProbeTarget {
  const chosen = [flags.httpGet, flags.tcp, flags.grpc, flags.exec].filter((x) => x !== undefined).length;
  if (chosen !== 1) {
    throw new CliUsageError(
      'probe: give exactly one of --http-get URL, --tcp HOST:PORT, --grpc HOST:PORT, --exec -- CMD [ARG...] or -f MANIFEST',
    );
  }
  const timeoutSeconds = parseTimeout(flags.timeout);
  let handler: Probe;
  let podIP = '127.0.0.1';
  let description: string;
  if (flags.httpGet !== undefined) {
    let url: URL;
    try {
      url = new URL(flags.httpGet);
    } catch {
      throw new CliUsageError(`--http-get: invalid URL ${JSON.stringify(flags.httpGet)}: expected e.g. http://127.0.0.1:8080/healthz`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new CliUsageError(`--http-get: unsupported scheme ${JSON.stringify(url.protocol.slice(0, -1))}: use http or https`);
    }
    const https = url.protocol === 'https:';
    handler = {
      httpGet: {
        scheme: https ? 'HTTPS' : 'HTTP',
        host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
        port: url.port ? Number(url.port) : https ? 443 : 80,
        path: `${url.pathname}${url.search}`,
        httpHeaders: flags.header.map(parseHeader),
      },
    };
    description = `httpGet ${url.href}`;
  } else if (flags.tcp !== undefined) {
    const { host, port } = parseHostPort('--tcp', flags.tcp);
    handler = { tcpSocket: { host, port } };
    description = `tcpSocket ${flags.tcp}`;
  } else if (flags.grpc !== undefined) {
    const { host, port } = parseHostPort('--grpc', flags.grpc);
    podIP = host;
    handler = { grpc: { port, service: flags.service ?? '' } };
    description = `grpc ${flags.grpc}${flags.service ? ` service ${JSON.stringify(flags.service)}` : ''}`;
  } else {
    if (command.length === 0) throw new CliUsageError('--exec: give the command after --, e.g. probelet probe --exec -- cat /tmp/ready');
    handler = { exec: { command } };
    description = `exec ${JSON.stringify(command)}`;
  }
  const probe = setProbeDefaults({ ...handler, timeoutSeconds });
  const errors = validateProbe(probe, probeType, probeFieldName(probeType));
  if (errors.length > 0) throw new CliUsageError(`invalid probe:\n${errors.map((e) => `  ${String(e)}`).join('\n')}`);
  const container: Container = { name: 'probe', [probeFieldName(probeType)]: probe };
  const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'probe', namespace: 'default', uid: 'probe' }, spec: { containers: [container] } };
  return { pod, container, podIP, description };
}

function parseHeader(text: string): { name: string; value: string } {
  const colon = text.indexOf(':');
  if (colon <= 0) throw new CliUsageError(`--header: invalid value ${JSON.stringify(text)}: expected 'Name: value'`);
  return { name: text.slice(0, colon).trim(), value: text.slice(colon + 1).trim() };
}

function probeFieldName(probeType: ProbeType): 'livenessProbe' | 'readinessProbe' | 'startupProbe' {
  return `${probeType}Probe` as const;
}

async function targetFromManifest(flags: ProbeFlags, probeType: ProbeType): Promise<ProbeTarget> {
  const path = flags.filename ?? '';
  // Other documents may be broken or of other kinds: they matter only if the target is not found.
  const load = await loadManifests([path]);
  const loaded = podsOf(load.objects);
  const problems = [...load.problems, ...loaded.problems].map(formatProblem);
  const unusable = (message: string): CliUsageError => new CliUsageError([...problems, message].join('\n'));
  const sources = loaded.pods.map((p) => ({ pod: setPodDefaults(p.pod), from: p }));
  const all: Pod[] = sources.map((s) => s.pod);
  const pods = flags.pod === undefined ? sources : sources.filter((s) => s.pod.metadata?.name === flags.pod);
  const candidates = pods.flatMap(({ pod, from }) => {
    const containers = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
    return containers
      .filter((c) => (flags.container === undefined ? true : c.name === flags.container))
      .map((container) => {
        // file:line of the container, so the user sees which of the documents each one is.
        const list = (pod.spec?.containers ?? []).includes(container) ? 'containers' : 'initContainers';
        const index = (list === 'containers' ? pod.spec?.containers : pod.spec?.initContainers)?.indexOf(container) ?? 0;
        const at = from.object.position([...from.templatePath, 'spec', list, index]);
        return { pod, container, at: `${from.object.source}:${at.line}` };
      });
  });
  const where = `${path}${flags.pod ? ` (pod ${flags.pod})` : ''}`;
  if (candidates.length === 0) throw unusable(notFound(path, flags, all, skippedNote(load.skipped)));
  const field = probeFieldName(probeType);
  // Only a container with the probe asked for can be meant: the others are no candidates.
  const probed = candidates.filter((c) => c.container[field]);
  const choice = probed.length > 0 ? probed : candidates;
  const first = choice[0];
  if (choice.length > 1 || first === undefined) {
    const names = choice.length > 10 ? `${choice.length} of them` : choice.map((c) => `${c.pod.metadata?.name}/${c.container.name} at ${c.at}`).join(', ');
    const which = probed.length > 0 ? `several containers have a ${field}` : `no container has a ${field}; several match`;
    throw unusable(`${where}: ${which} (${names}); choose one with --pod and --container`);
  }
  const { pod, container } = first;
  if (!container[field]) {
    throw unusable(`${where}: container ${JSON.stringify(container.name)} has no ${field}`);
  }
  const errors = validatePod(pod);
  if (errors.length > 0) throw unusable(`${where}: invalid pod:\n${errors.map((e) => `  ${String(e)}`).join('\n')}`);
  return { pod, container, podIP: flags.podIp, description: `of ${pod.metadata?.name}/${container.name} from ${path}`, problems };
}

/** Why `-f` found no container to probe, naming what the manifest does hold. */
function notFound(path: string, flags: ProbeFlags, all: readonly Pod[], skipped: string): string {
  if (all.length === 0) return `${path}: no Pod or workload in it${skipped ? ` (${skipped})` : ''}: give a manifest with a pod template`;
  const exists = `pods and containers in ${path}: ${describePods(all)}`;
  if (flags.pod !== undefined && !all.some((p) => p.metadata?.name === flags.pod)) return `${path}: no pod named ${JSON.stringify(flags.pod)}; ${exists}`;
  if (flags.container !== undefined) {
    return `${path}: no container named ${JSON.stringify(flags.container)}${flags.pod ? ` in pod ${flags.pod}` : ''}; ${exists}`;
  }
  return `${path}: the pod has no containers; ${exists}`;
}

/** `web (app, sidecar), db (postgres)`: at most 10 pods, then a count. */
function describePods(pods: readonly Pod[]): string {
  const named = pods.slice(0, 10).map((p) => {
    const containers = [...(p.spec?.containers ?? []), ...(p.spec?.initContainers ?? [])].map((c) => c.name);
    return `${p.metadata?.name ?? ''} (${containers.join(', ') || 'no containers'})`;
  });
  return `${named.join(', ')}${pods.length > 10 ? ` and ${pods.length - 10} more` : ''}`;
}

/** The container's literal env values, as an exec probe run locally would see them. */
function staticEnv(container: Container): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of container.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
  return env;
}

function stringEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}
