/**
 * `probelet node --kubeconfig K`: joins a cluster as a node. The agent (src/node/) registers
 * the Node and its Lease and runs the pods bound to it through the same Kubelet as `probelet
 * run`; this command picks the runtime, serves the read-only API the Node's
 * `daemonEndpoints` names, logs to stderr, and stops cleanly on INT, TERM, HUP or QUIT:
 * running pods are stopped with their grace periods (their API objects stay; the node
 * lifecycle controller deals with a node that went away), nothing is left running.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { Command, Option } from 'commander';
import { loadKubeClients, type KubeClients } from '../node/kube.js';
import { startNodeAgent, type NodeAgent } from '../node/agent.js';
import { detectNodeAddress } from '../node/node-object.js';
import { startServer, type RunningServer } from '../server/server.js';
import { EXIT_OK } from './exit-codes.js';
import { CliUsageError, type CliIO } from './io.js';
import { parseListen } from './run-flags.js';
import { deferredView } from './run.js';
import { RUNTIME_NAMES, createRuntime, type RuntimeFlags } from './run-runtime.js';
import { packageVersion } from './version.js';

interface NodeFlags extends RuntimeFlags {
  kubeconfig?: string;
  name?: string;
  listen: string;
  nodeIp?: string;
}

/** The signals that stop a node (a daemon is also stopped by HUP and QUIT). */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];

/** RFC 1123 subdomain, what a Node's name must be. */
const NODE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export interface NodeEnvironment {
  /** Resolves with the first stop signal's name; tests pass their own. */
  stopped: () => Promise<string>;
}

export const processStop: NodeEnvironment = {
  stopped: () =>
    new Promise((resolve) => {
      const on = (signal: NodeJS.Signals): void => {
        for (const s of STOP_SIGNALS) process.off(s, on);
        resolve(signal);
      };
      for (const s of STOP_SIGNALS) process.on(s, on);
    }),
};

export function registerNodeCommand(program: Command, io: CliIO, setExit: (code: number) => void, env: NodeEnvironment = processStop): void {
  program
    .command('node')
    .description('Join a Kubernetes cluster as a node: register a Node and its Lease, run the pods bound to it, write their status and events.')
    .option('--kubeconfig <file>', 'credentials and API server (default: $KUBECONFIG, else ~/.kube/config)')
    .option('--name <name>', "the Node's name (default: this machine's hostname, lower-cased)")
    .addOption(new Option('--runtime <name>', 'container runtime: host processes, or a CRI runtime (its own containerd) running the images').choices(RUNTIME_NAMES).default('process'))
    .option('--cri-endpoint <endpoint>', 'CRI socket for --runtime cri (default: $CONTAINER_RUNTIME_ENDPOINT, else unix:///run/containerd/containerd.sock)')
    .option('--node-ip <address>', "the Node's InternalIP, also its pods' IP (they share the host's network); default: this machine's first non-loopback IPv4 address")
    .option('--listen <host:port>', "the read-only API the Node's daemonEndpoints names (/healthz, /pods, /events, /metrics/probes); loopback only; port 0 picks one", '127.0.0.1:10255')
    .action(async (flags: NodeFlags) => {
      setExit(await runNode(flags, io, env));
    });
}

async function runNode(flags: NodeFlags, io: CliIO, env: NodeEnvironment): Promise<number> {
  const name = flags.name ?? hostname().toLowerCase();
  if (!NODE_NAME.test(name) || name.length > 253) {
    throw new CliUsageError(`--name ${JSON.stringify(name)}: a Node's name must be lower-case letters, digits, '-' and '.', starting and ending with a letter or digit`);
  }
  const listen = parseListen(flags.listen);
  const address = flags.nodeIp ?? detectNodeAddress();
  if (address === undefined) {
    throw new CliUsageError('--node-ip: this machine has no non-loopback IPv4 address; give the address the cluster reaches it at (the API server refuses loopback pod IPs in EndpointSlices)');
  }
  if (isIP(address) === 0) throw new CliUsageError(`--node-ip ${JSON.stringify(address)}: not an IP address`);
  let clients: KubeClients;
  try {
    clients = loadKubeClients(flags.kubeconfig);
  } catch (err) {
    throw new CliUsageError(`--kubeconfig: ${err instanceof Error ? err.message : String(err)}`);
  }
  const stopped = env.stopped();
  const log = (line: string): void => io.stderr(`${new Date().toISOString()} ${line}\n`);
  const view = deferredView();
  let server: RunningServer;
  try {
    server = await startServer(view, listen);
  } catch (err) {
    throw new CliUsageError(`--listen ${listen.host}:${listen.port}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const runDir = await mkdtemp(join(tmpdir(), 'probelet-node-'));
  let agent: NodeAgent | undefined;
  const runtime = await createRuntime(flags, runDir).catch(async (err: unknown) => {
    await server.close();
    await rm(runDir, { recursive: true, force: true });
    throw err;
  });
  try {
    const version = packageVersion();
    agent = await startNodeAgent({
      clients,
      name,
      runtime,
      runtimeVersion: `probelet-${flags.runtime ?? 'process'}://${version}`,
      probeletVersion: version,
      port: server.address.port,
      address,
      log,
    });
    view.attach(agent.kubelet);
    log(`node ${name} registered with ${clients.server}; read-only API ${server.url}`);
    const signal = await stopped;
    log(`${signal} received: stopping the pods of node ${name} (their API objects stay)`);
    return EXIT_OK;
  } finally {
    await agent?.close();
    await runtime.close();
    await server.close();
    await rm(runDir, { recursive: true, force: true });
  }
}
