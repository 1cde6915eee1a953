/** Kubelet version whose behaviour and `User-Agent` probelet reproduces. */
export const KUBE_VERSION = { major: 1, minor: 35 } as const;

/** Default `User-Agent` of HTTP and gRPC probes (`kube-probe/<major>.<minor>`). */
export const PROBE_USER_AGENT = `kube-probe/${KUBE_VERSION.major}.${KUBE_VERSION.minor}`;

/** `User-Agent` of an `httpGet` lifecycle hook (upstream's `NewRequestForHTTPGetAction(…, "lifecycle")`). */
export const LIFECYCLE_USER_AGENT = `kube-lifecycle/${KUBE_VERSION.major}.${KUBE_VERSION.minor}`;

/** How much of an HTTP body or an exec command's output a probe keeps (10 KiB). */
export const MAX_PROBE_OUTPUT_BYTES = 10 * 1024;

/** Requests in one HTTP redirect chain (the original plus 9 followed redirects). */
export const MAX_HTTP_REDIRECTS = 10;
