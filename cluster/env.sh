#!/usr/bin/env bash
# `npm run -s cluster:env`: exactly two shell lines, for `eval "$(npm run -s cluster:env)"`:
#   export KUBECONFIG=<admin kubeconfig>
#   export PATH=<dir with kubectl, kubelet, ...>:$PATH
# Fails (nothing on stdout) when cluster:up has not run.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
if [ ! -f "$D/admin.kubeconfig" ] || [ ! -f "$D/bin-dir" ]; then
  log "no cluster at $D: run \`npm run cluster:up\` first"
  exit 1
fi
printf 'export KUBECONFIG=%q\n' "$D/admin.kubeconfig"
printf 'export PATH=%q:$PATH\n' "$(cat "$D/bin-dir")"
