#!/usr/bin/env bash
# Test registries for image pulls (`npm run registry:up`): Debian's docker-registry
# (distribution 2.8, installed with apt when missing) on 127.0.0.1 with TLS from a CA made here
# ($RW/ca.crt) — see registry-instance.sh for the two instances — and the test images pushed
# with skopeo from cri:up's containerd: 127.0.0.1:5000/probelet/busybox:test for anyone,
# 127.0.0.1:5001/private/busybox:test for user `probelet` with the password in $RW/password,
# also written as a kubernetes.io/dockerconfigjson Secret manifest ($RW/pull-secret.yaml, named
# `registry-pull`). containerd trusts the CA through $RW/certs.d/HOST:PORT/hosts.toml, the
# config_path every cri:up instance reads at each pull (the cluster's kubelet's included).
# Docker trusts 127.0.0.0/8 registries without verifying their certificate, so the private
# dockerd of docker:up pulls from them as it is. Idempotent. Prints registry:env's lines.
set -euo pipefail
# shellcheck source=registry-instance.sh
. "$(dirname "$0")/registry-instance.sh"
CRI_SOCK=/tmp/probelet-cri/containerd.sock
log() { echo "registry-up: $*" >&2; }

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
missing=()
for pkg in docker-registry apache2-utils skopeo openssl; do installed "$pkg" || missing+=("$pkg"); done
if [ "${#missing[@]}" -gt 0 ]; then
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Under systemd the package starts its own registry on :5000; the ones here replace it.
  if [ -d /run/systemd/system ]; then systemctl disable --now docker-registry.service >/dev/null 2>&1 || true; fi
fi
mkdir -p "$RW"/{data-public,data-private,certs}

# 1. A CA and the registries' certificate (for 127.0.0.1), once.
if [ ! -f "$RW/certs/server.crt" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=probelet test registry CA" \
    -keyout "$RW/ca.key" -out "$RW/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$RW/certs/server.key" -out "$RW/server.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1\n' >"$RW/san.ext"
  openssl x509 -req -in "$RW/server.csr" -CA "$RW/ca.crt" -CAkey "$RW/ca.key" -CAcreateserial -days 30 \
    -extfile "$RW/san.ext" -out "$RW/certs/server.crt" 2>/dev/null
  rm -f "$RW/server.csr" "$RW/san.ext"
  # skopeo's --dest-cert-dir reads CA certificates as *.crt of a directory.
  mkdir -p "$RW/trust" && cp "$RW/ca.crt" "$RW/trust/ca.crt"
fi
# containerd's trust (cri-up.sh's config_path): the CA for both registries, read at each pull.
# containerd 1.6 reads a hosts.toml only with a [host."…"] table (else it falls back to plain
# HTTP for a 127.0.0.1 registry), and tries `server` after those hosts: the CA goes on both,
# or a missing tag ends in the server's x509 error instead of the registry's "not found".
for addr in "$PUBLIC_ADDR" "$PRIVATE_ADDR"; do
  mkdir -p "$REGISTRY_HOSTS_DIR/$addr"
  cat >"$REGISTRY_HOSTS_DIR/$addr/hosts.toml" <<TOML
server = "https://$addr"
ca = "$RW/ca.crt"

[host."https://$addr"]
  capabilities = ["pull", "resolve"]
  ca = "$RW/ca.crt"
TOML
done
# 2. The private registry's user, once.
if [ ! -f "$RW/password" ]; then
  head -c 18 /dev/urandom | base64 | tr -d '/+=' >"$RW/password"
  htpasswd -Bbn "$REGISTRY_USER" "$(cat "$RW/password")" >"$RW/htpasswd"
fi
PASSWORD="$(cat "$RW/password")"

# config NAME ADDR [auth]
config() {
  cat >"$RW/$1.yml" <<YAML
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $RW/data-$1
  delete:
    enabled: true
http:
  addr: $2
  secret: probelet-test-$1
  tls:
    certificate: $RW/certs/server.crt
    key: $RW/certs/server.key
YAML
  if [ "${3:-}" = auth ]; then
    printf 'auth:\n  htpasswd:\n    realm: probelet-test\n    path: %s\n' "$RW/htpasswd" >>"$RW/$1.yml"
  fi
}
config public "$PUBLIC_ADDR"
config private "$PRIVATE_ADDR" auth

for name in public private; do
  if registry_running "$name"; then continue; fi
  setsid docker-registry serve "$RW/$name.yml" >"$RW/$name.log" 2>&1 </dev/null &
  echo $! >"$RW/$name.pid"
done
for addr in "$PUBLIC_ADDR" "$PRIVATE_ADDR"; do
  for _ in $(seq 1 100); do
    curl -s -o /dev/null --cacert "$RW/ca.crt" "https://$addr/v2/" && break
    sleep 0.1
  done
  curl -s -o /dev/null --cacert "$RW/ca.crt" "https://$addr/v2/" || { log "the registry at $addr did not start:"; tail -5 "$RW"/*.log >&2; exit 1; }
done

# 3. The test images, from cri:up's containerd (brought up when needed).
if [ ! -f "$RW/pushed" ]; then
  bash "$(dirname "$0")/cri-up.sh" >/dev/null
  ctr --address "$CRI_SOCK" -n k8s.io images export "$RW/busybox.tar" probelet.local/busybox:test
  skopeo copy -q --dest-cert-dir "$RW/trust" "docker-archive:$RW/busybox.tar:probelet.local/busybox:test" "docker://$PUBLIC_ADDR/probelet/busybox:test"
  skopeo copy -q --dest-cert-dir "$RW/trust" --dest-creds "$REGISTRY_USER:$PASSWORD" "docker-archive:$RW/busybox.tar:probelet.local/busybox:test" "docker://$PRIVATE_ADDR/private/busybox:test"
  rm -f "$RW/busybox.tar"
  touch "$RW/pushed"
  log "pushed $PUBLIC_ADDR/probelet/busybox:test and $PRIVATE_ADDR/private/busybox:test"
fi

# 4. The pull Secret for the private registry, as `kubectl create secret docker-registry` makes it.
AUTH="$(printf '%s:%s' "$REGISTRY_USER" "$PASSWORD" | base64 -w0)"
CONFIG="$(printf '{"auths":{"%s":{"username":"%s","password":"%s","auth":"%s"}}}' "$PRIVATE_ADDR" "$REGISTRY_USER" "$PASSWORD" "$AUTH" | base64 -w0)"
cat >"$RW/pull-secret.yaml" <<YAML
apiVersion: v1
kind: Secret
metadata:
  name: registry-pull
type: kubernetes.io/dockerconfigjson
data:
  .dockerconfigjson: $CONFIG
YAML
log "public $PUBLIC_ADDR, private $PRIVATE_ADDR (user $REGISTRY_USER, password in $RW/password), CA $RW/ca.crt"
echo "export PROBELET_REGISTRY=$PUBLIC_ADDR"
echo "export PROBELET_REGISTRY_PRIVATE=$PRIVATE_ADDR"
echo "export PROBELET_REGISTRY_SECRET=$RW/pull-secret.yaml"
