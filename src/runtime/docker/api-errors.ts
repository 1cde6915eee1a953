/** An Engine API error read as the daemon gave it (docker-modem's shape: `statusCode`, `json`). */

/** The HTTP status the daemon answered, when it answered. */
export function apiStatus(err: unknown): number | undefined {
  const code = (err as { statusCode?: unknown } | undefined)?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

/** The daemon's own words (`No such image: …`), else the error's. */
export function apiMessage(err: unknown): string {
  const json = (err as { json?: unknown } | undefined)?.json;
  if (json && typeof json === 'object' && typeof (json as { message?: unknown }).message === 'string') return (json as { message: string }).message;
  if (typeof json === 'string' && json.trim()) return json.trim();
  return err instanceof Error ? err.message : String(err);
}

/** gRPC's `Unknown`: what cri-dockerd's errors carry when the kubelet words them. */
export const CODE_UNKNOWN = 2;
