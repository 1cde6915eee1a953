# Sourced by docker-up.sh, docker-env.sh and docker-down.sh: where the private Docker daemon
# lives. Everything is under $W (PROBELET_DOCKER_DIR, default /tmp/probelet-docker): dockerd's
# data root, exec root, pidfile and socket, and the containerd it runs on (a containerd of its
# own, never the system's nor cri-up's: dockerd would otherwise adopt whatever answers at
# /run/containerd/containerd.sock, which cri-up links to its own). Its bridge is pl-docker0 on
# a link-local 169.254.X.0/24 (never the machine's uplink nor a range someone routes), recorded
# in $W/instance.env at the first docker:up.

W="${PROBELET_DOCKER_DIR:-/tmp/probelet-docker}"
SOCK="$W/docker.sock"
CTRD_SOCK="$W/containerd/containerd.sock"
BRIDGE=pl-docker0
DOCKER_HOST_LINE="export DOCKER_HOST=unix://$SOCK"

# Our dockerd (its command line names our socket), not whatever got the saved pid since.
dockerd_running() {
  [ -f "$W/dockerd.pid" ] && [ -S "$SOCK" ] || return 1
  local pid; pid="$(cat "$W/dockerd.pid")"
  kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$SOCK"
}

containerd_running() {
  [ -f "$W/containerd.pid" ] && [ -S "$CTRD_SOCK" ] || return 1
  local pid; pid="$(cat "$W/containerd.pid")"
  kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$W/containerd/config.toml"
}

docker_() { docker -H "unix://$SOCK" "$@"; }
