/**
 * A hung app on 127.0.0.1: a listener in a child process whose event loop is blocked, so it
 * never accepts — the kernel still completes connections into its accept queue until that
 * is full, then drops further SYNs. `startStalledListener` fills the queue first: a local
 * address where a dial hangs instead of failing. Only 127.0.0.1 is used: tests may not
 * contact other hosts.
 */
import { spawn } from 'node:child_process';
import net from 'node:net';
import { once } from 'node:events';

export interface StalledListener {
  port: number;
  close(): Promise<void>;
}

const childScript = (backlog: number): string => `
const net = require('node:net');
const server = net.createServer();
server.listen({ host: '127.0.0.1', port: 0, backlog: ${backlog} }, () => {
  process.stdout.write(server.address().port + '\\n', () => {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 120000);
  });
});
`;

/** Resolves true when the socket connects within `ms`, false otherwise (socket left open). */
function connectsWithin(socket: net.Socket, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    socket.once('connect', () => {
      clearTimeout(timer);
      resolve(true);
    });
    socket.on('error', () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}

/**
 * A listener with this listen backlog (at least 1: Node turns 0 into 511) in a process that
 * never accepts: a hung app. Its queue is empty until someone connects.
 */
export async function startHungApp(backlog: number): Promise<StalledListener> {
  const child = spawn(process.execPath, ['-e', childScript(backlog)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = (await once(child.stdout, 'data')) as [Buffer];
  return {
    port: Number.parseInt(chunk.toString('utf8'), 10),
    async close(): Promise<void> {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

export async function startStalledListener(): Promise<StalledListener> {
  const app = await startHungApp(1);
  const fillers: net.Socket[] = [];
  for (let i = 0; i < 16; i++) {
    const socket = net.connect({ host: '127.0.0.1', port: app.port });
    fillers.push(socket);
    if (!(await connectsWithin(socket, 300))) break;
  }
  return {
    port: app.port,
    async close(): Promise<void> {
      for (const socket of fillers) socket.destroy();
      await app.close();
    },
  };
}
