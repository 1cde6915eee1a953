#!/usr/bin/env bash
# `npm run cluster:down`: stops what cluster:up started and removes what it made — the
# kubelet first (so nothing recreates pods), then its containerd instance with its pods
# (cri-down.sh --name kubelet: netns, mounts, bridge, CNI results), the control plane, the
# kubelet's cgroups under /probelet-kubelet, the canary chains the kubelet adds to iptables,
# mounts under the state dir, and the state dir. Never touches another containerd instance.
# Safe to run when nothing is up.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || { log "needs root"; exit 1; }

stop() {
  local name=$1 pid
  pid="$(component_pid "$name")" || return 0
  kill "$pid" 2>/dev/null
  for _ in $(seq 1 100); do component_pid "$name" >/dev/null || break; sleep 0.1; done
  if component_pid "$name" >/dev/null; then kill -9 "$pid" 2>/dev/null; sleep 0.2; fi
  log "stopped $name (pid $pid)"
}

stop kubelet
if [ -d "$CRI_DIR" ]; then
  PROBELET_CRI_DIR="$CRI_DIR" bash "$ROOT/scripts/cri-down.sh" --name "$CRI_NAME" || log "cri-down of instance $CRI_NAME failed (see above)"
fi
for c in kube-scheduler kube-controller-manager kube-apiserver etcd; do stop "$c"; done

# The kubelet's cgroups (its cgroup root in every hierarchy), deepest first: empty once its
# containers are gone.
for h in /sys/fs/cgroup/*/; do
  [ -d "$h${CGROUP_ROOT#/}" ] && find "$h${CGROUP_ROOT#/}" -depth -type d -exec rmdir {} \; 2>/dev/null
done
# The kubelet's iptables canaries (pkg/kubelet/kubelet_network_linux.go: KUBE-IPTABLES-HINT,
# KUBE-KUBELET-CANARY in the mangle table), only when no other kubelet runs here.
if ! pgrep -x kubelet >/dev/null; then
  for ipt in iptables ip6tables; do
    command -v "$ipt" >/dev/null || continue
    for chain in KUBE-KUBELET-CANARY KUBE-IPTABLES-HINT; do
      "$ipt" -w -t mangle -X "$chain" 2>/dev/null
    done
  done
fi
if [ -d "$D" ]; then
  awk -v d="$D" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
  rm -rf "$D"
fi

# kubectl's discovery cache for our API server (kubectl keeps it in ~/.kube/cache).
rm -rf "$HOME/.kube/cache/discovery/127.0.0.1_$API_PORT"
rmdir "$HOME/.kube/cache/discovery" "$HOME/.kube/cache" "$HOME/.kube" 2>/dev/null

left="$(pgrep -f -- "$D/" 2>/dev/null || true)"
if [ -n "$left" ]; then log "processes still running: $left"; exit 1; fi
for h in /sys/fs/cgroup/*/; do
  [ -d "$h${CGROUP_ROOT#/}" ] && { log "cgroup $h${CGROUP_ROOT#/} is not empty (a container still runs in it?)"; exit 1; }
done
log "done"
