/**
 * The Docker runtime on a real daemon: the shared runtime scenarios (test/cri/runtime-scenarios.ts),
 * then what is the Docker runtime's own: volumes, hostPort, runAsUser, leftovers of a killed
 * probelet found by owner labels, a live run's containers left alone, and errors that name the fix.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it, onTestFinished } from 'vitest';
import { MANAGED_LABEL, NODE_LABEL, PID_LABEL, PID_START_LABEL, RUN_LABEL, processStartTime } from '../../src/runtime/cri/pod-config.js';
import { createDockerRuntime } from '../../src/runtime/docker/docker-runtime.js';
import { DEFAULT_PAUSE_IMAGE } from '../../src/runtime/docker/pod-config.js';
import { volumeProblems } from '../../src/runtime/docker/volumes.js';
import { current, freePort, run, statusOf, until, waitRunning } from '../e2e/helpers.js';
import { bb, httpd, pod, sh, stopRuntimeKubelets } from '../cri/helpers.js';
import { runtimeScenarios } from '../cri/runtime-scenarios.js';
import { DOCKER_CONNECTION, describeDocker, dockerClient, dockerTarget, leftInDaemon, startDockerKubelet } from './helpers.js';

runtimeScenarios(dockerTarget);

afterEach(async ({ task }) => {
  await stopRuntimeKubelets(task.id);
});

describeDocker('docker: what only the Docker runtime has', () => {
  it.concurrent('volumes: an emptyDir shared by two containers, a hostPath only when allowed, configMap files; runAsUser; a hostPort published on 127.0.0.1', async ({ task }) => {
    const host = mkdtempSync(join(tmpdir(), 'probelet-hostpath-'));
    onTestFinished(() => rmSync(host, { recursive: true, force: true }));
    // Readable by the reader's user (65534).
    chmodSync(host, 0o755);
    writeFileSync(join(host, 'from-host'), 'hello\n');
    const h = await startDockerKubelet(task.id, {
      allowHostPath: true,
      objects: { configMaps: new Map([['default/conf', new Map([['app.conf', Buffer.from('port=1\n')]])]]), secrets: new Map() },
    });
    const hostPort = await freePort();
    const shared = { name: 'shared', mountPath: '/shared' };
    run(
      h,
      pod(
        'vols',
        [
          bb(h, 'writer', sh('echo from-writer >/shared/note; exec sleep 600'), { volumeMounts: [shared] }),
          bb(h, 'reader', sh('exec sleep 600'), {
            volumeMounts: [shared, { name: 'host', mountPath: '/host' }, { name: 'conf', mountPath: '/etc/app' }],
            securityContext: { runAsUser: 65534 },
          }),
          bb(h, 'web', httpd(8080), { ports: [{ containerPort: 8080, hostPort }] }),
        ],
        {
          terminationGracePeriodSeconds: 1,
          volumes: [
            { name: 'shared', emptyDir: {} },
            { name: 'host', hostPath: { path: host } },
            { name: 'conf', configMap: { name: 'conf' } },
          ],
        },
      ),
    );
    const reader = (await waitRunning(h, 'vols', 'reader', 'regular', 20_000)).containerID ?? '';
    await waitRunning(h, 'vols', 'writer', 'regular', 20_000);
    const note = await until(async () => {
      const r = await h.runtime.execSync(reader, ['cat', '/shared/note'], 5000);
      return r.exitCode === 0 ? r.output : undefined;
    }, 10_000);
    expect(note).toBe('from-writer\n');
    expect(await h.runtime.execSync(reader, ['cat', '/host/from-host', '/etc/app/app.conf'], 5000)).toEqual({ exitCode: 0, output: 'hello\nport=1\n' });
    expect(await h.runtime.execSync(reader, ['id', '-u'], 5000)).toEqual({ exitCode: 0, output: '65534\n' });
    await waitRunning(h, 'vols', 'web', 'regular', 20_000);
    const body = await until(async () => {
      const res = await fetch(`http://127.0.0.1:${hostPort}/healthz`).catch(() => undefined);
      return res?.ok ? res.text() : undefined;
    }, 10_000);
    expect(body).toBe('ok\n');
    const uid = current(h, 'vols')?.metadata?.uid ?? '';
    expect(await leftInDaemon(uid, 'io.kubernetes.pod.uid')).toContain(`volume probelet_${uid}_shared`);
    await stopRuntimeKubelets(task.id);
    // The hostPath is the user's: left as it was.
    expect(readFileSync(join(host, 'from-host'), 'utf8')).toBe('hello\n');
  });

  it('volumes it cannot mount are refused with the field and the reason', () => {
    const p = pod('v', [{ name: 'c', image: 'x', volumeMounts: [{ name: 'n', mountPath: '/n', subPath: 'a' }] }], {
      volumes: [
        { name: 'n', nfs: { server: 's', path: '/' } },
        { name: 'h', hostPath: { path: '/etc' } },
        { name: 'cm', configMap: { name: 'absent' } },
        { name: 'opt', secret: { secretName: 'absent', optional: true } },
      ],
    });
    expect(volumeProblems(p, {}).map(String)).toEqual([
      'spec.volumes[0].nfs: Forbidden: the docker runtime mounts only emptyDir, configMap, secret, hostPath volumes (there is no volume plugin or API server behind it)',
      'spec.volumes[1].hostPath: Forbidden: a hostPath volume mounts a path of this machine: give --allow-host-path to allow it',
      'spec.volumes[2].configMap.name: Not found: "absent"',
      'spec.containers[0].volumeMounts[0].subPath: Forbidden: not supported by the docker runtime',
    ]);
    expect(volumeProblems(p, { allowHostPath: true }).map((e) => e.field)).not.toContain('spec.volumes[1].hostPath');
  });

  it('removes what a probelet that is gone left (its PID dead, or reused) at start; leaves a live run and a node agent alone', async () => {
    const docker = dockerClient();
    const dead = spawn('true');
    await once(dead, 'exit');
    const make = async (name: string, labels: Record<string, string>): Promise<string> => {
      const c = await docker.createContainer({ name: `probelet-test-${name}-${Date.now()}`, Image: DEFAULT_PAUSE_IMAGE, Labels: { [MANAGED_LABEL]: 'true', [RUN_LABEL]: `test-${name}`, ...labels } });
      return c.id;
    };
    const crashed = await make('crashed', { [PID_LABEL]: String(dead.pid ?? 0) });
    const reused = await make('reused', { [PID_LABEL]: String(process.pid), [PID_START_LABEL]: '1' });
    const live = await make('live', { [PID_LABEL]: String(process.pid), [PID_START_LABEL]: processStartTime(process.pid) });
    const node = await make('node', { [PID_LABEL]: String(dead.pid ?? 0), [NODE_LABEL]: 'n1' });
    const vol = await docker.createVolume({ Name: `probelet-test-crashed-${Date.now()}`, Labels: { [MANAGED_LABEL]: 'true', [PID_LABEL]: String(dead.pid ?? 0) } });
    const runDir = mkdtempSync(join(tmpdir(), 'probelet-docker-'));
    try {
      const runtime = await createDockerRuntime({ connection: DOCKER_CONNECTION, runDir });
      await runtime.close();
      const ids = (await docker.listContainers({ all: true, filters: { label: [`${MANAGED_LABEL}=true`] } })).map((c) => c.Id);
      expect(ids).not.toContain(crashed);
      expect(ids).not.toContain(reused);
      expect(ids).toContain(live);
      expect(ids).toContain(node);
      const volumes = ((await docker.listVolumes()).Volumes ?? []).map((v) => v.Name);
      expect(volumes).not.toContain(vol.name);
    } finally {
      for (const id of [crashed, reused, live, node]) await docker.getContainer(id).remove({ force: true }).catch(() => undefined);
      await docker.getVolume(vol.name).remove().catch(() => undefined);
      rmSync(runDir, { recursive: true, force: true });
    }
  });

  it('errors name the fix: no daemon at the socket; a missing pause image', async ({ task }) => {
    const dir = mkdtempSync(join(tmpdir(), 'probelet-docker-err-'));
    try {
      await expect(createDockerRuntime({ connection: { socketPath: join(dir, 'none.sock') }, runDir: dir })).rejects.toThrow(/no Docker daemon answers at unix:\/\/.*none\.sock.*npm run docker:up.*--docker-host/);
      mkdirSync(join(dir, 'pods'));
      const runtime = await createDockerRuntime({ connection: DOCKER_CONNECTION, runDir: join(dir, 'pods'), pauseImage: 'probelet.local/no-pause:0' });
      try {
        const p = pod('nopause', [], {});
        p.metadata = { ...p.metadata, uid: `uid-${task.id}` };
        await expect(runtime.runPodSandbox(p)).rejects.toThrow(/infra container: .*no-pause.*npm run docker:up/);
      } finally {
        await runtime.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.concurrent('a container whose command does not exist: StartError, exit 128, the daemon’s reason', async ({ task }) => {
    const h = await startDockerKubelet(task.id);
    run(h, pod('nocmd', [bb(h, 'c', ['/no/such/binary'])], { restartPolicy: 'Never' }));
    const done = await until(() => statusOf(current(h, 'nocmd'), 'c')?.state?.terminated, 20_000);
    expect(done).toMatchObject({ exitCode: 128, reason: 'StartError' });
    expect(done.message).toMatch(/no such file or directory|not found/);
  });
});
