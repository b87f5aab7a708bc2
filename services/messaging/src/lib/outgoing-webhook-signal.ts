/**
 * Wakes this process's outgoing webhook job when a send committed deliveries, so they go out at
 * once rather than at its next look. Processes without the job (tests, tools) ignore it.
 */
const listeners = new Set<() => void>();

export function wakeOutgoingWebhooks(): void {
  for (const wake of listeners) wake();
}

export function onOutgoingWebhooks(wake: () => void): () => void {
  listeners.add(wake);
  return () => listeners.delete(wake);
}
