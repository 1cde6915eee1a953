#!/usr/bin/env bash
# Builds the real Kubernetes components (and etcd) from the Go module proxy, pinned by
# cluster/kube/go.mod and cluster/etcd/go.mod. Binaries land in a cache keyed by the two
# go.sum files and this script, outside the clone, so a second cluster:up (or a CI run on
# the same machine) reuses them. Prints the directory holding the binaries on its last line.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
command -v go >/dev/null 2>&1 || { echo "cluster-build: Go is missing: install Go >= 1.25 (https://go.dev/doc/install) and put it on PATH" >&2; exit 1; }

kube_version="$(awk '/^require k8s.io\/kubernetes /{print $3}' "$root/cluster/kube/go.mod")"
key="$(cat "$root/cluster/kube/go.sum" "$root/cluster/etcd/go.sum" "$0" | sha256sum | cut -c1-16)"
cache="${PROBELET_CACHE:-$HOME/.cache/probelet}"
out="$cache/cluster-bin/$kube_version-$key"
components=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl)

if [ -x "$out/etcd" ] && [ -x "$out/kubelet" ] && [ -f "$out/.complete" ]; then
  echo "cluster-build: reusing $out (Kubernetes $kube_version)" >&2
  echo "$out"; exit 0
fi
mkdir -p "$out.tmp"
# As upstream's hack/lib/version.sh: without these a build reports v0.0.0-master, which changes
# the probes' User-Agent (kube-probe/1.35), nodeInfo.kubeletVersion and `kubectl version`.
minor="${kube_version#v1.}"; minor="${minor%%.*}"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done
export CGO_ENABLED=0 GOFLAGS=-mod=readonly
total_start=$SECONDS
for c in "${components[@]}"; do
  start=$SECONDS
  ( cd "$root/cluster/kube" && go build -trimpath -ldflags "$ldflags" -o "$out.tmp/$c" "k8s.io/kubernetes/cmd/$c" ) \
    || { echo "cluster-build: building $c failed (see above); a module the proxy refuses is named in Go's error" >&2; exit 1; }
  echo "cluster-build: built $c in $((SECONDS - start)) s" >&2
done
start=$SECONDS
( cd "$root/cluster/etcd" && go build -trimpath -ldflags "-s -w" -o "$out.tmp/etcd" go.etcd.io/etcd/server/v3 ) \
  || { echo "cluster-build: building etcd failed (see above)" >&2; exit 1; }
echo "cluster-build: built etcd in $((SECONDS - start)) s" >&2
touch "$out.tmp/.complete"
rm -rf "$out"; mv "$out.tmp" "$out"
echo "cluster-build: all built in $((SECONDS - total_start)) s into $out" >&2
echo "$out"
