#!/usr/bin/env bash
# Tears down what `npm run cri:up` started (one instance: `--name NAME` or PROBELET_CRI_INSTANCE,
# see cri-instance.sh), leaving no process, mount, netns, bridge, cgroup, CNI result or
# directory of that instance behind, whether containerd is alive (pods removed through the
# CRI, which frees their netns and IPs) or was killed with pods still running (runc, shims
# and netns cleaned by hand), nor a netns its state names (a teardown that failed). Never
# touches another instance's bridge, results, cgroups or netns.
# Refuses while another process (a probelet run, a kubelet, crictl) is connected to the
# instance's socket; PROBELET_CRI_FORCE=1 tears down anyway. Safe to run when nothing is up.
set -uo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=cri-instance.sh
. "$HERE/cri-instance.sh"

log() { echo "cri-down: $*" >&2; }

if [ "$(id -u)" != 0 ]; then
  log "needs root"
  exit 1
fi

pid=""
[ -f "$W/containerd.pid" ] && pid="$(cat "$W/containerd.pid")"
# A killed containerd stays a zombie until PID 1 reaps it: that is not alive.
# Our containerd, not whatever got its pid after a reboot (the pid file lives on disk): its command line names our config.
alive() { [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] && [ "$(awk '{print $3}' "/proc/$pid/stat")" != Z ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$W/config.toml"; }

# 0. Not while something uses it: a kubelet or a probelet run would see its pods vanish.
if alive && [ "${PROBELET_CRI_FORCE:-}" != 1 ]; then
  users="$(socket_users "$pid" | tr '\n' ' ')"
  if [ -n "${users// /}" ]; then
    for u in $users; do log "in use by pid $u: $(tr '\0' ' ' <"/proc/$u/cmdline" 2>/dev/null | cut -c1-160)"; done
    log "instance ${CRI_INSTANCE:-default} ($SOCK) is in use: stop those first (cluster:down stops the kubelet), or set PROBELET_CRI_FORCE=1"
    exit 1
  fi
fi

# Container ids of this instance, for its cgroups (/k8s.io/<id> is shared by every instance).
ids=""
[ -d "$W/root/io.containerd.runtime.v2.task/k8s.io" ] && ids+=" $(ls "$W/root/io.containerd.runtime.v2.task/k8s.io" 2>/dev/null | tr '\n' ' ')"
[ -d "$W/state/io.containerd.runtime.v2.task/k8s.io" ] && ids+=" $(ls "$W/state/io.containerd.runtime.v2.task/k8s.io" 2>/dev/null | tr '\n' ' ')"
if alive && [ -S "$SOCK" ]; then
  ids+=" $(ctr --address "$SOCK" -n k8s.io containers ls -q 2>/dev/null | tr '\n' ' ')"
fi

# 1. Through the CRI while containerd is up.
if alive && [ -S "$SOCK" ]; then
  node "$HERE/cri-clean.mjs" "unix://$SOCK" || log "CRI clean-up failed; falling back to runc"
fi

# 2. Stop containerd.
if alive; then
  kill "$pid"
  for _ in $(seq 1 50); do alive || break; sleep 0.1; done
  alive && kill -9 "$pid"
fi

# A containerd of this instance whose pid file is gone (its directory was removed under it, e.g.
# by a second up/down of the same name racing this one) is found by its config path.
for stray in $(pgrep -f "^containerd --config $W/config.toml" 2>/dev/null); do
  kill "$stray" 2>/dev/null
  for _ in $(seq 1 50); do kill -0 "$stray" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$stray" 2>/dev/null
done

# 3. Leftovers of a containerd that died with pods running: containers, shims, netns.
if [ -d "$W/runc" ]; then
  for root in "$W"/runc/*; do
    [ -d "$root" ] || continue
    for id in $(runc --root "$root" list -q 2>/dev/null); do
      runc --root "$root" kill "$id" KILL 2>/dev/null
      runc --root "$root" delete -f "$id" 2>/dev/null
    done
  done
fi
for shim in $(pgrep -f "containerd-shim.*-address $SOCK" 2>/dev/null); do kill -9 "$shim" 2>/dev/null; done
TASKS="$W/state/io.containerd.runtime.v2.task"
if [ -d "$TASKS" ]; then
  for id in $(ls "$TASKS"/*/ 2>/dev/null); do rm -f /var/lib/cni/results/*-"$id"-* 2>/dev/null; done
fi
# The network namespaces this instance made and did not remove — a sandbox whose teardown
# failed, a containerd killed between stopping a sandbox and removing its netns: every one its
# own state names (the running tasks' specs, and its metadata, which keeps each sandbox's spec
# with its netns path until the sandbox is removed). The names are random per sandbox, so a
# name found there is this instance's; no other netns in /run/netns is touched.
META="$W/root/io.containerd.metadata.v1.bolt/meta.db"
netns_paths() {
  cat "$TASKS"/*/*/config.json "$META" 2>/dev/null | grep -ao '/run/netns/cni-[0-9a-f]\{8\}-[0-9a-f]\{4\}-[0-9a-f]\{4\}-[0-9a-f]\{4\}-[0-9a-f]\{12\}' | sort -u
}
netns_left=0
for ns in $(netns_paths); do
  f="/run/netns/$(basename "$ns")"
  [ -e "$f" ] || continue
  for _ in 1 2 3; do mountpoint -q "$f" || break; umount "$f" 2>/dev/null || break; done
  if ! rm -f "$f" 2>/dev/null || [ -e "$f" ]; then
    log "could not remove $f (a netns of this instance): it is still mounted beneath a later mount of /run/netns ($(awk '$5 == "/run/netns" { print "mount " $1 }' /proc/self/mountinfo | head -1)); it goes at the next reboot, or once that mount is undone"
    netns_left=$((netns_left + 1))
  fi
done
# CNI results are named <network>-<container id>-<interface>.
rm -f /var/lib/cni/results/"$NETNAME"-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]*-* 2>/dev/null
rmdir /var/lib/cni/results /var/lib/cni 2>/dev/null

# 4. Mounts under the work dir (overlay rootfs, shm), deepest first; then the bridge.
awk -v w="$W" '$2 == w || index($2, w "/") == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
ip link del "$BRIDGE" 2>/dev/null

# 5. Empty cgroups containerd's CRI made for this instance's containers (cgroupfs driver, no
# cgroup parent: /k8s.io/<id> in every hierarchy); /k8s.io itself only once empty.
for dir in /sys/fs/cgroup/*/k8s.io /sys/fs/cgroup/k8s.io; do
  [ -d "$dir" ] || continue
  for id in $ids; do
    [ -d "$dir/$id" ] && find "$dir/$id" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  rmdir "$dir" 2>/dev/null
done

# 6. Files: the default-endpoint link cri-up made (only if it is ours), the work dir and containerd's fixed runtime paths if nothing else uses them.
[ -z "$CRI_INSTANCE" ] && [ -L /run/containerd/containerd.sock ] && [ "$(readlink /run/containerd/containerd.sock)" = "$SOCK" ] && rm -f /run/containerd/containerd.sock
rm -rf "$W"
# Shim sockets of killed shims stay in containerd's fixed /run/containerd/s: remove them
# only when no other containerd is running on this machine.
if ! pgrep -x containerd >/dev/null; then rm -rf /run/containerd/s /run/containerd/fifo; fi
for d in /run/containerd/s /run/containerd/fifo /run/containerd/runc/k8s.io /run/containerd/runc /run/containerd /run/netns; do
  [ -d "$d" ] && rmdir "$d" 2>/dev/null
done

left="$(pgrep -f "containerd.*$W/" 2>/dev/null || true)"
if [ -n "$left" ]; then
  log "processes still running: $left"
  exit 1
fi
if [ "$netns_left" -gt 0 ]; then
  log "instance ${CRI_INSTANCE:-default} down, but $netns_left of its network namespaces are left (above)"
  exit 1
fi
log "instance ${CRI_INSTANCE:-default} done"
