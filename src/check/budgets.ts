/**
 * STUB (lint branch): the budgets helper owns this file; the integrator takes the budgets
 * branch's real `budgets.ts` on merge. Only the exported signatures are fixed here.
 */
import type { ManifestObject } from '../api/documents.js';
import type { Container, Pod } from '../api/types.js';
import type { ContainerBudget, ContainerRole } from './types.js';

export function computeBudget(object: ManifestObject, _pod: Pod, container: Container, _role: ContainerRole): ContainerBudget {
  return {
    file: object.source,
    object: { apiVersion: object.apiVersion, kind: object.kind, namespace: object.namespace, name: object.name },
    container: container.name,
    probes: [],
    startupBudgetSeconds: null,
    earliestReadySeconds: null,
    hangToKillSeconds: null,
    hangToNotReadySeconds: null,
  };
}

export function formatBudgetTable(budgets: readonly ContainerBudget[]): string {
  return budgets.map((b) => `${b.container}: budgets computed by the budgets branch`).join('\n');
}
