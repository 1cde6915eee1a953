/**
 * The machine's cluster state dir (one per machine) is used by one cluster:up, oracle or
 * kubelet bench at a time: `takeClusterLock('oracle')` holds cluster/lock.sh's lock for this
 * process's life (the holder is a child that lets go when this process ends, however it ends),
 * or throws saying who holds it.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('./lock.sh', import.meta.url));

/**
 * @param {string} what
 * @param {string} [script] cluster/lock.sh's path (a bundled caller passes its own: import.meta.url moves with the bundle)
 * @returns {Promise<void>}
 */
export function takeClusterLock(what, script = SCRIPT) {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [script, what, String(process.pid)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8');
    const onData = (/** @type {string} */ chunk) => {
      out += chunk;
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      const answer = out.slice(0, nl);
      child.stdout.off('data', onData);
      child.stdout.destroy();
      child.unref();
      if (answer === 'ok') resolve();
      else reject(new Error(`${what}: the cluster state dir is ${answer}`));
    };
    child.stdout.on('data', onData);
    child.on('error', reject);
    child.on('exit', (code) => {
      if (!out.includes('\n')) reject(new Error(`${what}: cluster/lock.sh exited ${code} without an answer`));
    });
  });
}
