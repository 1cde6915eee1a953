#!/usr/bin/env node
/**
 * Takes docs/dashboard.png: the dashboard of a running `npm start` (the demo pod), in
 * headless Chromium (Debian's chromium, playwright-core; no download).
 * Usage: node web/screenshot.mjs [URL] [OUT]   (default http://127.0.0.1:10255/, docs/dashboard.png)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const url = process.argv[2] ?? 'http://127.0.0.1:10255/';
const out = process.argv[3] ?? 'docs/dashboard.png';
const profile = mkdtempSync(join(tmpdir(), 'probelet-chromium-'));
try {
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 720 },
  });
  const page = await context.newPage();
  await page.goto(url);
  await page.locator('.pod').first().waitFor();
  const failed = page.locator('svg.lane[data-probe="liveness"] .mark.failure');
  if ((await failed.count()) > 0) await failed.last().click();
  else await page.locator('.mark.failure').first().click();
  await page.waitForTimeout(500);
  await page.screenshot({ path: out });
  await context.close();
} finally {
  rmSync(profile, { recursive: true, force: true });
}
