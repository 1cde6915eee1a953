/**
 * The dashboard's files: built by `npm run build` (web/ → dist/web/) and read once when the
 * server starts, so nothing is fetched at run time and the page works offline. Every answer
 * carries a strict Content-Security-Policy: scripts and styles only from this server, no
 * inline code, no frames, connections only back to us.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** URL path → file in the built dashboard directory, with its content type. */
const FILES: ReadonlyMap<string, { file: string; type: string }> = new Map([
  ['/', { file: 'index.html', type: 'text/html; charset=utf-8' }],
  ['/app.js', { file: 'app.js', type: 'text/javascript; charset=utf-8' }],
  ['/app.css', { file: 'app.css', type: 'text/css; charset=utf-8' }],
  ['/favicon.svg', { file: 'favicon.svg', type: 'image/svg+xml' }],
]);

export interface DashboardFile {
  body: Buffer;
  type: string;
}

/** The dashboard, by URL path; empty when it was not built. */
export type Dashboard = ReadonlyMap<string, DashboardFile>;

/**
 * Where the built files are: beside the compiled server (`dist/server` → `dist/web`), or,
 * when the server runs from source (tests), in `dist/web` of the checkout.
 */
const CANDIDATE_DIRS = ['../web/', '../../dist/web/'];

export async function loadDashboard(dir?: string): Promise<Dashboard> {
  const dirs = dir !== undefined ? [dir] : CANDIDATE_DIRS.map((d) => fileURLToPath(new URL(d, import.meta.url)));
  for (const base of dirs) {
    const files = new Map<string, DashboardFile>();
    try {
      for (const [path, { file, type }] of FILES) files.set(path, { body: await readFile(`${base.replace(/\/?$/, '/')}${file}`), type });
      return files;
    } catch {
      // not in this one
    }
  }
  return new Map();
}

/** Headers every dashboard answer gets. */
export function dashboardHeaders(type: string): Record<string, string> {
  return {
    'Content-Type': type,
    'Content-Security-Policy': DASHBOARD_CSP,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Cache-Control': 'no-store',
  };
}
