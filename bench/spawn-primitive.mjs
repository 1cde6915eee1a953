#!/usr/bin/env node
/**
 * CPU per start of `/bin/true` (user + system, children included: the spawner process's
 * too), sequential, through each way probelet can start a command:
 *
 *   node bench/spawn-primitive.mjs [--n 1000] [--ballast-mb 150]
 *
 * - `node spawn, engine`: spawn/process.ts with Node's child_process.spawn, from this process
 *   (made engine-sized with a heap ballast: fork's cost grows with the forking process's memory);
 * - `node spawn, spawner`: through the spawner process (spawn/spawner.ts), Node's spawn there;
 * - `native, engine`: spawn/process.ts with the posix_spawn addon, from this process;
 * - `raw addon`: the addon alone (no process.ts), the floor.
 * Also the CPU of the event loop's thread alone, and the longest time one start held the event
 * loop (the call itself, up to the exec).
 * Run after `npm run build`.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Socket } from 'node:net';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { n: { type: 'string', default: '1000' }, 'ballast-mb': { type: 'string', default: '150' } } });
const N = Number(values.n);
const ballast = [];
for (let i = 0; i < Number(values['ballast-mb']); i++) ballast.push(Buffer.alloc(1 << 20, i)); // touched: resident

const { runProcess } = await import('../dist/spawn/index.js');
const { openSpawner } = await import('../dist/spawn/index.js');
const addon = createRequire(import.meta.url)('../build/Release/probelet_spawn.node');

/** ms of CPU of this process's main thread (the event loop's). */
function loopThreadMs() {
  const f = readFileSync(`/proc/self/task/${process.pid}/stat`, 'latin1').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

/** ms of CPU of this process and its reaped children, plus live children (the spawner). */
function cpuMs() {
  const stat = (path) => readFileSync(path, 'latin1').split(') ')[1].split(' ');
  const own = stat('/proc/self/stat');
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const tid of readdirSync('/proc/self/task')) {
    for (const pid of readFileSync(`/proc/self/task/${tid}/children`, 'latin1').trim().split(' ').filter(Boolean)) {
      try {
        const f = stat(`/proc/${pid}/stat`);
        ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
      } catch {
        // gone
      }
    }
  }
  return ticks * 10; // USER_HZ = 100
}

function rawAddon() {
  return new Promise((resolve) => {
    let left = 3;
    const done = () => --left === 0 && resolve();
    addon.spawn('/bin/true', ['/bin/true'], null, null, (err, _pid, out, errFd) => {
      if (err !== 0) return resolve();
      for (const fd of [out, errFd]) new Socket({ fd, readable: true, writable: false }).on('close', done).resume();
    }, done);
  }).then(() => undefined);
}

async function measure(name, primitive, one) {
  process.env.PROBELET_NATIVE_SPAWN = primitive === 'native' ? '1' : '0';
  for (let i = 0; i < 20; i++) await one(); // warm-up (starts the spawner)
  const cpu0 = cpuMs();
  const loop0 = loopThreadMs();
  const t0 = performance.now();
  let maxBlockMs = 0;
  for (let i = 0; i < N; i++) {
    const before = performance.now();
    const run = one();
    maxBlockMs = Math.max(maxBlockMs, performance.now() - before);
    await run;
  }
  const row = {
    way: name,
    cpuMsPerStart: +((cpuMs() - cpu0) / N).toFixed(3),
    loopThreadMsPerStart: +((loopThreadMs() - loop0) / N).toFixed(3),
    wallMsPerStart: +((performance.now() - t0) / N).toFixed(3),
    maxLoopBlockMs: +maxBlockMs.toFixed(2),
    rssMB: Math.round(process.memoryUsage().rss / 1e6),
  };
  console.log(JSON.stringify(row));
  return row;
}

const lease = openSpawner();
const rows = [];
for (let round = 0; round < 2; round++) {
  rows.push(await measure('node spawn, engine', 'node', () => runProcess({ argv: ['/bin/true'] })));
  rows.push(await measure('node spawn, spawner', 'node', () => runProcess({ argv: ['/bin/true'], spawn: lease.spawnGroup })));
  rows.push(await measure('native, engine', 'native', () => runProcess({ argv: ['/bin/true'] })));
  rows.push(await measure('raw addon', 'native', rawAddon));
}
await lease.close();
console.log(`load average: ${readFileSync('/proc/loadavg', 'latin1').trim()}; ballast ${values['ballast-mb']} MB`);
console.table(rows);
