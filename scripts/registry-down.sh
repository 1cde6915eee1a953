#!/usr/bin/env bash
# Removes what `npm run registry:up` made: both registries (TERM, then KILL) and $RW.
set -uo pipefail
# shellcheck source=registry-instance.sh
. "$(dirname "$0")/registry-instance.sh"
for name in public private; do
  if registry_running "$name"; then
    pid="$(cat "$RW/$name.pid")"
    kill -TERM "$pid"
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    echo "registry-down: stopped the $name registry (pid $pid)" >&2
  fi
done
rm -rf "$RW"
