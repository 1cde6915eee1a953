# Sourced by docker-podman.sh, docker-env.sh and docker-down.sh with --podman: where the
# private Podman service lives. Everything is under $W (PROBELET_PODMAN_DIR, default
# /tmp/probelet-podman): its storage (graph root and run root), tmp dir, containers.conf,
# storage.conf and registries.conf (given to it through CONTAINERS_*: the machine's own
# /etc/containers is never read or written), its CNI network config and its socket. Its
# bridge is pl-podman0 on a link-local 169.254.X.0/24 with neither masquerading nor port
# mapping (no firewall rule is ever added), recorded in $W/instance.env at the first up.

W="${PROBELET_PODMAN_DIR:-/tmp/probelet-podman}"
SOCK="$W/podman.sock"
BRIDGE=pl-podman0
DOCKER_HOST_LINE="export DOCKER_HOST=unix://$SOCK"
export CONTAINERS_CONF="$W/containers.conf"
export CONTAINERS_STORAGE_CONF="$W/storage.conf"
export CONTAINERS_REGISTRIES_CONF="$W/registries.conf"

# Our service (its command line names our socket), not whatever got the saved pid since.
podman_running() {
  [ -f "$W/podman.pid" ] && [ -S "$SOCK" ] || return 1
  local pid; pid="$(cat "$W/podman.pid")"
  kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$SOCK"
}

podman_() { podman --root "$W/storage" --runroot "$W/run" --tmpdir "$W/tmp" "$@"; }
