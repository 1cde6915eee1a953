/**
 * What the CRI runtime puts in RunPodSandbox and CreateContainer (no runtime needed): pod
 * identity and labels, host namespaces without a hostname, DNS from resolv.conf plus
 * dnsConfig, the kubelet's log layout, command and args expanded separately; and how CRI
 * log files are read back.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { parseCriLog, readCriLogTail } from '../../src/runtime/cri/cri-logs.js';
import { containerConfig, dnsConfig, podSandboxConfig, processStartTime, startTimeFromStat } from '../../src/runtime/cri/pod-config.js';

const owner = { runID: 'r1', pid: 42, pidStart: '12345' };
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function scratch(): string {
  const d = mkdtempSync(join(tmpdir(), 'probelet-cri-config-'));
  dirs.push(d);
  return d;
}

function pod(spec: Partial<NonNullable<Pod['spec']>> = {}): Pod {
  return {
    metadata: { name: 'web', namespace: 'shop', uid: 'u-1', labels: { app: 'web' }, annotations: { a: 'b' } },
    spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec },
  };
}

describe('cri: sandbox and container config', () => {
  it('a pod-network sandbox: identity, labels (pod, io.kubernetes.*, probelet ownership), hostname, private network', () => {
    const dir = scratch();
    const resolv = join(dir, 'resolv.conf');
    writeFileSync(resolv, 'nameserver 9.9.9.9\nsearch example.org\noptions ndots:2\n');
    const config = podSandboxConfig(pod(), '/logs', owner, resolv);
    expect(config.metadata).toEqual({ name: 'web', uid: 'u-1', namespace: 'shop', attempt: 0 });
    expect(config.hostname).toBe('web');
    expect(config.log_directory).toBe('/logs/shop_web_u-1');
    expect(config.labels).toMatchObject({ app: 'web', 'io.kubernetes.pod.uid': 'u-1', 'probelet.dev/managed': 'true', 'probelet.dev/run': 'r1', 'probelet.dev/pid': '42', 'probelet.dev/pid-start': '12345' });
    expect(config.annotations).toEqual({ a: 'b' });
    expect(config.linux.security_context.namespace_options).toEqual({ network: 'POD', pid: 'CONTAINER', ipc: 'POD' });
    expect(config.dns_config).toEqual({ servers: ['9.9.9.9'], searches: ['example.org'], options: ['ndots:2'] });
  });

  it('hostNetwork (and hostPID/hostIPC): NODE namespaces and no hostname, which runc refuses there', () => {
    const config = podSandboxConfig(pod({ hostNetwork: true, hostPID: true, hostIPC: true }), '/logs', owner, '/nonexistent');
    expect(config.hostname).toBeUndefined();
    expect(config.linux.security_context.namespace_options).toEqual({ network: 'NODE', pid: 'NODE', ipc: 'NODE' });
  });

  it('dnsPolicy None uses dnsConfig only; otherwise dnsConfig is appended', () => {
    const dir = scratch();
    const resolv = join(dir, 'resolv.conf');
    writeFileSync(resolv, 'nameserver 1.1.1.1\n');
    const extra = { nameservers: ['8.8.8.8'], searches: ['x.test'], options: [{ name: 'edns0' }, { name: 'ndots', value: '1' }] };
    expect(dnsConfig(pod({ dnsPolicy: 'None', dnsConfig: extra }), resolv)).toEqual({ servers: ['8.8.8.8'], searches: ['x.test'], options: ['edns0', 'ndots:1'] });
    expect(dnsConfig(pod({ dnsPolicy: 'ClusterFirst', dnsConfig: extra }), resolv)?.servers).toEqual(['1.1.1.1', '8.8.8.8']);
  });

  it('a container: command and args expanded separately (an image ENTRYPOINT still gets the args), env, log path <container>/<attempt>.log', () => {
    const p = pod();
    const env = new Map([['WHO', 'world']]);
    const config = containerConfig({ pod: p, container: { name: 'c', image: 'busybox', args: ['echo', 'hi $(WHO)'], workingDir: '/w' }, attempt: 2, env, runDir: '/logs', owner });
    expect(config.command).toEqual([]);
    expect(config.args).toEqual(['echo', 'hi world']);
    expect(config.envs).toEqual([{ key: 'WHO', value: 'world' }]);
    expect(config.working_dir).toBe('/w');
    expect(config.log_path).toBe('c/2.log');
    expect(config.metadata).toEqual({ name: 'c', attempt: 2 });
    expect(config.labels).toMatchObject({ 'io.kubernetes.container.name': 'c', 'probelet.dev/run': 'r1' });
  });
});

describe('cri: log files', () => {
  it('CRI log lines back to output: stream and tag dropped, partial lines joined, a cut first line dropped', () => {
    const text = '2026-01-01T00:00:00.1Z stdout P hel\n2026-01-01T00:00:00.2Z stdout F lo\n2026-01-01T00:00:00.3Z stderr F oops\n';
    expect(parseCriLog(text)).toBe('hello\noops\n');
    const file = join(scratch(), '0.log');
    writeFileSync(file, text);
    expect(readCriLogTail(file, 1024)).toBe('hello\noops\n');
    expect(readCriLogTail(file, 40)).toBe('oops\n');
    expect(readCriLogTail(join(file, 'missing'), 10)).toBe('');
  });
});

describe('processStartTime', () => {
  it('reads field 22 of /proc/<pid>/stat, even when the command name holds spaces and parentheses', () => {
    const mine = processStartTime(process.pid);
    expect(mine).toMatch(/^\d+$/);
    const stat = readFileSync(`/proc/${process.pid}/stat`, 'utf8');
    expect(stat.split(' ')[21]).toBe(mine);
    expect(processStartTime(2 ** 22 + 1)).toBe('');
    const fields = Array.from({ length: 50 }, (_, i) => String(i + 3));
    expect(startTimeFromStat(`77 (a (b) c) ${fields.join(' ')}\n`)).toBe('22');
  });
});
