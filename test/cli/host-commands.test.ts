/**
 * `probelet run` on the process runtime reads a pod's commands before running them on this
 * host: a pod that needs its image's programs, or whose commands write to host paths outside
 * /tmp, is refused by name, with what was seen and the ways on (--runtime cri, --host-writes,
 * --runtime process). The examples written for containerd are the case the field met.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { hostCommandFindings } from '../../src/cli/run/host-commands.js';
import { refuseHostCommands } from '../../src/cli/run/host-runtime.js';
import { runCli } from './helpers.js';

const CRI_EXAMPLE = fileURLToPath(new URL('../../examples/cri/deployment.yaml', import.meta.url));
const PATH = '/usr/bin:/bin';

function pod(command: string[], args?: string[]): Pod {
  return { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'busybox', command, ...(args ? { args } : {}) }] } };
}

describe('what a pod would do on this host', () => {
  it('sees programs the host lacks, in the command and in each simple command of a sh -c script', () => {
    expect(hostCommandFindings(pod(['probelet-no-such-program', '-f']), PATH).missing).toEqual([
      'container "c" runs probelet-no-such-program, which this host does not have (it would come from the image busybox)',
    ]);
    const script = 'mkdir -p /tmp/x && echo "a; b" > /tmp/x/f\n(sleep 20; rm /tmp/x/f) &\nexec probelet-httpd -f -p 8080';
    expect(hostCommandFindings(pod(['sh', '-c', script]), PATH)).toEqual({
      missing: ['container "c" runs probelet-httpd, which this host does not have (it would come from the image busybox)'],
      writes: [],
    });
    expect(hostCommandFindings(pod(['sh'], ['-c', 'X=1 exec probelet-x']), PATH).missing).toHaveLength(1);
  });

  it('sees writes outside /tmp: redirections and the operands of mkdir, touch, tee, cp, mv, rm, ln', () => {
    const script = 'echo hi >> /opt/logs.txt; mkdir -p /www && touch /www/ready 2>/dev/null; cat x | tee /etc/motd >/dev/null';
    expect(hostCommandFindings(pod(['sh', '-c', script]), PATH).writes).toEqual([
      'container "c" writes to /opt/logs.txt on this host',
      'container "c" writes to /www on this host',
      'container "c" writes to /www/ready on this host',
      'container "c" writes to /etc/motd on this host',
    ]);
    expect(hostCommandFindings(pod(['sh', '-c', 'echo ok > /tmp/ready; cat /etc/hostname >/dev/stdout']), PATH)).toEqual({ missing: [], writes: [] });
    // Redirections to descriptors are no commands; a quoted path is no write.
    expect(hostCommandFindings(pod(['sh', '-c', 'echo "fatal: no config at /etc/app.conf" >&2; ls 2>&1 | cat; exit 3']), PATH)).toEqual({ missing: [], writes: [] });
  });

  it('refuses such a pod by name unless asked: --runtime process for programs, --host-writes for writes', () => {
    const writer = pod(['sh', '-c', 'echo hi > /opt/logs.txt']);
    const lacking = pod(['probelet-no-such-program']);
    let said = '';
    const stderr = (text: string): void => void (said += text);
    expect(refuseHostCommands([writer, lacking], { runtimeGiven: false, hostWrites: false }, stderr, PATH)).toEqual([]);
    expect(said).toContain('probelet: Pod "p" is not run on the process runtime: its commands would write to this host\'s own files as user ');
    expect(said).toContain('  * container "c" writes to /opt/logs.txt on this host\n  run it with --runtime cri (containers from their images), or --host-writes');
    expect(said).toContain('probelet: Pod "p" is not run on the process runtime: it needs programs from its image');
    expect(refuseHostCommands([writer, lacking], { runtimeGiven: true, hostWrites: false }, () => undefined, PATH)).toEqual([lacking]);
    expect(refuseHostCommands([writer, lacking], { runtimeGiven: false, hostWrites: true }, () => undefined, PATH)).toEqual([writer]);
  });

  it('probelet run of the containerd example: refused with its generated name, nothing created on the host', async () => {
    const run = await runCli(['run', CRI_EXAMPLE, '--listen', '127.0.0.1:0', '--timeout', '1s']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/probelet: Pod "web-[a-z0-9]+-[a-z0-9]{5}" is not run on the process runtime: its commands would write/);
    expect(run.stderr).toContain('  * container "httpd" writes to /www on this host\n');
    expect(run.stderr).toContain('  * container "httpd" runs httpd, which this host does not have (it would come from the image probelet.local/busybox:test)\n');
    expect(run.stderr).not.toContain('Pod ""');
  });
});
