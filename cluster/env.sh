#!/usr/bin/env bash
# `npm run -s cluster:env`: exactly two shell lines, for `eval "$(npm run -s cluster:env)"`:
#   export KUBECONFIG=<admin kubeconfig>
#   export PATH=<dir with kubectl, kubelet, ...>:$PATH
# The PATH line also holds helm (cluster/build-helm.sh) and kwok (cluster/build-kwok.sh) when
# they are built. Without a cluster only the PATH line is printed (helm, kwok, and kubectl when
# cluster:build built it); nothing at all, and exit 1, when there is neither a cluster nor a
# binary built.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cache="${PROBELET_CACHE:-$HOME/.cache/probelet}"
# The helm this checkout's cluster/build-helm.sh builds (its cache key), not any other build.
helm_dir="$(bash "$(dirname "$0")/build-helm.sh" --print-dir)"
# Likewise kwok, the fleet bench's baseline.
kwok_dir="$(bash "$(dirname "$0")/build-kwok.sh" --print-dir)"
if [ ! -f "$D/admin.kubeconfig" ] || [ ! -f "$D/bin-dir" ]; then
  kube_dir="$(ls -d "$cache"/cluster-bin/*/ 2>/dev/null | while read -r d; do [ -f "$d/.complete" ] && echo "${d%/}"; done | tail -1 || true)"
  dirs="$(printf '%s\n' "$helm_dir" "$kwok_dir" "$kube_dir" | sed '/^$/d' | paste -sd:)"
  if [ -z "$dirs" ]; then
    log "no cluster at $D and nothing built: run \`npm run cluster:build\` (binaries) or \`npm run cluster:up\` first"
    exit 1
  fi
  log "no cluster at $D: PATH only (run \`npm run cluster:up\` for KUBECONFIG)"
  printf 'export PATH=%q:$PATH\n' "$dirs"
  exit 0
fi
printf 'export KUBECONFIG=%q\n' "$D/admin.kubeconfig"
printf 'export PATH=%q:$PATH\n' "$(cat "$D/bin-dir")${helm_dir:+:$helm_dir}${kwok_dir:+:$kwok_dir}"
