/**
 * `probelet simulate … --ui`: the finished simulation served by the read-only API and its
 * dashboard, from the real executable, until Ctrl-C.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BIN, runCli } from '../cli/helpers.js';

const DEPLOYMENT = fileURLToPath(new URL('../../examples/simulate/deployment.yaml', import.meta.url));

interface Attempt {
  outcome: string;
}
interface History {
  container: string;
  probeType: string;
  attempts: Attempt[];
  transitions: { reason?: string }[];
}

describe('probelet simulate --ui', () => {
  it('serves the whole simulated timeline (pods, events, every probe attempt and the kills) until Ctrl-C', async () => {
    const child = spawn(process.execPath, [BIN, 'simulate', DEPLOYMENT, '-b', 'api=down:90s,up', '--for', '3m', '-o', 'json', '--ui'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = once(child, 'exit');
    try {
      let url = '';
      for await (const line of createInterface({ input: child.stdout })) {
        if (!line.startsWith('{"type":"ui"')) continue;
        url = (JSON.parse(line) as { url: string }).url;
        break;
      }
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toContain("default-src 'none'; script-src 'self'");
      const pods = (await (await fetch(`${url}pods`)).json()) as { items: { metadata: { name: string } }[] };
      expect(pods.items.map((p) => p.metadata.name)).toEqual(['api']);
      const events = (await (await fetch(`${url}events`)).json()) as { items: { reason: string }[] };
      expect(events.items.map((e) => e.reason)).toContain('Killing');
      const probes = (await (await fetch(`${url}probes?container=api&type=liveness`)).json()) as { items: History[] };
      const liveness = probes.items[0];
      expect(liveness?.attempts.some((a) => a.outcome === 'failure')).toBe(true);
      expect(liveness?.transitions.some((t) => t.reason === 'Killing')).toBe(true);
    } finally {
      child.kill('SIGINT');
    }
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
  }, 30_000);

  it('refuses --ui with --sweep, and a non-loopback address', async () => {
    const sweep = await runCli(['simulate', DEPLOYMENT, '-b', 'api=down:30s,up', '--sweep', 'api=10s..20s/10s', '--ui']);
    expect(sweep.code).toBe(2);
    expect(sweep.stderr).toContain('--ui shows one simulation: it does not go with --sweep');
    const remote = await runCli(['simulate', DEPLOYMENT, '--for', '10s', '--ui', '--listen', '0.0.0.0:0']);
    expect(remote.code).toBe(2);
    expect(remote.stderr).toMatch(/--listen 0\.0\.0\.0:0: .*loopback/);
  });
});

describe('probelet simulate --ui: bad addresses are refused before anything is simulated', () => {
  it('takes the address from --listen, as run does, with nothing printed on stdout', async () => {
    const remote = await runCli(['simulate', DEPLOYMENT, '--for', '10s', '--ui', '--listen', '0.0.0.0:0']);
    expect(remote.code).toBe(2);
    expect(remote.stdout).toBe('');
    const garbled = await runCli(['simulate', DEPLOYMENT, '--for', '10s', '--ui', '--listen', 'foo']);
    expect(garbled.code).toBe(2);
    expect(garbled.stderr).toContain('--listen: expected HOST:PORT');
    expect(garbled.stdout).toBe('');
  });

  it('--listen without --ui names the missing switch; an address after --ui (the old form) is not read as a file', async () => {
    const alone = await runCli(['simulate', DEPLOYMENT, '--for', '10s', '--listen', '127.0.0.1:0']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain("--listen 127.0.0.1:0: the address is the dashboard's: add --ui");
    const old = await runCli(['simulate', DEPLOYMENT, '--for', '10s', '--ui', '127.0.0.1:8080']);
    expect(old.code).toBe(2);
    expect(old.stderr).toContain('"127.0.0.1:8080" is taken for a file: an address goes with --listen (e.g. --listen 127.0.0.1:8080)');
    expect(old.stdout).toBe('');
  });
});
