/**
 * Runs a describe block under each spawn primitive (util/spawn-primitive.ts): the native
 * addon and Node's spawn (the fallback when the addon is not built), so that both keep
 * every guarantee of process.ts. The choice is made through PROBELET_NATIVE_SPAWN, which
 * is read at every start and inherited by a spawner process.
 */
import { afterAll, beforeAll } from 'vitest';
import type { PrimitiveName } from '../../src/util/spawn-primitive.js';

export const PRIMITIVES: readonly PrimitiveName[] = ['native', 'node'];

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
