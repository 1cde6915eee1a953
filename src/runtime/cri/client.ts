/**
 * A typed client for the CRI `runtime.v1` RuntimeService and ImageService over gRPC
 * (`@grpc/grpc-js`), loaded from the small `cri.proto` next to this file. Field names stay
 * snake_case (`keepCase`), as in the published API, so a reader can match them to the spec.
 *
 * Every call has a deadline: a runtime that hangs must not hang the kubelet. Connection
 * failures are turned into errors that say what to do (see errors.ts).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type * as cri from './types.js';

/**
 * Where `cri.proto` is: beside this file when run from `src/`, and `src/runtime/cri/` from
 * `dist/runtime/cri/` (the package ships that one file of `src/`).
 */
function protoPath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const beside = join(here, 'cri.proto');
  return existsSync(beside) ? beside : join(here, '..', '..', '..', 'src', 'runtime', 'cri', 'cri.proto');
}

/** Deadline of an ordinary CRI call (the kubelet's `--runtime-request-timeout` is 2 min; local calls take ms). */
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;

type Unary<Req, Res> = (request: Req, timeoutMs?: number) => Promise<Res>;

export interface CriClient {
  readonly endpoint: string;
  Version: Unary<cri.VersionRequest, cri.VersionResponse>;
  Status: Unary<cri.StatusRequest, cri.StatusResponse>;
  RunPodSandbox: Unary<cri.RunPodSandboxRequest, cri.RunPodSandboxResponse>;
  StopPodSandbox: Unary<{ pod_sandbox_id: string }, object>;
  RemovePodSandbox: Unary<{ pod_sandbox_id: string }, object>;
  PodSandboxStatus: Unary<{ pod_sandbox_id: string }, cri.PodSandboxStatusResponse>;
  ListPodSandbox: Unary<cri.ListPodSandboxRequest, cri.ListPodSandboxResponse>;
  CreateContainer: Unary<cri.CreateContainerRequest, cri.CreateContainerResponse>;
  StartContainer: Unary<{ container_id: string }, object>;
  StopContainer: Unary<{ container_id: string; timeout: number }, object>;
  RemoveContainer: Unary<{ container_id: string }, object>;
  ListContainers: Unary<cri.ListContainersRequest, cri.ListContainersResponse>;
  ContainerStatus: Unary<{ container_id: string }, cri.ContainerStatusResponse>;
  ExecSync: Unary<cri.ExecSyncRequest, cri.ExecSyncResponse>;
  ImageStatus: Unary<{ image: cri.ImageSpec }, cri.ImageStatusResponse>;
  PullImage: Unary<cri.PullImageRequest, cri.PullImageResponse>;
  close(): void;
}

const RUNTIME_METHODS = [
  'Version',
  'Status',
  'RunPodSandbox',
  'StopPodSandbox',
  'RemovePodSandbox',
  'PodSandboxStatus',
  'ListPodSandbox',
  'CreateContainer',
  'StartContainer',
  'StopContainer',
  'RemoveContainer',
  'ListContainers',
  'ContainerStatus',
  'ExecSync',
] as const;
const IMAGE_METHODS = ['ImageStatus', 'PullImage'] as const;

type Callback = (err: grpc.ServiceError | null, res: unknown) => void;
type RawMethod = (req: unknown, meta: grpc.Metadata, opts: grpc.CallOptions, cb: Callback) => grpc.ClientUnaryCall;

/** A client for `endpoint` (`unix:///path`); connects lazily, on the first call. */
export function createCriClient(endpoint: string): CriClient {
  const definition = protoLoader.loadSync(protoPath(), { keepCase: true, longs: Number, enums: String, defaults: true });
  const pkg = grpc.loadPackageDefinition(definition) as unknown as {
    runtime: { v1: Record<'RuntimeService' | 'ImageService', grpc.ServiceClientConstructor> };
  };
  const options: grpc.ClientOptions = { 'grpc.max_receive_message_length': 16 * 1024 * 1024 };
  const runtime = new pkg.runtime.v1.RuntimeService(endpoint, grpc.credentials.createInsecure(), options);
  // The image service shares the runtime service's channel, as on a kubelet with one endpoint.
  const image = new pkg.runtime.v1.ImageService(endpoint, grpc.credentials.createInsecure(), { ...options, channelOverride: runtime.getChannel() });

  const bind = (client: grpc.Client, name: string) => {
    const method = (client as unknown as Record<string, RawMethod>)[name];
    if (typeof method !== 'function') throw new Error(`cri.proto has no method ${name}`);
    return (request: unknown, timeoutMs = DEFAULT_CALL_TIMEOUT_MS): Promise<unknown> =>
      new Promise((resolve, reject) => {
        // A gRPC deadline is a wall-clock instant of the transport, not kubelet time: no Clock here.
        // eslint-disable-next-line no-restricted-properties
        method.call(client, request, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (err, res) => {
          if (err) reject(err);
          else resolve(res);
        });
      });
  };
  const out: Record<string, unknown> = {
    endpoint,
    close: () => {
      image.close();
      runtime.close();
    },
  };
  for (const name of RUNTIME_METHODS) out[name] = bind(runtime, name);
  for (const name of IMAGE_METHODS) out[name] = bind(image, name);
  return out as unknown as CriClient;
}
