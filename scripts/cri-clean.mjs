// Removes every pod sandbox and container of a CRI runtime (used by cri-down.sh on the
// private containerd only): containers stopped and removed, then sandboxes stopped (which
// frees their network namespace and IP) and removed. One that cannot be removed does not keep
// the others: each is tried, and those that failed are named (exit 1); cri-down.sh removes
// what their netns left once containerd is stopped. Usage: node cri-clean.mjs unix:///sock
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

const endpoint = process.argv[2];
const proto = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'runtime', 'cri', 'cri.proto');
const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(proto, { keepCase: true, longs: Number, enums: String, defaults: true }));
const client = new pkg.runtime.v1.RuntimeService(endpoint, grpc.credentials.createInsecure());
const call = (method, request) =>
  new Promise((resolve, reject) =>
    client[method](request, { deadline: Date.now() + 30_000 }, (err, res) => (err && err.code !== grpc.status.NOT_FOUND ? reject(err) : resolve(res))),
  );

/** Each failure, `<kind> <id>: <message>`. */
const failed = [];
const attempt = async (what, steps) => {
  try {
    for (const [method, request] of steps) await call(method, request);
  } catch (err) {
    failed.push(`${what}: ${err.details ?? err.message}`);
  }
};
try {
  const { containers } = await call('ListContainers', {});
  for (const c of containers) {
    await attempt(`container ${c.id}`, [
      ['StopContainer', { container_id: c.id, timeout: 0 }],
      ['RemoveContainer', { container_id: c.id }],
    ]);
  }
  const { items } = await call('ListPodSandbox', {});
  for (const s of items) {
    await attempt(`pod sandbox ${s.id}`, [
      ['StopPodSandbox', { pod_sandbox_id: s.id }],
      ['RemovePodSandbox', { pod_sandbox_id: s.id }],
    ]);
  }
  const found = `${containers.length} container(s) and ${items.length} pod sandbox(es)`;
  if (failed.length === 0) console.error(`cri-down: removed ${found} through the CRI`);
  else console.error(`cri-down: of ${found}, removed ${containers.length + items.length - failed.length} through the CRI; ${failed.length} could not be`);
  for (const f of failed) console.error(`cri-down: could not remove ${f}`);
} finally {
  client.close();
}
process.exitCode = failed.length > 0 ? 1 : 0;
