/**
 * The spawner process (see spawner.ts): a small long-lived Node process that starts
 * commands for the big one, so that `fork` copies its small address space instead of the
 * engine's, and neither the fork nor the /proc scans after a command block the engine's
 * event loop.
 *
 * Every command goes through {@link spawnGroup}, so each keeps all the guarantees of
 * process.ts (own group and session, tree kill, output caps, exit codes, no leftovers).
 *
 * Protocol: one JSON object per line on stdin (requests) and stdout (replies):
 * - `{ t: 'run', id, argv, env?, cwd?, max }` → `{ t: 'started', id, pid }` then
 *   `{ t: 'exit', id, code, signal, out, err }` (base64), or `{ t: 'error', id, message, code }`.
 * - `{ t: 'kill', id, signal }`: the tree of run `id`, if it still runs.
 * - `{ t: 'ready' }` is sent once, when the spawner has started.
 * When stdin ends (the engine closed it or died), every tree still running is killed and
 * the spawner exits once they are gone: it never outlives its engine.
 */
import { createInterface } from 'node:readline';
import { spawnGroup, type ProcessGroup } from './process.js';
import type { SpawnerReply, SpawnerRequest } from './spawner-protocol.js';

const groups = new Map<number, ProcessGroup>();
const starting = new Set<Promise<unknown>>();
let ending = false;

function send(reply: SpawnerReply): void {
  process.stdout.write(`${JSON.stringify(reply)}\n`);
}

function run(request: Extract<SpawnerRequest, { t: 'run' }>): void {
  const { id } = request;
  const start = spawnGroup({
    argv: request.argv,
    env: request.env,
    cwd: request.cwd,
    maxOutputBytes: request.max,
  }).then(
    (group) => {
      if (ending) group.kill('SIGKILL');
      groups.set(id, group);
      send({ t: 'started', id, pid: group.pid });
      void group.exited.then((exit) => {
        groups.delete(id);
        send({
          t: 'exit',
          id,
          code: exit.exitCode,
          signal: exit.signal,
          out: exit.stdout.toString('base64'),
          err: exit.stderr.toString('base64'),
        });
      });
    },
    (err: unknown) => {
      const error = err as Error & { code?: string };
      send({ t: 'error', id, message: error.message, code: error.code ?? 'UNKNOWN' });
    },
  );
  starting.add(start);
  void start.finally(() => starting.delete(start));
}

function onLine(line: string): void {
  let request: SpawnerRequest;
  try {
    request = JSON.parse(line) as SpawnerRequest;
  } catch {
    return; // not from our engine: nothing to answer
  }
  if (request.t === 'run') run(request);
  else if (request.t === 'kill') groups.get(request.id)?.kill(request.signal);
}

/** Kills every tree still running and exits once all are gone. */
async function end(): Promise<void> {
  if (ending) return;
  ending = true;
  await Promise.allSettled([...starting]);
  for (const group of groups.values()) group.kill('SIGKILL');
  await Promise.allSettled([...groups.values()].map((g) => g.exited));
  process.exit(0);
}

createInterface({ input: process.stdin, crlfDelay: Infinity }).on('line', onLine).on('close', () => void end());
process.on('SIGTERM', () => void end());
// The engine decides when to stop (Ctrl-C reaches it); it closes stdin then.
process.on('SIGINT', () => undefined);
// A reply the engine can no longer read: it is gone, so is everything we started.
process.stdout.on('error', () => void end());
send({ t: 'ready' });
