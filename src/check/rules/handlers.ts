/**
 * What exec probes run and how often: commands that prove nothing or cost a lot, and the
 * exec-probe load certsuite limits (each exec probe is a process spawned in the container
 * by the runtime on every period).
 */
import type { Container } from '../../api/types.js';
import type { ContainerContext, Rule, RuleFinding } from '../types.js';
import { containersOfPod, handlerOf, probesOf, who, type ProbeAt } from './probes.js';

/** Kyverno's list: `jcmd` attaches to the JVM (slow, heavy), `ps` and `ls` succeed whether or not the app works. */
const FORBIDDEN_COMMANDS: ReadonlySet<string> = new Set(['jcmd', 'ps', 'ls']);

/** The program names a command runs, shell scripts (`sh -c "a | b && c"`) included. */
function programsOf(command: readonly string[]): string[] {
  const words = command.flatMap((arg) => arg.split(/[\s;|&()`$]+/)).filter((w) => w !== '');
  return words.map((w) => w.slice(w.lastIndexOf('/') + 1));
}

export const execProbeForbiddenCommand: Rule = {
  id: 'exec-probe-forbidden-command',
  severity: 'warning',
  summary: 'A liveness exec probe runs jcmd, ps or ls.',
  explain: `What: the command of a liveness exec probe runs jcmd, ps or ls.
Why: ps and ls succeed whether or not the application can do its work, so the probe never detects
a hang; jcmd attaches to the JVM on every period, which is slow (often beyond the 1 s default
timeout, so the probe fails and kills a healthy JVM) and costs CPU in the container.
Fix: probe an endpoint of the application (httpGet, grpc, tcpSocket), or a command that asks the
application itself.
Example:
  livenessProbe:
    httpGet: { path: /actuator/health/liveness, port: http }`,
  equivalents: ['Kyverno deny-commands-in-exec-probe'],
  check(ctx): RuleFinding[] {
    const out: RuleFinding[] = [];
    for (const at of probesOf(ctx)) {
      if (at.type !== 'liveness' || handlerOf(at.probe) !== 'exec') continue;
      const found = programsOf(at.probe.exec?.command ?? []).filter((p) => FORBIDDEN_COMMANDS.has(p));
      if (found.length === 0) continue;
      out.push({ path: [...at.path, 'exec', 'command'], message: `the liveness probe of ${who(ctx)} runs ${[...new Set(found)].join(', ')}: it succeeds whether or not the app works (or, for jcmd, is slow and heavy)` });
    }
    return out;
  },
};

/** certsuite's limits: at most 10 exec probes per workload, each at most every 10 s. */
export const MAX_EXEC_PROBES = 10;
export const MIN_EXEC_PERIOD_SECONDS = 10;

function execProbes(ctx: ContainerContext, container: Container, role: ContainerContext['role']): ProbeAt[] {
  return probesOf({ ...ctx, container, role }).filter((at) => handlerOf(at.probe) === 'exec');
}

export const execProbeLoad: Rule = {
  id: 'exec-probe-load',
  severity: 'info',
  summary: 'More than 10 exec probes in one workload, or an exec probe more often than every 10 s.',
  explain: `What: the pod has more than ${MAX_EXEC_PROBES} exec probes, or an exec probe with periodSeconds below ${MIN_EXEC_PERIOD_SECONDS}.
Why: every exec probe is a new process started by the container runtime inside the container on
every period; at density this costs real CPU on the node (about a third of a node's CPU for 100
pods, kubernetes/kubernetes #82440) and each start can take close to the 1 s default timeout.
Fix: prefer httpGet, grpc or tcpSocket probes; if exec is needed, probe less often.
Example:
  livenessProbe:
    exec: { command: [/bin/healthcheck] }
    periodSeconds: 10
    timeoutSeconds: 5`,
  equivalents: ['certsuite performance-max-resources-exec-probes'],
  check(ctx): RuleFinding[] {
    const out: RuleFinding[] = [];
    for (const at of execProbes(ctx, ctx.container, ctx.role)) {
      const period = at.probe.periodSeconds ?? 0;
      if (period < MIN_EXEC_PERIOD_SECONDS) {
        out.push({ path: [...at.path, 'periodSeconds'], message: `the ${at.type} exec probe of ${who(ctx)} runs every ${period}s: each run spawns a process in the container; ${MIN_EXEC_PERIOD_SECONDS}s or more keeps the node's load down` });
      }
    }
    const all = containersOfPod(ctx);
    if (all[0]?.container === ctx.container) {
      const count = all.reduce((n, c) => n + execProbes(ctx, c.container, c.role).length, 0);
      if (count > MAX_EXEC_PROBES) {
        out.push({ path: [...ctx.path.slice(0, -2)], message: `the pod has ${count} exec probes (more than ${MAX_EXEC_PROBES}): each spawns a process in its container every period` });
      }
    }
    return out;
  },
};

/** A container whose CPUs are exclusive under the static CPU manager: Guaranteed QoS with a whole number of CPUs. */
function pinsCpus(container: Container): boolean {
  const limits = container.resources?.limits;
  const requests = container.resources?.requests ?? limits;
  const cpu = limits?.['cpu'];
  const memory = limits?.['memory'];
  if (cpu === undefined || memory === undefined || requests?.['cpu'] !== cpu || requests?.['memory'] !== memory) return false;
  return /^[1-9][0-9]*$/.test(String(cpu));
}

export const execProbeCpuPinned: Rule = {
  id: 'exec-probe-cpu-pinned',
  severity: 'info',
  summary: 'An exec probe in a container that gets exclusive CPUs (Guaranteed QoS, whole CPUs).',
  explain: `What: a container with requests equal to limits and a whole number of CPUs (exclusive CPUs
under the kubelet's static CPU manager policy) has an exec probe.
Why: the probe's process runs on the pinned CPUs on every period and interrupts the latency-
sensitive work the pinning was for.
Fix: use an httpGet, grpc or tcpSocket probe (handled by the kubelet, outside the container).
Example:
  livenessProbe:
    grpc: { port: 9090 }`,
  equivalents: ['certsuite performance-cpu-pinning-no-exec-probes'],
  check(ctx): RuleFinding[] {
    if (!pinsCpus(ctx.container)) return [];
    return execProbes(ctx, ctx.container, ctx.role).map((at) => ({
      path: [...at.path, 'exec'],
      message: `${who(ctx)} has exclusive CPUs (${String(ctx.container.resources?.limits?.['cpu'])}, Guaranteed QoS) and an exec ${at.type} probe that runs on them every ${at.probe.periodSeconds}s`,
    }));
  },
};

export const handlerRules: Rule[] = [execProbeForbiddenCommand, execProbeLoad, execProbeCpuPinned];
