/**
 * How to start one of probelet's own modules in a new Node process or worker thread: the
 * built `.js` beside the caller, or — from a source checkout, where the tests run the `.ts`
 * without a build — the `.ts` through TypeScript (dev-ts-hooks.mjs, types erased).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface ModuleEntry {
  /** The script to run. */
  file: string;
  /** The Node options it needs: none when built, the TypeScript hooks from a source checkout. */
  execArgv: string[];
}

/** Module `name` (no extension) beside the module whose `import.meta.url` is `base`. */
export function moduleEntry(base: string, name: string): ModuleEntry {
  const built = fileURLToPath(new URL(`./${name}.js`, base));
  if (existsSync(built)) return { file: built, execArgv: [] };
  const hooks = new URL('./dev-ts-hooks.mjs', import.meta.url).href;
  const register = `import{register}from'node:module';register(${JSON.stringify(hooks)});`;
  return {
    file: fileURLToPath(new URL(`./${name}.ts`, base)),
    execArgv: ['--import', `data:text/javascript,${encodeURIComponent(register)}`],
  };
}
