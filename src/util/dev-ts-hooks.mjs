/**
 * Module hooks that let a source checkout (tests run from src/ without a build) start
 * spawner-main.ts in a plain Node 20 process: `.js` imports that only exist as `.ts` are
 * resolved to the `.ts`, which TypeScript transpiles (types erased, nothing checked).
 * Built packages never use this: spawner.ts starts dist/spawn/spawner-main.js.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (err) {
    if (!specifier.endsWith('.js') || !context.parentURL?.endsWith('.ts')) throw err;
    return next(`${specifier.slice(0, -3)}.ts`, context);
  }
}

export async function load(url, context, next) {
  if (!url.endsWith('.ts')) return next(url, context);
  const source = await readFile(fileURLToPath(url), 'utf8');
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    fileName: fileURLToPath(url),
  });
  return { format: 'module', source: outputText, shortCircuit: true };
}
