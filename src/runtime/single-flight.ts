/**
 * One call per key at a time, shared by the CRI and Docker runtimes for sandbox removals: the
 * kubelet removes a finished pod's sandbox and removes it again when the pod is deleted, and
 * `close()` removes it too; runtimes refuse or even hang a removal that races another removal
 * of the same object (containerd can hang a RemovePodSandbox, dockerd answers "removal of
 * container … is already in progress"). A second caller shares the first one's promise.
 */
export type SingleFlight<K> = (key: K, work: () => Promise<void>) => Promise<void>;

export function singleFlight<K>(): SingleFlight<K> {
  const running = new Map<K, Promise<void>>();
  return (key, work) => {
    let call = running.get(key);
    if (!call) {
      call = work();
      running.set(key, call);
      const forget = (): void => {
        running.delete(key);
      };
      call.then(forget, forget);
    }
    return call;
  };
}
