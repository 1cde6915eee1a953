/**
 * The spawn primitive under process.ts (spawn/spawn-primitive.ts). Its process semantics are
 * tested through process.ts under both primitives (process*.test.ts, hostile/exec.test.ts);
 * here what only the primitive decides: which one runs, and the state a child starts in.
 */
import { describe, expect, it } from 'vitest';
import { runProcess, spawnGroup } from '../../src/spawn/index.js';
import { currentPrimitive } from '../../src/spawn/index.js';
import { NATIVE_SKIP_REASON, NATIVE_TESTED, PRIMITIVES, usePrimitive } from '../helpers/primitive.js';

describe('choice of primitive', () => {
  it.skipIf(!NATIVE_TESTED)(`the addon is built by npm ci and loads; PROBELET_NATIVE_SPAWN=0 forces Node spawn${NATIVE_SKIP_REASON}`, () => {
    const saved = process.env.PROBELET_NATIVE_SPAWN;
    try {
      delete process.env.PROBELET_NATIVE_SPAWN;
      expect(currentPrimitive()).toBe('native');
      process.env.PROBELET_NATIVE_SPAWN = '0';
      expect(currentPrimitive()).toBe('node');
    } finally {
      if (saved === undefined) delete process.env.PROBELET_NATIVE_SPAWN;
      else process.env.PROBELET_NATIVE_SPAWN = saved;
    }
  });
});

describe.each(PRIMITIVES)('a child started by the %s primitive', (primitive) => {
  usePrimitive(primitive);

  it('ignores and blocks no signal (Node ignores SIGPIPE), reads /dev/null, leads its session', async () => {
    const group = await spawnGroup({
      argv: ['sh', '-c', 'grep -E "^Sig(Ign|Blk)" /proc/self/status; cat; read -r _ _ _ _ g s _ < /proc/$$/stat; echo $$ $g $s'],
    });
    const run = await group.exited;
    const lines = run.stdout.toString().split('\n');
    expect(lines.slice(0, 2)).toEqual(['SigBlk:\t0000000000000000', 'SigIgn:\t0000000000000000']);
    expect(lines[2]).toBe(`${group.pid} ${group.pid} ${group.pid}`);
    expect(run.exitCode).toBe(0);
  });

  it('finds a program in the PATH of the environment given, not of this process', async () => {
    const run = await runProcess({ argv: ['true'], env: { PATH: '/nonexistent' } }).catch((err: Error) => err);
    expect(run).toMatchObject({ code: 'ENOENT', message: 'exec: "true": executable file not found in $PATH' });
    const found = await runProcess({ argv: ['sh', '-c', 'echo $0'], env: { PATH: '/usr/bin:/bin' } });
    expect(found.stdout.toString()).toBe('sh\n');
  });
});
