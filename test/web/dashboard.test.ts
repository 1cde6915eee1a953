/**
 * The dashboard in real headless Chromium, against a real kubelet running real processes:
 * the demo pod appears and its lanes fill in; a liveness kill shows on the time axis; a
 * failed HTTP probe's details show its status code and body, and a hostile body stays text.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { loadManifestFile } from '../../src/api/manifest.js';
import { asNewPod } from '../../src/cli/run/input.js';
import { FlightRecorder } from '../../src/prober/recorder.js';
import { startServer, type RunningServer } from '../../src/server/server.js';
import { timelineView } from '../../src/server/timeline.js';
import { FakeClock } from '../../src/util/clock.js';
import { freePort, nodeFixture, pod, startKubelet, stopKubelets, type Harness } from '../e2e/helpers.js';
import { browserTests, launchBrowser, type Browser } from './browser.js';

const HOSTILE = '<script>document.title="pwned"</script><img src=x onerror="document.title=\'pwned\'"><b>not bold</b>';

let browser: Browser | undefined;
let server: RunningServer | undefined;
const TEST_ID = 'web-dashboard';

afterEach(async () => {
  await browser?.close();
  browser = undefined;
  await server?.close();
  server = undefined;
  await stopKubelets(TEST_ID);
});

async function open(h: Harness | { view: Parameters<typeof startServer>[0] }) {
  server = await startServer('view' in h ? h.view : h.kubelet, { port: 0 });
  browser = await launchBrowser();
  const page = await browser.context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  await page.goto(`${server.url}/`);
  return { page, errors };
}

/** The demo pod on free ports (the manifest refers to them by name, so only env and containerPort change). */
async function demoPod(h: Harness): Promise<Pod> {
  const [demo] = await loadManifestFile('examples/demo/pod.yaml');
  if (!demo?.spec) throw new Error('examples/demo/pod.yaml has no pod');
  const appPort = String(await freePort());
  const proxyPort = String(await freePort());
  for (const c of [...(demo.spec.initContainers ?? []), ...demo.spec.containers]) {
    c.env = [...(c.env ?? []).map((e) => (e.name === 'APP_PORT' ? { ...e, value: appPort } : e.name === 'PROXY_PORT' ? { ...e, value: proxyPort } : e)), { name: 'PROBELET_TEST_MARKER', value: h.marker }];
    if (c.name === 'worker') c.env = c.env.map((e) => (e.name === 'READY_FILE' ? { ...e, value: `${h.dir}/worker-ready` } : e));
    c.ports = c.ports?.map((p) => ({ ...p, containerPort: Number(p.name === 'proxy' ? proxyPort : appPort) }));
  }
  return asNewPod(demo, Date.now());
}

describe.runIf(browserTests.run)(`dashboard in headless Chromium${browserTests.reason}`, () => {
  it('shows the demo pod, and its lanes fill in as probes run', async () => {
    const h = startKubelet(TEST_ID);
    h.kubelet.addPods([await demoPod(h)]);
    const { page, errors } = await open(h);
    await page.locator('.pod[data-pod="demo"]').waitFor();
    await expect.poll(() => page.locator('#connection').textContent()).toBe('live');
    const startup = page.locator('svg.lane[data-container="app"][data-probe="startup"] .mark');
    await expect.poll(() => startup.count(), { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
    const first = await startup.count();
    await expect.poll(() => startup.count(), { timeout: 15_000 }).toBeGreaterThan(first);
    for (const [container, probe] of [['proxy', 'readiness'], ['app', 'readiness'], ['worker', 'readiness']]) {
      await expect.poll(() => page.locator(`svg.lane[data-container="${container}"][data-probe="${probe}"] .mark`).count(), { timeout: 15_000 }).toBeGreaterThan(0);
    }
    await expect.poll(() => page.locator('.pod[data-pod="demo"] .condition.true', { hasText: 'Ready' }).count(), { timeout: 20_000 }).toBeGreaterThan(0);
    await expect.poll(() => page.locator('#events .event .reason', { hasText: 'Started' }).count()).toBeGreaterThan(0);
    expect(errors).toEqual([]);
  }, 60_000);

  it('when the run ends, says "run ended" and keeps the final state, instead of a red "reconnecting…"', async () => {
    const h = startKubelet(TEST_ID);
    h.kubelet.addPods([await demoPod(h)]);
    const { page, errors } = await open(h);
    await page.locator('.pod[data-pod="demo"]').waitFor();
    await expect.poll(() => page.locator('#connection').textContent()).toBe('live');
    await expect.poll(() => page.locator('#events .event .reason', { hasText: 'Started' }).count(), { timeout: 15_000 }).toBeGreaterThan(0);
    await server?.close(); // what `probelet run` does once its pods are deleted
    await expect.poll(() => page.locator('#connection').textContent()).toMatch(/^run ended /);
    expect(await page.locator('#connection').getAttribute('class')).toBe('connection ended');
    // The final state stays on the page, and stays so (no reconnection attempt turns it red).
    await page.waitForTimeout(2500);
    expect(await page.locator('#connection').textContent()).toMatch(/^run ended /);
    expect(await page.locator('.pod[data-pod="demo"]').count()).toBe(1);
    expect(await page.locator('#events .event').count()).toBeGreaterThan(0);
    expect(errors).toEqual([]);
  }, 60_000);

  it('a liveness kill shows on the time axis; a failed probe shows its status code and body, as text', async () => {
    const h = startKubelet(TEST_ID);
    const port = await freePort();
    const web = nodeFixture(h, 'web', '../web/hostile.mjs', { PORT: String(port), HEALTHY_SECONDS: '1', HOSTILE_BODY: HOSTILE }, {
      ports: [{ name: 'http', containerPort: port }],
      livenessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1, failureThreshold: 2 },
      readinessProbe: { httpGet: { path: '/ready', port: 'http' }, periodSeconds: 1 },
    });
    h.kubelet.addPods([asNewPod(pod('hostile', [web], { terminationGracePeriodSeconds: 2 }), Date.now())]);
    const { page, errors } = await open(h);
    const lane = page.locator('svg.lane[data-container="web"][data-probe="liveness"]');
    await lane.locator('.marker.kill').first().waitFor({ state: 'attached', timeout: 20_000 });
    await expect.poll(() => lane.locator('.marker.restart').count(), { timeout: 20_000 }).toBeGreaterThan(0);

    await lane.locator('.mark.failure').first().click();
    await expect.poll(() => page.locator('#details .status-code').textContent()).toBe('500');
    expect(await page.locator('#details .body').textContent()).toBe(HOSTILE);
    expect(await page.locator('#details .message').textContent()).toBe('HTTP probe failed with statuscode: 500');
    // Shown, not run: no element came out of the body, and its script never ran.
    expect(await page.locator('#details script, #details img, #details b').count()).toBe(0);
    expect(await page.title()).toBe('probelet dashboard');
    await expect.poll(() => page.locator('#events .event', { hasText: 'failed liveness probe' }).count()).toBeGreaterThan(0);
    await page.locator('#event-filter').fill('Killing');
    await expect.poll(() => page.locator('#events .event').count()).toBeGreaterThan(0);
    expect(await page.locator('#events .event .reason').allTextContents()).toSatisfy((r: string[]) => r.every((x) => x.startsWith('Killing')));
    expect(errors).toEqual([]);
  }, 60_000);

  it('draws a finished timeline whole (what simulate --ui serves)', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const recorder = new FlightRecorder(clock);
    const ring = recorder.ringFor({ podUID: 'u1', pod: 'sim', namespace: 'default', container: 'app', probeType: 'liveness', handler: 'httpGet', periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 });
    let cached: 'success' | 'failure' = 'success';
    for (let i = 0; i < 6; i++) {
      const slot = ring.begin(clock.now(), clock.now(), 'sim://1');
      const verdict = i < 3 ? 'success' : 'failure';
      const before = cached;
      if (i === 5) cached = 'failure';
      ring.commit(slot, clock.now() + 5, verdict, undefined, before, cached);
      await clock.advance(10_000);
    }
    recorder.noteAction('u1', 'app', 'liveness', 'Killing', 'Container app failed liveness probe, will be restarted');
    const simPod: Pod = { metadata: { name: 'sim', namespace: 'default', uid: 'u1' }, spec: { containers: [{ name: 'app' }] }, status: { phase: 'Running' } };
    const { page, errors } = await open({ view: timelineView({ pods: [simPod], events: [], probes: recorder.histories() }) });
    await expect.poll(() => page.locator('#connection').textContent()).toBe('finished timeline');
    const lane = page.locator('svg.lane[data-container="app"][data-probe="liveness"]');
    await expect.poll(() => lane.locator('.mark').count()).toBe(6);
    expect(await lane.locator('.mark.failure').count()).toBe(3);
    expect(await lane.locator('.marker.kill').count()).toBe(1);
    expect(errors).toEqual([]);
  });
});
