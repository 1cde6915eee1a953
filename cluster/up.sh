#!/usr/bin/env bash
# `npm run cluster:up`: a one-node Kubernetes on 127.0.0.1, from the binaries cluster/build.sh
# makes: etcd, kube-apiserver (Node,RBAC; certificates and service-account keys made here with
# openssl), kube-controller-manager, kube-scheduler and the real kubelet, registered as node
# $NODE_NAME and talking CRI to its own containerd instance (cri-up.sh --name kubelet), never
# the default one probelet uses. Idempotent: what runs is kept, what is missing is started.
# Also writes a kubeconfig for a second node name ($AGENT_NODE_NAME) for a `probelet node`
# agent. Prints where everything is. The kubelet settings and why: docs/cluster.md.
# PROBELET_CLUSTER_NO_KUBELET=1: the control plane only (no kubelet, no containerd instance),
# for a second cluster whose nodes are all simulated (the fleet bench's, docs/node.md): no real
# node for the scheduler to put fleet pods on.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

NO_KUBELET="${PROBELET_CLUSTER_NO_KUBELET:-0}"
# PROBELET_CLUSTER_CLIENT_QPS=N: the controller manager's and the scheduler's API client allow N
# requests a second (burst 2N) instead of their defaults (20/30 and 50/100), for a fleet control
# plane where they, not the node agents, would bound pods created and bound a second (docs/node.md).
CLIENT_QPS="${PROBELET_CLUSTER_CLIENT_QPS:-}"
client_qps=()
if [ -n "$CLIENT_QPS" ]; then
  [[ "$CLIENT_QPS" =~ ^[1-9][0-9]{0,4}$ ]] || { log "PROBELET_CLUSTER_CLIENT_QPS=$CLIENT_QPS: a whole number of requests a second (1-99999)"; exit 2; }
  client_qps=(--kube-api-qps "$CLIENT_QPS" --kube-api-burst "$((2 * CLIENT_QPS))")
fi
[ "$(id -u)" = 0 ] || { log "needs root (the kubelet and containerd manage cgroups, mounts and netns): run it as root"; exit 1; }
for tool in openssl ss curl unshare; do
  command -v "$tool" >/dev/null || { log "$tool is missing: apt-get install -y ${tool/ss/iproute2}"; exit 1; }
done
command -v go >/dev/null || { log "Go is missing: install Go >= 1.25 (https://go.dev/doc/install) and put it on PATH; cluster/build.sh builds the components with it"; exit 1; }

# One cluster:up, oracle or kubelet bench at a time on this machine's state dir.
exec 8< <(bash "$ROOT/cluster/lock.sh" cluster:up $$)
read -r answer <&8 || answer="no answer from cluster/lock.sh"
[ "$answer" = ok ] || { log "refused: the cluster state dir is $answer"; exit 1; }

mkdir -p "$D"/{pki,run,logs,etcd,kubelet,pod-logs,sysctl}

# On any failure, stop what this run started (components, and the kubelet's containerd if it
# was not up before), so a failed cluster:up leaves nothing running.
started=()
cri_started=false
cleanup_on_failure() {
  local rc=$? name pid
  [ "$rc" = 0 ] && return
  for name in $(printf '%s\n' "${started[@]}" | tac); do
    pid="$(component_pid "$name")" || continue
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 1 50); do component_pid "$name" >/dev/null || break; sleep 0.1; done
    component_pid "$name" >/dev/null && kill -KILL -- "-$pid" 2>/dev/null
    rm -f "$D/run/$name.pid"
    log "stopped $name (pid $pid): this cluster:up failed"
  done
  if $cri_started; then
    PROBELET_CRI_DIR="$CRI_DIR" bash "$ROOT/scripts/cri-down.sh" --name "$CRI_NAME" >&2 || log "cri-down of instance $CRI_NAME failed"
  fi
}
trap cleanup_on_failure EXIT

# 1. Binaries (cached by go.sum: a second cluster:up does not rebuild).
start=$SECONDS
BIN="$(bash "$ROOT/cluster/build.sh" | tail -1)"
[ -x "$BIN/kubelet" ] || { log "cluster/build.sh printed no binary directory"; exit 1; }
echo "$BIN" >"$D/bin-dir"
log "binaries: $BIN ($((SECONDS - start)) s)"

# 2. The kubelet's containerd.
if [ "$NO_KUBELET" != 1 ]; then
  [ -S "$CRI_SOCK" ] || cri_started=true
  CRI_ENDPOINT="$(PROBELET_CRI_DIR="$CRI_DIR" bash "$ROOT/scripts/cri-up.sh" --name "$CRI_NAME" | tail -1)"
fi

# 3. Certificates and keys (once; kept across cluster:up runs until cluster:down).
P="$D/pki"
# cert NAME SUBJECT [subjectAltName]: a key and a certificate signed by our CA.
cert() {
  local name=$1 subj=$2 san=${3:-} ext="$P/$1.ext"
  openssl req -newkey rsa:2048 -nodes -keyout "$P/$name.key" -out "$P/$name.csr" -subj "$subj" 2>/dev/null
  printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=%s\n' \
    "$([ -n "$san" ] && echo serverAuth || echo clientAuth)" >"$ext"
  [ -n "$san" ] && echo "subjectAltName=$san" >>"$ext"
  openssl x509 -req -in "$P/$name.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial \
    -out "$P/$name.crt" -days 3650 -extfile "$ext" 2>/dev/null
  rm -f "$P/$name.csr" "$ext"
}
if [ ! -f "$P/.complete" ]; then
  log "generating certificates in $P"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$P/ca.key" -out "$P/ca.crt" -days 3650 \
    -subj "/CN=probelet-cluster-ca" 2>/dev/null
  openssl genrsa -out "$P/sa.key" 2048 2>/dev/null
  openssl rsa -in "$P/sa.key" -pubout -out "$P/sa.pub" 2>/dev/null
  cert apiserver "/CN=kube-apiserver" "IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
  cert admin "/O=system:masters/CN=probelet-admin"
  cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
  cert controller-manager "/CN=system:kube-controller-manager"
  cert scheduler "/CN=system:kube-scheduler"
  cert "node-$NODE_NAME" "/O=system:nodes/CN=system:node:$NODE_NAME"
  cert "node-$AGENT_NODE_NAME" "/O=system:nodes/CN=system:node:$AGENT_NODE_NAME"
  touch "$P/.complete"
fi
# The kubelet's serving certificate names the node's address, where the API server reaches it
# (kubectl logs, exec) and checks it against our CA (--kubelet-certificate-authority); made again
# when the address is not in it (a state dir from before, or a machine whose address changed).
NODE_IP="$(node_ip)"
[ -n "$NODE_IP" ] || log "no non-loopback IPv4 address: the kubelet serves on 127.0.0.1 only, so the API server cannot reach it (kubectl logs/exec fail); set PROBELET_CLUSTER_NODE_IP"
if [ ! -f "$P/kubelet-serving.crt" ] || { [ -n "$NODE_IP" ] && ! openssl x509 -in "$P/kubelet-serving.crt" -noout -ext subjectAltName 2>/dev/null | grep -qE "IP Address:${NODE_IP//./\\.}(,|$)"; }; then
  cert kubelet-serving "/CN=$NODE_NAME" "IP:127.0.0.1,DNS:localhost,DNS:$NODE_NAME${NODE_IP:+,IP:$NODE_IP}"
fi
# kubeconfig NAME USER_CERT: $D/NAME.kubeconfig for that client certificate.
kubeconfig() {
  cat >"$D/$1.kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: probelet
  cluster:
    certificate-authority: $P/ca.crt
    server: https://127.0.0.1:$API_PORT
users:
- name: $1
  user:
    client-certificate: $P/$2.crt
    client-key: $P/$2.key
contexts:
- name: probelet
  context: {cluster: probelet, user: $1}
current-context: probelet
YAML
}
kubeconfig admin admin
kubeconfig controller-manager controller-manager
kubeconfig scheduler scheduler
kubeconfig "$NODE_NAME" "node-$NODE_NAME"
kubeconfig "$AGENT_NODE_NAME" "node-$AGENT_NODE_NAME"

# 4. Processes. start NAME PORT... -- COMMAND...: unless ours runs, check its ports and start
# it detached (setsid: it outlives `npm run`), logging to $D/logs/NAME.log.
start_component() {
  local name=$1; shift
  local ports=()
  while [ "$1" != -- ]; do ports+=("$1"); shift; done; shift
  if pid="$(component_pid "$name")"; then log "$name already running (pid $pid)"; return; fi
  local p who
  for p in "${ports[@]}"; do
    if who="$(ss -ltnpH "sport = :$p" 2>/dev/null)" && [ -n "$who" ]; then
      log "port $p (for $name) is in use: $(echo "$who" | grep -o 'users:.*' | head -1). Stop that process, or set PROBELET_CLUSTER_*_PORT (cluster/lib.sh) to a free port"
      exit 1
    fi
  done
  setsid "$@" >"$D/logs/$name.log" 2>&1 </dev/null &
  local child=$! start
  # The child's identity from the fork on (component_pid): its start time, not its command line.
  start="$(proc_starttime "$child")" || { log "$name exited at once; the last lines of $D/logs/$name.log:"; tail -20 "$D/logs/$name.log" >&2; exit 1; }
  echo "$child $start" >"$D/run/$name.pid"
  started+=("$name")
}
# wait_for NAME SECONDS TEST...: until TEST succeeds; if NAME dies or time runs out, its log's tail.
wait_for() {
  local name=$1 secs=$2; shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    if ! component_pid "$name" >/dev/null; then
      log "$name exited; the last lines of $D/logs/$name.log:"; tail -20 "$D/logs/$name.log" >&2; exit 1
    fi
    if [ $SECONDS -ge $deadline ]; then
      log "$name not ready after $secs s; the last lines of $D/logs/$name.log:"; tail -20 "$D/logs/$name.log" >&2; exit 1
    fi
    sleep 0.5
  done
}
curl_api() { curl -sf --cacert "$P/ca.crt" --cert "$P/admin.crt" --key "$P/admin.key" "https://127.0.0.1:$API_PORT$1"; }
KUBECTL=("$BIN/kubectl" --kubeconfig "$D/admin.kubeconfig")

up_start=$SECONDS
start_component etcd "$ETCD_PORT" "$ETCD_PEER_PORT" -- "$BIN/etcd" --name probelet --data-dir "$D/etcd" \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "probelet=http://127.0.0.1:$ETCD_PEER_PORT" --listen-metrics-urls "" --log-level warn
wait_for etcd 30 curl -sf "http://127.0.0.1:$ETCD_PORT/health"

apiserver_args "$API_PORT" "$D/pki/apiserver-generated"
start_component kube-apiserver "$API_PORT" -- "$BIN/kube-apiserver" "${APISERVER_ARGS[@]}"
wait_for kube-apiserver 90 curl_api /readyz

start_component kube-controller-manager "$KCM_PORT" -- "$BIN/kube-controller-manager" \
  --bind-address 127.0.0.1 --secure-port "$KCM_PORT" --kubeconfig "$D/controller-manager.kubeconfig" \
  --authentication-kubeconfig "$D/controller-manager.kubeconfig" --authorization-kubeconfig "$D/controller-manager.kubeconfig" \
  --service-account-private-key-file "$P/sa.key" --root-ca-file "$P/ca.crt" --use-service-account-credentials \
  --leader-elect=false --cert-dir "$D/pki/kcm-generated" ${client_qps[@]+"${client_qps[@]}"}
start_component kube-scheduler "$SCHED_PORT" -- "$BIN/kube-scheduler" \
  --bind-address 127.0.0.1 --secure-port "$SCHED_PORT" --kubeconfig "$D/scheduler.kubeconfig" \
  --authentication-kubeconfig "$D/scheduler.kubeconfig" --authorization-kubeconfig "$D/scheduler.kubeconfig" \
  --leader-elect=false --cert-dir "$D/pki/scheduler-generated" ${client_qps[@]+"${client_qps[@]}"}

if [ "$NO_KUBELET" != 1 ]; then
# The kubelet's configuration for this machine kind (hybrid cgroup v1, no swap, shared host):
# each setting's reason is in docs/cluster.md.
cat >"$D/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $([ -n "$NODE_IP" ] && echo 0.0.0.0 || echo 127.0.0.1)
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
tlsCertFile: $P/kubelet-serving.crt
tlsPrivateKeyFile: $P/kubelet-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $P/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: $CRI_ENDPOINT
imageServiceEndpoint: $CRI_ENDPOINT
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
cgroupsPerQOS: true
cgroupRoot: $CGROUP_ROOT
enforceNodeAllocatable: []
podLogsDir: $D/pod-logs
volumePluginDir: $D/volume-plugins
resolvConf: ""
evictionHard: {memory.available: "1Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
localStorageCapacityIsolation: false
protectKernelDefaults: false
serializeImagePulls: false
maxPods: 250
YAML
# The cgroup root exists in every v1 hierarchy (cgroupsPerQOS wants it).
for h in /sys/fs/cgroup/*/; do
  case "$h" in */unified/) continue ;; esac
  mkdir -p "$h${CGROUP_ROOT#/}"
done
# The kubelet sets vm.overcommit_memory, vm.panic_on_oom, kernel.panic and kernel.panic_on_oops
# to its values at start (setupKernelTunables). On a shared machine it must not: it runs in a
# private mount namespace (mounts from the host still propagate in) where those four files
# are covered by files holding its values.
cat >"$D/kubelet-sysctls.sh" <<SH
set -e
for kv in vm/overcommit_memory=1 vm/panic_on_oom=0 kernel/panic=10 kernel/panic_on_oops=1; do
  f="$D/sysctl/\${kv%%=*}"; mkdir -p "\$(dirname "\$f")"; echo "\${kv#*=}" >"\$f"
  mount --bind "\$f" "/proc/sys/\${kv%%=*}"
done
exec "\$@"
SH
start_component kubelet "$KUBELET_PORT" "$KUBELET_HEALTHZ_PORT" -- unshare --mount --propagation slave \
  bash "$D/kubelet-sysctls.sh" "$BIN/kubelet" --config "$D/kubelet.yaml" --kubeconfig "$D/$NODE_NAME.kubeconfig" \
  --hostname-override "$NODE_NAME" ${NODE_IP:+--node-ip "$NODE_IP"} --root-dir "$D/kubelet" --v 2
node_ready() { [ "$("${KUBECTL[@]}" get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
wait_for kubelet 120 node_ready
fi
# Pods are created in namespace default by the oracle: its service account must exist first.
sa_ready() { "${KUBECTL[@]}" -n default get serviceaccount default; }
wait_for kube-controller-manager 60 sa_ready

[ "${#started[@]}" -gt 0 ] && log "started ${started[*]} in $((SECONDS - up_start)) s"
if [ "$NO_KUBELET" = 1 ]; then
  log "ready: control plane only (PROBELET_CLUSTER_NO_KUBELET=1) on https://127.0.0.1:$API_PORT, state dir $D, admin kubeconfig $D/admin.kubeconfig"
  exit 0
fi
cat >&2 <<EOF
cluster-up: ready: node $NODE_NAME ($("$BIN/kubelet" --version)) on https://127.0.0.1:$API_PORT
  state dir          $D
  binaries           $BIN
  admin kubeconfig   $D/admin.kubeconfig   (eval "\$(npm run -s cluster:env)")
  kubelet            config $D/kubelet.yaml, log $D/logs/kubelet.log, CRI $CRI_ENDPOINT
  logs               $D/logs/{etcd,kube-apiserver,kube-controller-manager,kube-scheduler,kubelet}.log
  $AGENT_NODE_NAME kubeconfig (a probelet node agent): $D/$AGENT_NODE_NAME.kubeconfig
EOF
