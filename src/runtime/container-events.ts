/**
 * The subscribers of a runtime's container events (its part of the PLEG), shared by every
 * runtime: each listener gets its own copy of the status, and one that throws neither stops
 * the others nor the runtime's bookkeeping.
 */
import type { ContainerEvent, RuntimeContainerStatus } from './types.js';

export interface ContainerEvents {
  subscribe(listener: (event: ContainerEvent) => void): () => void;
  emit(type: ContainerEvent['type'], status: RuntimeContainerStatus): void;
}

export function containerEvents(): ContainerEvents {
  const listeners = new Set<(event: ContainerEvent) => void>();
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    emit(type, status) {
      for (const listener of [...listeners]) {
        try {
          listener({ type, status: { ...status } });
        } catch {
          // A consumer's bug must not end a container's bookkeeping.
        }
      }
    },
  };
}
