/**
 * A node's pull Secrets: fetched from the API server when a pull needs them, as the kubelet's
 * secret manager serves them (the Node authorizer lets a node read the Secrets its pods name).
 * Fetched at each such pull, so an updated Secret is used by the next pull, as on a kubelet.
 */
import type { V1Secret } from '@kubernetes/client-node';
import type { SecretGetter } from '../kubelet/pull-secrets.js';
import { httpStatus, plain, type KubeClients } from './kube.js';

export function apiSecretGetter(clients: Pick<KubeClients, 'core'>): SecretGetter {
  return async (namespace, name) => {
    try {
      const secret = plain<V1Secret>(await clients.core.readNamespacedSecret({ name, namespace }));
      return { ...(secret.type !== undefined ? { type: secret.type } : {}), data: secret.data ?? {} };
    } catch (err) {
      if (httpStatus(err) === 404) return undefined;
      throw err;
    }
  };
}
