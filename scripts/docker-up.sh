#!/usr/bin/env bash
# Brings up a private Docker Engine for probelet's Docker runtime and its tests (`npm run
# docker:up`): Debian's docker.io (installed with apt when missing), dockerd on a containerd of
# its own, everything under $W (see docker-instance.sh), its bridge pl-docker0 on a link-local
# 169.254.X.0/24, and no iptables rules (--iptables=false: published ports go through
# docker-proxy, so this daemon never rewrites the machine's firewall or forwarding). Loads the
# test images cri:up builds (probelet.local/busybox:test and the pause image), exported from
# that containerd: one recipe for both runtimes. Idempotent. Prints `export DOCKER_HOST=…`.
set -euo pipefail
# -- --podman: the private Podman service instead (docker-podman.sh).
if [ "${1:-}" = --podman ]; then exec bash "$(dirname "$0")/docker-podman.sh" up; fi
if [ $# -gt 0 ]; then echo "docker-up: unknown argument $1 (only --podman)" >&2; exit 2; fi

# shellcheck source=docker-instance.sh
. "$(dirname "$0")/docker-instance.sh"
IMAGES=(probelet.local/busybox:test probelet.local/pause:3.9)
CRI_SOCK=/tmp/probelet-cri/containerd.sock

log() { echo "docker-up: $*" >&2; }

if [ "$(id -u)" != 0 ]; then
  log "needs root (dockerd creates namespaces, mounts, cgroups and a bridge); run it as root or with sudo"
  exit 1
fi

# 1. Packages, only when missing. The package's systemd units are not started: dockerd runs
#    here, detached, with its own paths (nothing listens on /var/run/docker.sock because of us).
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
if ! installed docker.io; then
  log "installing docker.io"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends docker.io >/dev/null
  # On a machine run by systemd the package starts the system's dockerd (docker0, iptables):
  # not what was asked for here, so the units it started are stopped again.
  if [ -d /run/systemd/system ]; then systemctl disable --now docker.service docker.socket >/dev/null 2>&1 || true; fi
fi

mkdir -p "$W"/{data,exec,containerd/root,containerd/state,images}

# 2. The subnet: recorded at the first up; else the first 169.254.X.0/24 (from .214) that is
#    neither routed here nor recorded by a cri:up instance.
subnet_taken() {
  local x=$1 f
  ip -4 route show 2>/dev/null | grep -q "^169\.254\.$x\.0/24 " && return 0
  for f in /tmp/probelet-cri*/instance.env; do
    [ -f "$f" ] && grep -qx "SUBNET=169.254.$x.0/24" "$f" && return 0
  done
  return 1
}
SUBNET=""
[ -f "$W/instance.env" ] && SUBNET="$(sed -n 's/^SUBNET=//p' "$W/instance.env")"
if [ -z "$SUBNET" ]; then
  for x in $(seq 214 250); do
    if ! subnet_taken "$x"; then SUBNET="169.254.$x.0/24"; break; fi
  done
  [ -n "$SUBNET" ] || { log "no free 169.254.X.0/24 subnet for the bridge"; exit 1; }
  printf 'SUBNET=%s\nBRIDGE=%s\n' "$SUBNET" "$BRIDGE" >"$W/instance.env"
fi
GATEWAY="${SUBNET%.0/24}.1"

# 3. The bridge, made here so dockerd uses it as is (-b) and never creates docker0.
if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
  ip link add name "$BRIDGE" type bridge
  ip addr add "$GATEWAY/24" dev "$BRIDGE"
fi
ip link set "$BRIDGE" up

# 4. containerd: dockerd's own, no CRI plugin (Docker uses containerd's API).
cat >"$W/containerd/config.toml" <<TOML
version = 2
root = "$W/containerd/root"
state = "$W/containerd/state"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$CTRD_SOCK"
[ttrpc]
  address = "$CTRD_SOCK.ttrpc"
[debug]
  address = "$CTRD_SOCK.debug"
[plugins."io.containerd.internal.v1.opt"]
  path = "$W/containerd/opt"
TOML
if containerd_running; then
  log "containerd already running (pid $(cat "$W/containerd.pid"))"
else
  rm -f "$CTRD_SOCK" "$CTRD_SOCK.ttrpc"
  setsid containerd --config "$W/containerd/config.toml" >"$W/containerd.log" 2>&1 </dev/null &
  echo $! >"$W/containerd.pid"
  for _ in $(seq 1 100); do [ -S "$CTRD_SOCK" ] && break; sleep 0.1; done
  [ -S "$CTRD_SOCK" ] || { log "containerd did not start; its log ($W/containerd.log):"; tail -20 "$W/containerd.log" >&2; exit 1; }
fi

# 5. dockerd, detached from this shell's session so it outlives `npm run`; no daemon.json of
#    the machine's (its own empty one), its own cgroup parent.
echo '{}' >"$W/daemon.json"
if dockerd_running; then
  log "dockerd already running (pid $(cat "$W/dockerd.pid"))"
else
  rm -f "$SOCK"
  setsid dockerd \
    --config-file "$W/daemon.json" \
    --host "unix://$SOCK" \
    --containerd "$CTRD_SOCK" \
    --data-root "$W/data" \
    --exec-root "$W/exec" \
    --pidfile "$W/dockerd.pid.daemon" \
    --bridge "$BRIDGE" \
    --iptables=false --ip-masq=false --ip-forward=false --ip6tables=false \
    --cgroup-parent /probelet-docker \
    --exec-opt native.cgroupdriver=cgroupfs \
    --log-opt max-size=10m --log-opt max-file=2 \
    >"$W/dockerd.log" 2>&1 </dev/null &
  echo $! >"$W/dockerd.pid"
  for _ in $(seq 1 300); do
    [ -S "$SOCK" ] && docker_ version >/dev/null 2>&1 && break
    kill -0 "$(cat "$W/dockerd.pid")" 2>/dev/null || break
    sleep 0.1
  done
  if ! docker_ version >/dev/null 2>&1; then
    log "dockerd did not start; its log ($W/dockerd.log):"
    tail -20 "$W/dockerd.log" >&2
    exit 1
  fi
fi

# 6. The test images, from cri:up's containerd (brought up when it is not: idempotent).
missing=()
for ref in "${IMAGES[@]}"; do docker_ image inspect "$ref" >/dev/null 2>&1 || missing+=("$ref"); done
if [ "${#missing[@]}" -gt 0 ]; then
  bash "$(dirname "$0")/cri-up.sh" >/dev/null
  ctr --address "$CRI_SOCK" -n k8s.io images export "$W/images/test.tar" "${missing[@]}"
  docker_ load -i "$W/images/test.tar" >/dev/null
  rm -f "$W/images/test.tar"
  log "loaded ${missing[*]}"
fi

log "dockerd $(docker_ version -f '{{.Server.Version}}') at unix://$SOCK, bridge $BRIDGE on $SUBNET, state in $W"
echo "$DOCKER_HOST_LINE"
