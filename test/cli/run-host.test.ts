/**
 * `probelet run` on the process runtime says that commands run on this host, suggests
 * `--runtime cri` when a CRI socket answers, and refuses a pod that mounts volumes (its
 * writes to the mount path would land on the host) unless `--runtime process` is explicit.
 */
import { existsSync } from 'node:fs';
import { once } from 'node:events';
import net from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { volumeMountsOf } from '../../src/cli/run/host-runtime.js';
import { runCli } from './helpers.js';
import { nothingLeft, scratch, testPod, type Scratch } from './run-child.js';

let s: Scratch;
beforeEach(() => {
  s = scratch();
});
afterEach(() => {
  s.cleanup();
});

/** A pod whose container writes into the path where it mounts a volume. */
function writingPod(name: string, mountPath: string): unknown {
  return testPod(s, name, ['sh', '-c', `mkdir -p ${mountPath} && touch ${mountPath}/written && exec sleep 300`], {
    volumeMounts: [{ name: 'data', mountPath }],
    // Ready once the write is done, for --exit-on-ready.
    readinessProbe: { exec: { command: ['test', '-f', `${mountPath}/written`] }, periodSeconds: 1 },
  }, { volumes: [{ name: 'data', emptyDir: {} }] });
}

const NO_CRI = ['--cri-endpoint', 'unix:///nonexistent/probelet-test/cri.sock'];

describe('probelet run on the process runtime', () => {
  it('refuses a pod that mounts volumes, naming the mount and the two ways on, and starts nothing (exit 2)', async () => {
    const mountPath = join(s.dir, 'www');
    const file = s.manifest('pod.yaml', writingPod('writer', mountPath));
    const run = await runCli(['run', file, '--listen', '127.0.0.1:0', '--timeout', '5s', ...NO_CRI]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`probelet: runtime "process": each container's command runs on this host as user `);
    expect(run.stderr).toContain('probelet: Pod "writer" is not run: it mounts volumes');
    expect(run.stderr).toContain(`  * container "main" mounts volume "data" at ${mountPath}\n`);
    expect(run.stderr).toContain('run it with --runtime cri (containers from their images, volumes mounted), or give --runtime process');
    expect(run.stdout).toBe('');
    expect(existsSync(mountPath)).toBe(false);
    expect(await nothingLeft(s.marker, 500)).toBe(true);
  });

  it('runs the other pods of the file', async () => {
    const mountPath = join(s.dir, 'www');
    // Up until the run ends: a container that exits at once is gone by the relist that would
    // have shown it running (docs/timing-model.md §4), so its pod is never Ready.
    const plain = testPod(s, 'plain', ['sleep', '300'], {}, { restartPolicy: 'Never' });
    const file = s.manifest('pods.yaml', writingPod('writer', mountPath), plain);
    const run = await runCli(['run', file, '--listen', '127.0.0.1:0', '-o', 'json', '--exit-on-ready', '--timeout', '10s', ...NO_CRI]);
    expect(run.stderr).toContain('Pod "writer" is not run');
    expect(run.stdout).toContain('"plain"');
    expect(run.stdout).not.toContain('"writer"');
    expect(existsSync(mountPath)).toBe(false);
  });

  it('runs it on the host when --runtime process is given explicitly', async () => {
    const mountPath = join(s.dir, 'www');
    const file = s.manifest('pod.yaml', writingPod('writer', mountPath));
    const run = await runCli(['run', file, '--runtime', 'process', '--listen', '127.0.0.1:0', '-o', 'json', '--exit-on-ready', '--timeout', '10s', ...NO_CRI]);
    expect(run.stderr, run.stderr).not.toContain('is not run');
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(mountPath, 'written'))).toBe(true);
    expect(await nothingLeft(s.marker, 500)).toBe(true);
  });

  it('suggests --runtime cri at the endpoint that answers', async () => {
    const socket = join(s.dir, 'cri.sock');
    const listener = net.createServer((c) => c.destroy());
    listener.listen(socket);
    await once(listener, 'listening');
    try {
      const file = s.manifest('pod.yaml', testPod(s, 'plain', ['sleep', '300'], {}, { restartPolicy: 'Never' }));
      const run = await runCli(['run', file, '--listen', '127.0.0.1:0', '-o', 'json', '--exit-on-ready', '--timeout', '10s', '--cri-endpoint', `unix://${socket}`]);
      expect(run.stderr).toMatch(
        new RegExp(`^probelet: runtime "process": each container's command runs on this host as user \\S+; no image, volumes or network of its own: pods that mount volumes, need their image's programs or write outside /tmp are not run \\(a CRI runtime answers at unix://${socket.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: --runtime cri runs the images there\\)$`, 'm'),
      );
    } finally {
      listener.close();
    }
  });

  it('lists init and app container mounts and devices', () => {
    expect(
      volumeMountsOf({
        spec: {
          initContainers: [{ name: 'init', volumeMounts: [{ name: 'a', mountPath: '/a' }] }],
          containers: [{ name: 'app', volumeDevices: [{ name: 'b', devicePath: '/dev/b' }] }],
        },
      }),
    ).toEqual(['container "init" mounts volume "a" at /a', 'container "app" maps volume "b" to /dev/b']);
  });
});
