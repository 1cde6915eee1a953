/**
 * Real headless Chromium for the dashboard tests: Debian's `chromium` driven by
 * playwright-core (never a browser download). Each browser gets a fresh profile directory,
 * removed when it closes. Without chromium the tests are skipped, saying why in their
 * name — unless PROBELET_REQUIRE_BROWSER=1 (CI), which makes them run and fail instead.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';

const available = existsSync(CHROMIUM_PATH);
const required = process.env.PROBELET_REQUIRE_BROWSER === '1';

/** Whether to run the browser tests, and the suffix a skipped test's name carries. */
export const browserTests = {
  run: available || required,
  reason: available ? '' : ` (skipped: no ${CHROMIUM_PATH}; apt-get install chromium, or set PROBELET_REQUIRE_BROWSER=1 to fail instead)`,
};

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'probelet-chromium-'));
  try {
    // A persistent context is how playwright takes a --user-data-dir of our choosing.
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: ARGS,
      viewport: { width: 1400, height: 900 },
    });
    return {
      context,
      close: async () => {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(profile, { recursive: true, force: true });
    throw err;
  }
}
