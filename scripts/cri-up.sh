#!/usr/bin/env bash
# Brings up a private containerd for probelet's CRI runtime and tests (`npm run cri:up`, or
# `npm run cri:up -- --name NAME` for another instance, see cri-instance.sh): its own root,
# state and socket under $W, runc's state inside it, a CNI bridge on a 169.254.X.0/24 subnet
# (link-local: never the machine's uplink nor a private range someone routes), a pause image
# built from a tiny static C program and the busybox test image `probelet.local/busybox:test`
# built from busybox-static, the same in every instance. No registry is needed. Idempotent: a
# running instance is reused. Prints the endpoint; the default instance also links the
# default endpoint /run/containerd/containerd.sock to it when nothing is there.
# Facts behind each setting: docs/container-runtime-notes.md of the project's shared docs.
set -euo pipefail

# shellcheck source=cri-instance.sh
. "$(dirname "$0")/cri-instance.sh"
# Where registry-up.sh writes the test registries' hosts.toml (their CA): every instance's CRI
# reads registry settings from there, at each pull — so registries brought up after this
# containerd (or brought down and up again with a new CA) are trusted without a restart.
# shellcheck source=registry-instance.sh
. "$(dirname "$0")/registry-instance.sh"
BUSYBOX_IMAGE=probelet.local/busybox:test
PAUSE_IMAGE=probelet.local/pause:3.9

log() { echo "cri-up: $*" >&2; }

if [ "$(id -u)" != 0 ]; then
  log "needs root (containerd creates namespaces, mounts and cgroups); run it as root or with sudo"
  exit 1
fi

# 1. Packages, installed only when missing (apt-get update first, then).
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
missing=()
for pkg in containerd runc containernetworking-plugins busybox-static; do
  installed "$pkg" || missing+=("$pkg")
done
command -v gcc >/dev/null || missing+=(gcc)
installed libc6-dev || missing+=(libc6-dev)
if [ "${#missing[@]}" -gt 0 ]; then
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

ctr_() { ctr --address "$SOCK" -n k8s.io "$@"; }

# Our containerd (its command line names our config), not whatever got the saved pid after a reboot.
running() {
  [ -f "$W/containerd.pid" ] && [ -S "$SOCK" ] || return 1
  local pid; pid="$(cat "$W/containerd.pid")"
  kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$W/config.toml"
}

mkdir -p "$W"/{root,state,runc,opt,cni/net.d,cni/ipam,images,pods}
pick_subnet
printf 'INSTANCE=%s\nSUBNET=%s\nBRIDGE=%s\nNETNAME=%s\n' "${CRI_INSTANCE:-default}" "$SUBNET" "$BRIDGE" "$NETNAME" >"$W/instance.env"

# 2. Config: defaults plus what this machine kind needs (see the file comment).
cat >"$W/config.toml" <<TOML
version = 2
root = "$W/root"
state = "$W/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "$W/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # Without CAP_SYS_RESOURCE the sandbox's oom_score_adj -998 fails every RunPodSandbox.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = "$W/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$W/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$REGISTRY_HOSTS_DIR"
TOML

cat >"$W/cni/net.d/10-probelet.conflist" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "$NETNAME",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{ "subnet": "$SUBNET" }]],
        "dataDir": "$W/cni/ipam"
      }
    },
    { "type": "loopback" }
  ]
}
JSON

# 3. /run/netns, where containerd mounts each pod's network namespace, made a shared mount
# point of its own before the first one — what `ip netns add` and podman do the first time
# they find it is none, binding it over itself recursively: every netns mounted before that
# is then mounted twice, containerd's teardown unmounts only the upper one, and its unlink
# fails ("remove netns: unlinkat /var/run/netns/cni-…: device or resource busy"), which
# leaves the sandbox and its netns behind. Once it is a mount point nothing binds over it.
# Not done while namespaces are mounted in a /run/netns that is no mount point (binding then
# would do to them what it is meant to prevent): said, and left as it is.
NETNS_DIR=/run/netns
mkdir -p "$NETNS_DIR"
if ! mountpoint -q "$NETNS_DIR"; then
  if awk -v d="$NETNS_DIR/" 'index($2, d) == 1 { found = 1 } END { exit !found }' /proc/self/mounts; then
    log "warning: $NETNS_DIR holds mounted network namespaces but is no mount point: left as it is; a later \`ip netns add\` or podman binds it over them, and their teardown then fails (device or resource busy)"
  else
    mount --bind "$NETNS_DIR" "$NETNS_DIR"
  fi
fi
mountpoint -q "$NETNS_DIR" && mount --make-shared "$NETNS_DIR"

# 4. containerd, detached from this shell's session so it outlives `npm run`.
if running; then
  log "containerd already running (pid $(cat "$W/containerd.pid"))"
  # The config it was started with (config.toml is rewritten above): one from before
  # config_path does not read the registries' hosts.toml.
  if ! grep -qF "config_path = \"$REGISTRY_HOSTS_DIR\"" "$W/config.started.toml" 2>/dev/null; then
    log "this containerd was started before it read the test registries' CA ($REGISTRY_HOSTS_DIR): pulls from registry:up's registries fail with x509 errors until it is restarted (npm run cri:down${CRI_INSTANCE:+ -- --name $CRI_INSTANCE}, then cri:up)"
  fi
else
  rm -f "$SOCK" "$SOCK.ttrpc"
  setsid containerd --config "$W/config.toml" >"$W/containerd.log" 2>&1 </dev/null &
  echo $! >"$W/containerd.pid"
  cp "$W/config.toml" "$W/config.started.toml"
  for _ in $(seq 1 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
  if ! [ -S "$SOCK" ]; then
    log "containerd did not start; its log ($W/containerd.log):"
    tail -20 "$W/containerd.log" >&2
    exit 1
  fi
fi
if ! ctr_ plugins ls 2>/dev/null | grep -E 'io\.containerd\.grpc\.v1[[:space:]]+cri[[:space:]].*ok' >/dev/null; then
  log "the CRI plugin is not running; containerd's log ($W/containerd.log):"
  tail -20 "$W/containerd.log" >&2
  exit 1
fi

# 5. Images, built and imported once (a docker-archive tar: manifest.json, config, layer.tar).
case "$(uname -m)" in x86_64) ARCH=amd64 ;; aarch64) ARCH=arm64 ;; *) ARCH="$(uname -m)" ;; esac

# import_image REF ROOTFS_DIR CMD_JSON
import_image() {
  local ref=$1 rootfs=$2 cmd=$3 dir
  if ctr_ images ls -q | grep -qx "$ref"; then return; fi
  dir="$(mktemp -d "$W/images/build.XXXXXX")"
  tar --numeric-owner --owner=0 --group=0 -C "$rootfs" -cf "$dir/layer.tar" .
  local diff
  diff="sha256:$(sha256sum "$dir/layer.tar" | cut -d' ' -f1)"
  printf '{"architecture":"%s","os":"linux","config":{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],"Cmd":%s},"rootfs":{"type":"layers","diff_ids":["%s"]}}' \
    "$ARCH" "$cmd" "$diff" >"$dir/config.json"
  printf '[{"Config":"config.json","RepoTags":["%s"],"Layers":["layer.tar"]}]' "$ref" >"$dir/manifest.json"
  tar -C "$dir" -cf "$dir.tar" manifest.json config.json layer.tar
  ctr_ images import --all-platforms "$dir.tar" >/dev/null
  rm -rf "$dir" "$dir.tar"
  log "imported $ref"
}

# Pause: sleeps until SIGINT/SIGTERM, reaping children (it is PID 1 of the pod's PID namespace).
if ! ctr_ images ls -q | grep -qx "$PAUSE_IMAGE"; then
  P="$W/images/pause-rootfs"
  rm -rf "$P" && mkdir -p "$P"
  cat >"$W/images/pause.c" <<'C'
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
static void stop(int sig) { (void)sig; _exit(0); }
static void reap(int sig) { (void)sig; while (waitpid(-1, 0, WNOHANG) > 0) {} }
int main(void) {
  signal(SIGINT, stop); signal(SIGTERM, stop); signal(SIGCHLD, reap);
  for (;;) pause();
}
C
  gcc -static -Os -o "$P/pause" "$W/images/pause.c"
  import_image "$PAUSE_IMAGE" "$P" '["/pause"]'
  rm -rf "$P" "$W/images/pause.c"
fi

# Busybox: the static binary, a link per applet, users and groups, like the busybox image.
if ! ctr_ images ls -q | grep -qx "$BUSYBOX_IMAGE"; then
  B="$W/images/busybox-rootfs"
  rm -rf "$B" && mkdir -p "$B"/{bin,etc,tmp,root,var/www,proc,sys,dev}
  chmod 1777 "$B/tmp"
  cp /bin/busybox "$B/bin/busybox"
  for applet in $(/bin/busybox --list); do
    [ "$applet" = busybox ] || ln -sf busybox "$B/bin/$applet"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$B/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\n' >"$B/etc/group"
  import_image "$BUSYBOX_IMAGE" "$B" '["sh"]'
  rm -rf "$B"
fi

# The CRI default endpoint (`unix:///run/containerd/containerd.sock`, what probelet and crictl
# use without a flag) points here when no containerd owns it; cri-down removes that link.
DEFAULT_SOCK=/run/containerd/containerd.sock
if [ -z "$CRI_INSTANCE" ] && [ ! -e "$DEFAULT_SOCK" ] && [ ! -L "$DEFAULT_SOCK" ]; then
  mkdir -p /run/containerd
  ln -s "$SOCK" "$DEFAULT_SOCK"
  log "linked $DEFAULT_SOCK -> $SOCK (the default endpoint)"
fi

log "instance ${CRI_INSTANCE:-default}: dir $W, bridge $BRIDGE, subnet $SUBNET, CNI network $NETNAME"
echo "unix://$SOCK"
