// Removes every pod sandbox and container of a CRI runtime (used by cri-down.sh on the
// private containerd only): containers stopped and removed, then sandboxes stopped (which
// frees their network namespace and IP) and removed. Usage: node cri-clean.mjs unix:///sock
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

try {
  const { containers } = await call('ListContainers', {});
  for (const c of containers) {
    await call('StopContainer', { container_id: c.id, timeout: 0 });
    await call('RemoveContainer', { container_id: c.id });
  }
  const { items } = await call('ListPodSandbox', {});
  for (const s of items) {
    await call('StopPodSandbox', { pod_sandbox_id: s.id });
    await call('RemovePodSandbox', { pod_sandbox_id: s.id });
  }
  console.error(`cri-down: removed ${containers.length} container(s) and ${items.length} pod sandbox(es) through the CRI`);
} finally {
  client.close();
}
