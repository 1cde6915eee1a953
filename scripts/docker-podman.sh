#!/usr/bin/env bash
# `npm run docker:up|docker:env|docker:down -- --podman` (this script's `up`, `env`, `down`).
#
# up: a private Podman service for probelet's Docker runtime and
# its tests — Debian's podman (installed with apt when missing), rootful, `podman system
# service` on its own socket, storage and config under $W (see docker-podman-instance.sh),
# containers on its own CNI bridge pl-podman0 (no masquerading, no port mapping, no firewall
# rules). Loads the test images cri:up builds (probelet.local/busybox:test and the pause
# image), exported from that containerd. Idempotent. Prints `export DOCKER_HOST=…`.
set -euo pipefail

# shellcheck source=docker-podman-instance.sh
. "$(dirname "$0")/docker-podman-instance.sh"
IMAGES=(probelet.local/busybox:test probelet.local/pause:3.9)
CRI_SOCK=/tmp/probelet-cri/containerd.sock

log() { echo "docker-${ACTION:-up} --podman: $*" >&2; }
ACTION="${1:-up}"

# env: the line that points Docker clients (and probelet --runtime docker) at the service.
if [ "$ACTION" = env ]; then
  if ! podman_running; then
    log "the private Podman service is not running (npm run docker:up -- --podman)"
    exit 1
  fi
  echo "$DOCKER_HOST_LINE"
  exit 0
fi

# down: every container and volume of the service, the service (TERM, then KILL), conmon
# stragglers, mounts under $W, the bridge, and $W. Safe to run when nothing is up.
if [ "$ACTION" = down ]; then
  set +e
  if [ -d "$W/storage" ] && command -v podman >/dev/null; then
    podman_ rm -af -t 0 >/dev/null 2>&1
    podman_ volume rm -af >/dev/null 2>&1
  fi
  if [ -f "$W/podman.pid" ]; then
    pid="$(cat "$W/podman.pid")"
    if kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$SOCK"; then
      kill -TERM "$pid"
      for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
      log "stopped pid $pid"
    fi
  fi
  # conmon (one per container) outlives the service by design; only ours name our storage.
  for c in $(pgrep -f "conmon.*$W/storage" 2>/dev/null); do kill -KILL "$c" 2>/dev/null; done
  if [ -d "$W" ]; then
    awk -v w="$W/" 'index($2, w) == 1 { print $2 }' /proc/self/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
  fi
  if ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link delete "$BRIDGE" && log "removed bridge $BRIDGE"
  fi
  rm -rf "$W"
  log "removed $W"
  exit 0
fi
[ "$ACTION" = up ] || { log "unknown action $ACTION (up, env, down)"; exit 2; }

if [ "$(id -u)" != 0 ]; then
  log "needs root (a rootful Podman service creates namespaces, mounts, cgroups and a bridge); run it as root or with sudo"
  exit 1
fi

# 1. Packages, only when missing (containernetworking-plugins: the CNI bridge plugin it uses).
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
missing_pkgs=()
for p in podman containernetworking-plugins; do installed "$p" || missing_pkgs+=("$p"); done
if [ "${#missing_pkgs[@]}" -gt 0 ]; then
  log "installing ${missing_pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing_pkgs[@]}" >/dev/null
fi

mkdir -p "$W"/{storage,run,tmp,cni,images}

# 2. The subnet: recorded at the first up; else the first 169.254.X.0/24 (from .230) that is
#    neither routed here nor recorded by a cri:up or docker:up instance.
subnet_taken() {
  local x=$1 f
  ip -4 route show 2>/dev/null | grep -q "^169\.254\.$x\.0/24 " && return 0
  for f in /tmp/probelet-cri*/instance.env /tmp/probelet-docker*/instance.env; do
    [ -f "$f" ] && grep -qx "SUBNET=169.254.$x.0/24" "$f" && return 0
  done
  return 1
}
SUBNET=""
[ -f "$W/instance.env" ] && SUBNET="$(sed -n 's/^SUBNET=//p' "$W/instance.env")"
if [ -z "$SUBNET" ]; then
  for x in $(seq 230 250); do
    if ! subnet_taken "$x"; then SUBNET="169.254.$x.0/24"; break; fi
  done
  [ -n "$SUBNET" ] || { log "no free 169.254.X.0/24 subnet for the bridge"; exit 1; }
  printf 'SUBNET=%s\nBRIDGE=%s\n' "$SUBNET" "$BRIDGE" >"$W/instance.env"
fi
GATEWAY="${SUBNET%.0/24}.1"

# 3. Its configuration: CNI (the bridge plugin alone: Podman's own default network would add
#    masquerading and port-mapping firewall rules), cgroupfs, events to a file, its own storage,
#    and the test registries (registry:up) as insecure (their CA is not the machine's).
cat >"$W/cni/podman.conflist" <<JSON
{
  "cniVersion": "0.4.0",
  "name": "podman",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": { "type": "host-local", "routes": [{ "dst": "0.0.0.0/0" }], "ranges": [[{ "subnet": "$SUBNET", "gateway": "$GATEWAY" }]] }
    }
  ]
}
JSON
# Podman raises a rootful container's open-files and processes limits by default (1048576,
# 4194304), which fails ("error setting rlimit type 7 / 6: operation not permitted") where the
# hard limits are lower (a container, a CI sandbox): its containers get this process's hard
# open-files limit, and a processes limit the service itself has (its own was 32768 here under
# a shell's 96365).
# Each exec session (every exec probe) keeps its two conmon processes alive for
# exit_command_delay after it ended (Podman's default 300 s, Docker's exec record lifetime): an
# exec probe every second would hold 600 of them. The runtime reads an exec's exit code as
# soon as its output ended, so 30 s is ample.
EXIT_COMMAND_DELAY=30
NPROC="$(ulimit -Hu)"
[ "$NPROC" = unlimited ] || [ "$NPROC" -gt 32768 ] && NPROC=32768
cat >"$CONTAINERS_CONF" <<TOML
[containers]
log_driver = "k8s-file"
default_ulimits = ["nofile=$(ulimit -Hn):$(ulimit -Hn)", "nproc=$NPROC:$NPROC"]
[network]
network_backend = "cni"
cni_plugin_dirs = ["/usr/lib/cni"]
network_config_dir = "$W/cni"
default_network = "podman"
[engine]
cgroup_manager = "cgroupfs"
exit_command_delay = $EXIT_COMMAND_DELAY
events_logger = "file"
events_logfile_path = "$W/events.log"
tmp_dir = "$W/tmp"
static_dir = "$W/storage/libpod"
volume_path = "$W/storage/volumes"
infra_image = "probelet.local/pause:3.9"
TOML
cat >"$CONTAINERS_STORAGE_CONF" <<TOML
[storage]
driver = "overlay"
graphroot = "$W/storage"
runroot = "$W/run"
TOML
cat >"$CONTAINERS_REGISTRIES_CONF" <<TOML
unqualified-search-registries = []
[[registry]]
location = "127.0.0.1:5000"
insecure = true
[[registry]]
location = "127.0.0.1:5001"
insecure = true
TOML

# 4. The service, detached from this shell's session so it outlives `npm run`; no idle timeout.
if podman_running; then
  log "podman system service already running (pid $(cat "$W/podman.pid"))"
else
  rm -f "$SOCK"
  setsid podman --root "$W/storage" --runroot "$W/run" --tmpdir "$W/tmp" system service --time=0 "unix://$SOCK" >"$W/podman.log" 2>&1 </dev/null &
  echo $! >"$W/podman.pid"
  for _ in $(seq 1 300); do
    [ -S "$SOCK" ] && curl -sf --unix-socket "$SOCK" http://d/_ping >/dev/null 2>&1 && break
    kill -0 "$(cat "$W/podman.pid")" 2>/dev/null || break
    sleep 0.1
  done
  if ! curl -sf --unix-socket "$SOCK" http://d/_ping >/dev/null 2>&1; then
    log "podman system service did not start; its log ($W/podman.log):"
    tail -20 "$W/podman.log" >&2
    exit 1
  fi
fi

# 5. The test images, from cri:up's containerd (brought up when it is not: idempotent).
missing=()
for ref in "${IMAGES[@]}"; do podman_ image exists "$ref" || missing+=("$ref"); done
if [ "${#missing[@]}" -gt 0 ]; then
  bash "$(dirname "$0")/cri-up.sh" >/dev/null
  ctr --address "$CRI_SOCK" -n k8s.io images export "$W/images/test.tar" "${missing[@]}"
  podman_ load -q -i "$W/images/test.tar" >/dev/null
  rm -f "$W/images/test.tar"
  log "loaded ${missing[*]}"
fi

log "podman $(podman --version | awk '{print $3}') service at unix://$SOCK, bridge $BRIDGE on $SUBNET, state in $W"
echo "$DOCKER_HOST_LINE"
