#!/usr/bin/env bash
# A second kube-apiserver beside cluster:up's, for tests that restart an API server without
# touching the shared one (test/node/apiserver-restart.test.ts):
#   bash cluster/apiserver.sh --port PORT --cert-dir DIR
# The same binary, certificates, etcd and flags as up.sh's (apiserver_args in lib.sh), on
# 127.0.0.1:PORT, in the foreground: it execs the server, so the caller's SIGTERM or SIGKILL
# reaches it directly, and it dies with its parent (setpriv --pdeathsig) so a killed test
# leaves none. Two differences from the first, so that the two do not fight over shared
# objects: no endpoint reconciler (the `kubernetes` Service keeps the first's port) and no
# identity lease (both would renew the same kube-system lease, named from the host name).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

port="" cert_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --port) port="${2:-}"; shift 2 ;;
    --cert-dir) cert_dir="${2:-}"; shift 2 ;;
    *) log "unknown argument '$1' (usage: --port PORT --cert-dir DIR)"; exit 2 ;;
  esac
done
[ -n "$port" ] && [ -n "$cert_dir" ] || { log "usage: --port PORT --cert-dir DIR"; exit 2; }
[ "$port" != "$API_PORT" ] || { log "port $port is the cluster's own API server's: pick another"; exit 2; }
[ -f "$D/bin-dir" ] && [ -f "$D/pki/.complete" ] || { log "no cluster at $D (npm run cluster:up first)"; exit 1; }
BIN="$(cat "$D/bin-dir")"
apiserver_args "$port" "$cert_dir"
pdeathsig=()
command -v setpriv >/dev/null && pdeathsig=(setpriv --pdeathsig KILL --)
exec "${pdeathsig[@]}" "$BIN/kube-apiserver" "${APISERVER_ARGS[@]}" --endpoint-reconciler-type none --feature-gates APIServerIdentity=false
