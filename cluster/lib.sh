# Sourced by cluster/up.sh, down.sh and env.sh: where the local cluster lives and how its
# processes are recognised. Everything is on 127.0.0.1; every file under $D; every process
# started by up.sh has $D on its command line (that is how down.sh tells ours from others').

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
D="${PROBELET_CLUSTER_DIR:-/tmp/probelet-cluster}"
NODE_NAME="${PROBELET_CLUSTER_NODE:-probelet-kubelet}"
# The node name a future `probelet node` agent registers as: cluster:up writes its kubeconfig.
AGENT_NODE_NAME="${PROBELET_CLUSTER_AGENT_NODE:-probelet-node}"
# The kubelet's own containerd (cri-instance.sh): never the default instance probelet uses.
CRI_NAME="${PROBELET_CLUSTER_CRI:-kubelet}"
CRI_DIR="/tmp/probelet-cri-$CRI_NAME"
CRI_SOCK="$CRI_DIR/containerd.sock"
# The kubelet's cgroup root (cgroupfs driver): pods live under it in every v1 hierarchy. One per
# cluster: a kubelet removes the pod cgroups under its root that it does not know, and down.sh
# removes the root — two clusters on one machine (PROBELET_CLUSTER_CRI=NAME) must not share it.
CGROUP_ROOT="/probelet-$CRI_NAME"

# Ports, on 127.0.0.1 only; away from the defaults so a real cluster on the machine is not hit.
ETCD_PORT="${PROBELET_CLUSTER_ETCD_PORT:-23790}"
ETCD_PEER_PORT="${PROBELET_CLUSTER_ETCD_PEER_PORT:-23800}"
API_PORT="${PROBELET_CLUSTER_API_PORT:-26443}"
KCM_PORT="${PROBELET_CLUSTER_KCM_PORT:-20257}"
SCHED_PORT="${PROBELET_CLUSTER_SCHED_PORT:-20259}"
KUBELET_PORT="${PROBELET_CLUSTER_KUBELET_PORT:-20250}"
KUBELET_HEALTHZ_PORT="${PROBELET_CLUSTER_KUBELET_HEALTHZ_PORT:-20248}"

COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kubelet)

# The node's address: its InternalIP, which the API server dials (--kubelet-preferred-address-types
# InternalIP) for logs, exec and port-forward, so the kubelet serves there too and its serving
# certificate names it. PROBELET_CLUSTER_NODE_IP, else the source address of the default route —
# what the kubelet picks by itself when the host name resolves to loopback only — else the first
# global IPv4 address that is not on a bridge of ours; empty when there is none.
node_ip() {
  if [ -n "${PROBELET_CLUSTER_NODE_IP:-}" ]; then echo "$PROBELET_CLUSTER_NODE_IP"; return; fi
  local ip
  ip="$(ip -4 -o route get 1.1.1.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p' | head -1)"
  [ -n "$ip" ] || ip="$(ip -4 -o addr show scope global 2>/dev/null | awk '$2 !~ /^(pl-|probelet-)/ { split($4, a, "/"); print a[1]; exit }')"
  echo "$ip"
}

log() { echo "cluster-$(basename "$0" .sh): $*" >&2; }

# A process's start time (clock ticks since boot, /proc/PID/stat field 22): with its pid, an
# identity that holds from the fork on — unlike its command line, which is the forking shell's
# until it has exec'd, and unlike the pid alone, which the kernel reuses.
proc_starttime() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }"   # after the command name, which may hold spaces
  set -- $stat
  [ "$1" != Z ] || return 1
  echo "${20}"
}

# The pid of our component NAME when it is alive (not a zombie): the pid file holds "PID
# STARTTIME" written at the fork; an older file holding only a pid is checked by its command
# line naming $D (that is only sure once the process has exec'd).
component_pid() {
  local f="$D/run/$1.pid" pid start now
  [ -f "$f" ] || return 1
  read -r pid start <"$f" || [ -n "${pid:-}" ] || return 1
  now="$(proc_starttime "$pid")" || return 1
  if [ -n "${start:-}" ]; then
    [ "$now" = "$start" ] || return 1
  else
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$D/" || return 1
  fi
  echo "$pid"
}

# The lock on the machine's one cluster state dir, held by cluster:up, the oracle and the
# kubelet bench (cluster/lock.sh): beside $D, so it exists before $D does.
LOCK="$D.lock"

# apiserver_args PORT CERT_DIR: the kube-apiserver flags of this cluster, serving on 127.0.0.1:PORT
# (certificates, keys and etcd under $D, as up.sh makes them), in the array APISERVER_ARGS. One
# list for up.sh's API server and for a second one beside it (apiserver.sh, the restart test).
apiserver_args() {
  local port=$1 cert_dir=$2 P="$D/pki"
  APISERVER_ARGS=(
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$port"
    --etcd-servers "http://127.0.0.1:$ETCD_PORT"
    --tls-cert-file "$P/apiserver.crt" --tls-private-key-file "$P/apiserver.key" --client-ca-file "$P/ca.crt"
    --service-account-key-file "$P/sa.pub" --service-account-signing-key-file "$P/sa.key"
    --service-account-issuer https://kubernetes.default.svc --api-audiences https://kubernetes.default.svc
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction
    --service-cluster-ip-range 10.0.0.0/24 --allow-privileged=true
    --kubelet-client-certificate "$P/apiserver-kubelet-client.crt" --kubelet-client-key "$P/apiserver-kubelet-client.key"
    --kubelet-certificate-authority "$P/ca.crt" --kubelet-preferred-address-types InternalIP
    --cert-dir "$cert_dir"
  )
}
