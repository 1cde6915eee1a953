# Sourced by cri-up.sh and cri-down.sh: which containerd instance they act on, and its names.
#
# An instance is named by `--name NAME` (e.g. `npm run cri:up -- --name kubelet`) or by
# PROBELET_CRI_INSTANCE; without either it is the default instance, whose paths are those
# probelet's tests and CI have always used (/tmp/probelet-cri, bridge probelet-cni0,
# 169.254.213.0/24, CNI network "probelet", and the /run/containerd/containerd.sock link).
# Each named instance has its own directory (/tmp/probelet-cri-NAME unless PROBELET_CRI_DIR
# says otherwise), socket, bridge (pl-NAME), CNI network (probelet_NAME) and a 169.254.X.0/24
# subnet picked at its first cri:up and kept in $W/instance.env (or the /24 given with
# `--subnet CIDR`: pod IPs a Service can list, since the API server refuses link-local
# EndpointSlice addresses — docs/node.md). One containerd per node agent:
# a kubelet removes every sandbox of its runtime it does not own, so two agents never share one.

CRI_INSTANCE="${PROBELET_CRI_INSTANCE:-}"
SUBNET_WANTED=""
while [ $# -gt 0 ]; do
  case "$1" in
    --name) [ $# -ge 2 ] || { echo "$(basename "$0"): --name needs a value, e.g. --name kubelet" >&2; exit 2; }
            CRI_INSTANCE="$2"; shift 2 ;;
    --name=*) CRI_INSTANCE="${1#--name=}"; shift ;;
    --subnet) [ $# -ge 2 ] || { echo "$(basename "$0"): --subnet needs a value, e.g. --subnet 100.64.151.0/24" >&2; exit 2; }
              SUBNET_WANTED="$2"; shift 2 ;;
    --subnet=*) SUBNET_WANTED="${1#--subnet=}"; shift ;;
    *) echo "$(basename "$0"): unknown argument '$1' (usage: [--name NAME] [--subnet A.B.C.0/24], or env PROBELET_CRI_INSTANCE)" >&2; exit 2 ;;
  esac
done
[ "$CRI_INSTANCE" = default ] && CRI_INSTANCE=""
if [ -n "$SUBNET_WANTED" ]; then
  if ! [[ "$SUBNET_WANTED" =~ ^([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})\.0/24$ ]] || [ "${BASH_REMATCH[1]}" -gt 255 ] || [ "${BASH_REMATCH[2]}" -gt 255 ] || [ "${BASH_REMATCH[3]}" -gt 255 ]; then
    echo "$(basename "$0"): --subnet '$SUBNET_WANTED' must be an IPv4 /24 like 100.64.151.0/24" >&2
    exit 2
  fi
  [ -n "$CRI_INSTANCE" ] || { echo "$(basename "$0"): --subnet needs --name NAME (the default instance keeps 169.254.213.0/24, which the tests rely on)" >&2; exit 2; }
fi
# The bridge name is pl-NAME and Linux caps interface names at 15 bytes.
if [ -n "$CRI_INSTANCE" ] && ! [[ "$CRI_INSTANCE" =~ ^[a-z0-9][a-z0-9-]{0,11}$ ]]; then
  echo "$(basename "$0"): instance name '$CRI_INSTANCE' must be 1-12 of a-z, 0-9 and '-' (it names the bridge pl-NAME)" >&2
  exit 2
fi

if [ -z "$CRI_INSTANCE" ]; then
  W="${PROBELET_CRI_DIR:-/tmp/probelet-cri}"
  BRIDGE=probelet-cni0
  NETNAME=probelet
else
  W="${PROBELET_CRI_DIR:-/tmp/probelet-cri-$CRI_INSTANCE}"
  BRIDGE="pl-$CRI_INSTANCE"
  NETNAME="probelet_$CRI_INSTANCE"
fi
SOCK="$W/containerd.sock"

# The subnet: the default's fixed one, or the one this instance recorded, or a free one.
# Free: not routed on this machine and not recorded by another instance under /tmp.
subnet_taken() {
  local x=$1 f
  [ "$x" = 213 ] && return 0
  ip -4 route show 2>/dev/null | grep -q "^169\.254\.$x\.0/24 " && return 0
  for f in /tmp/probelet-cri*/instance.env; do
    [ -f "$f" ] && [ "$f" != "$W/instance.env" ] && grep -qx "SUBNET=169.254.$x.0/24" "$f" && return 0
  done
  return 1
}
pick_subnet() {
  if [ -z "$CRI_INSTANCE" ]; then SUBNET=169.254.213.0/24; return; fi
  local recorded=""
  [ -f "$W/instance.env" ] && recorded="$(sed -n 's/^SUBNET=//p' "$W/instance.env")"
  if [ -n "$SUBNET_WANTED" ]; then
    if [ -n "$recorded" ] && [ "$recorded" != "$SUBNET_WANTED" ] && running; then
      echo "$(basename "$0"): instance $CRI_INSTANCE runs on $recorded; stop it first (npm run cri:down -- --name $CRI_INSTANCE)" >&2
      exit 2
    fi
    SUBNET="$SUBNET_WANTED"
    return
  fi
  if [ -n "$recorded" ]; then SUBNET="$recorded"; return; fi
  local x=$(( $(printf '%s' "$CRI_INSTANCE" | cksum | cut -d' ' -f1) % 200 + 20 )) i
  for i in $(seq 0 199); do
    subnet_taken "$x" || { SUBNET="169.254.$x.0/24"; return; }
    x=$(( (x - 20 + 1) % 200 + 20 ))
  done
  echo "$(basename "$0"): no free 169.254.X.0/24 subnet for instance $CRI_INSTANCE" >&2
  exit 1
}

# Pids of processes other than containerd and its shims holding a connection to our socket
# (a probelet run, a kubelet, crictl): found by matching the peers of the connections
# containerd accepted on $SOCK in `ss -xp`.
socket_users() {
  local server_pid=${1:-}
  command -v ss >/dev/null || return 0
  ss -xpn 2>/dev/null | awk -v sock="$SOCK" -v spid="$server_pid" '
    NR > 1 {
      local_addr = $5; local_ino = $6; peer_ino = $8
      users = ""; for (i = 9; i <= NF; i++) users = users $i
      if (local_addr == sock && peer_ino != "*" && peer_ino != "0") peers[peer_ino] = 1
      owner[local_ino] = users
    }
    END {
      for (p in peers) {
        u = owner[p]
        while (match(u, /pid=[0-9]+/)) {
          pid = substr(u, RSTART + 4, RLENGTH - 4); u = substr(u, RSTART + RLENGTH)
          if (pid != spid) print pid
        }
      }
    }' | sort -un | while read -r p; do
      # containerd-shim and `containerd publish` talk to containerd too; they are its own.
      comm="$(cat "/proc/$p/comm" 2>/dev/null)" || continue
      case "$comm" in containerd|containerd-shim*) continue ;; esac
      echo "$p"
    done
}
