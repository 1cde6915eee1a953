/**
 * Runs a describe block under each spawn primitive (spawn/spawn-primitive.ts): the native
 * addon and Node's spawn (the fallback when the addon is not built), so that both keep
 * every guarantee of process.ts. The choice is made through PROBELET_NATIVE_SPAWN, which
 * is read at every start and inherited by a spawner process.
 */
import { afterAll, beforeAll } from 'vitest';
import { nativeAddonLoaded, type PrimitiveName } from '../../src/spawn/index.js';

/** CI (.ci/run) sets PROBELET_REQUIRE_NATIVE=1: there, an addon that did not build fails the tests. */
const nativeTested = nativeAddonLoaded() || process.env.PROBELET_REQUIRE_NATIVE === '1';

/** Appended to the name of a test of the addon that is skipped because it was not built. */
export const NATIVE_SKIP_REASON = nativeTested
  ? ''
  : ' (skipped: build/Release/probelet_spawn.node was not built at npm ci, e.g. no compiler; PROBELET_REQUIRE_NATIVE=1 fails instead)';

/** The primitives to run process tests under: the addon only where it is built (or required). */
export const PRIMITIVES: readonly PrimitiveName[] = nativeTested ? ['native', 'node'] : ['node'];

export const NATIVE_TESTED = nativeTested;

/** Within the calling describe, starts go through `primitive`. */
export function usePrimitive(primitive: PrimitiveName): void {
  let saved: string | undefined;
  beforeAll(() => {
    saved = process.env.PROBELET_NATIVE_SPAWN;
    process.env.PROBELET_NATIVE_SPAWN = primitive === 'native' ? '1' : '0';
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.PROBELET_NATIVE_SPAWN;
    else process.env.PROBELET_NATIVE_SPAWN = saved;
  });
}
