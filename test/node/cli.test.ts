/**
 * `probelet node`'s bad input, without a cluster: usage errors exit 2 naming the flag and the
 * fix; an API server out of reach is retried with a log line each time, and a stop signal
 * during the retries ends the command cleanly (exit 0).
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { registerNodeCommand } from '../../src/cli/node.js';
import { registrationHint } from '../../src/node/heartbeat.js';

function capture(): { io: { stdout: (t: string) => void; stderr: (t: string) => void }; err: () => string } {
  const err: string[] = [];
  return { io: { stdout: () => undefined, stderr: (t) => void err.push(t) }, err: () => err.join('') };
}

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address ? address.port : 0;
}

function kubeconfigFor(server: string): string {
  const path = join(tmpdir(), `kubeconfig-${process.pid}-${Math.trunc(performance.now())}`);
  writeFileSync(
    path,
    `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${server}"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`,
  );
  return path;
}

describe('probelet node: bad input', () => {
  it('a kubeconfig that does not exist, --nodes without --runtime simulated, a bad --node-ip: exit 2 naming the flag', async () => {
    const a = capture();
    expect(await main(['node', '--kubeconfig', '/nonexistent/kubeconfig', '--node-ip', '10.0.0.1'], a.io)).toBe(2);
    // The input rule: the unreadable path named, nothing started.
    expect(a.err()).toBe('probelet: /nonexistent/kubeconfig: cannot read: no such file or directory\nprobelet: nothing was started (fix the path above)\n');
    const b = capture();
    expect(await main(['node', '--nodes', '3'], b.io)).toBe(2);
    expect(b.err()).toBe('probelet: --nodes needs --runtime simulated (one process runs one real node)\n');
    const c = capture();
    expect(await main(['node', '--node-ip', 'nowhere'], c.io)).toBe(2);
    expect(c.err()).toBe('probelet: --node-ip "nowhere": not an IP address\n');
  });

  it('an API server out of reach: registration is retried with a log line naming it; a stop signal ends the command with exit 0', async () => {
    const port = await closedPort();
    const kubeconfig = kubeconfigFor(`https://127.0.0.1:${port}`);
    try {
      const { io, err } = capture();
      let exit: number | undefined;
      let stop: (signal: string) => void = () => undefined;
      const stopped = new Promise<string>((resolve) => (stop = resolve));
      const program = new Command('probelet').exitOverride();
      registerNodeCommand(program, io, (code) => (exit = code), { stopped: () => stopped });
      const running = program.parseAsync(['node', '--kubeconfig', kubeconfig, '--name', 'unreachable', '--node-ip', '10.0.0.1', '--listen', '127.0.0.1:0'], { from: 'user' });
      const deadline = Date.now() + 10_000;
      while ((err().match(/registering with/g) ?? []).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      stop('SIGTERM');
      await running;
      expect(exit).toBe(0);
      expect(err()).toContain(`node unreachable: registering with https://127.0.0.1:${port} failed: `);
      expect(err()).toContain('ECONNREFUSED');
      expect(err()).toMatch(/\(retrying in 0\.1 s\)\n.*\(retrying in 0\.2 s\)/s);
      expect(err()).toContain('SIGTERM received before node unreachable registered: stopping');
    } finally {
      (await import('node:fs')).rmSync(kubeconfig, { force: true });
    }
  }, 20_000);

  it('says what to do about refused credentials and forbidden writes', () => {
    expect(registrationHint(401, 'n1')).toBe("; the kubeconfig's credentials were refused: renew them (an expired certificate or token)");
    expect(registrationHint(403, 'n1')).toContain('use system:node:n1 (group system:nodes) under the Node authorizer');
    expect(registrationHint(500, 'n1')).toBe('');
  });
});
