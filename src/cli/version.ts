/**
 * The package's version, read from package.json (the one source of it) beside the compiled
 * or source tree: `src/cli/` and `dist/cli/` both sit two levels below it.
 */
import { readFileSync } from 'node:fs';

export function packageVersion(): string {
  try {
    const pkg: unknown = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    const version = (pkg as { version?: unknown }).version;
    return typeof version === 'string' ? version : 'unknown';
  } catch {
    return 'unknown';
  }
}
