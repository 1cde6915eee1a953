/**
 * A local TCP address where a dial hangs instead of failing: a listener in a child process
 * whose event loop is blocked (it never accepts) and whose accept queue has been filled, so
 * the kernel drops further SYNs. Only 127.0.0.1 is used: tests may not contact other hosts.
 */
import { spawn } from 'node:child_process';
import net from 'node:net';
import { once } from 'node:events';

export interface StalledListener {
  port: number;
  close(): Promise<void>;
}

// Node turns a backlog of 0 into 511, so 1 is the smallest queue we can ask for.
const CHILD_SCRIPT = `
const net = require('node:net');
const server = net.createServer();
server.listen({ host: '127.0.0.1', port: 0, backlog: 1 }, () => {
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

export async function startStalledListener(): Promise<StalledListener> {
  const child = spawn(process.execPath, ['-e', CHILD_SCRIPT], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = (await once(child.stdout, 'data')) as [Buffer];
  const port = Number.parseInt(chunk.toString('utf8'), 10);

  const fillers: net.Socket[] = [];
  for (let i = 0; i < 16; i++) {
    const socket = net.connect({ host: '127.0.0.1', port });
    fillers.push(socket);
    if (!(await connectsWithin(socket, 300))) break;
  }

  return {
    port,
    async close(): Promise<void> {
      for (const socket of fillers) socket.destroy();
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}
