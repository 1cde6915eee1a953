#!/usr/bin/env bash
# Removes what `npm run docker:up` made: every container and volume of the private daemon,
# dockerd and its containerd (TERM, then KILL), their mounts under $W, the bridge, and $W.
# Safe to run when nothing is up.
set -uo pipefail
# -- --podman: the private Podman service instead (docker-podman.sh).
if [ "${1:-}" = --podman ]; then exec bash "$(dirname "$0")/docker-podman.sh" down; fi
if [ $# -gt 0 ]; then echo "docker-down: unknown argument $1 (only --podman)" >&2; exit 2; fi

# shellcheck source=docker-instance.sh
. "$(dirname "$0")/docker-instance.sh"
log() { echo "docker-down: $*" >&2; }

if dockerd_running; then
  ids="$(docker_ ps -aq 2>/dev/null)"
  # shellcheck disable=SC2086
  [ -n "$ids" ] && docker_ rm -f -v $ids >/dev/null 2>&1
  vols="$(docker_ volume ls -q 2>/dev/null)"
  # shellcheck disable=SC2086
  [ -n "$vols" ] && docker_ volume rm -f $vols >/dev/null 2>&1
fi

# stop PIDFILE MATCH: TERM the process if its command line still names MATCH; KILL after 10 s.
stop() {
  local file=$1 match=$2 pid
  [ -f "$file" ] || return 0
  pid="$(cat "$file")"
  if kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$match"; then
    kill -TERM "$pid"
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    log "stopped pid $pid"
  fi
  rm -f "$file"
}
stop "$W/dockerd.pid" "$SOCK"
# containerd's shims outlive it by design: the containers above are gone, so only stragglers remain.
for shim in $(pgrep -f "containerd-shim.*-address $CTRD_SOCK" 2>/dev/null); do kill -KILL "$shim" 2>/dev/null; done
stop "$W/containerd.pid" "$W/containerd/config.toml"

if [ -d "$W" ]; then
  # Deepest first: overlay mounts, shm, netns bind mounts of the containers.
  awk -v w="$W/" 'index($2, w) == 1 { print $2 }' /proc/self/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
fi
if ip link show "$BRIDGE" >/dev/null 2>&1; then
  ip link delete "$BRIDGE" && log "removed bridge $BRIDGE"
fi
rm -rf "$W"
log "removed $W"
