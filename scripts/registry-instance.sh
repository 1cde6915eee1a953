# Sourced by registry-up.sh, registry-env.sh and registry-down.sh: where the test registries
# live. Everything is under $RW (PROBELET_REGISTRY_DIR, default /tmp/probelet-registry).
# Two instances of Debian's docker-registry (distribution 2.8) with TLS from a CA made here:
# 127.0.0.1:5000 readable by anyone, 127.0.0.1:5001 behind htpasswd auth (distribution's
# htpasswd auth covers a whole registry: a public and a private repository need two).
RW="${PROBELET_REGISTRY_DIR:-/tmp/probelet-registry}"
PUBLIC_ADDR=127.0.0.1:5000
PRIVATE_ADDR=127.0.0.1:5001
REGISTRY_USER=probelet
# containerd's registry config_path (cri-up.sh points every instance at it): one
# HOST:PORT/hosts.toml per registry naming the CA, written by registry-up.sh.
REGISTRY_HOSTS_DIR="$RW/certs.d"

# registry_running NAME: our docker-registry (its command line names our config) answers.
registry_running() {
  local name=$1
  [ -f "$RW/$name.pid" ] || return 1
  local pid; pid="$(cat "$RW/$name.pid")"
  kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$RW/$name.yml"
}
