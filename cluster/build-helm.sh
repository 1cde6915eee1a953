#!/usr/bin/env bash
# Builds helm 3 (for `probelet check --helm` and its tests) from the Go module proxy, pinned by
# cluster/helm/go.mod, into a cache keyed by its go.sum and this script, outside the clone, as
# cluster/build.sh does for the Kubernetes components. Needs no cluster. Prints the directory
# holding the binary on its last line.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
command -v go >/dev/null 2>&1 || { echo "build-helm: Go is missing: install Go >= 1.25 (https://go.dev/doc/install) and put it on PATH" >&2; exit 1; }
helm_version="$(awk '/^require helm.sh\/helm\/v3 /{print $3} /^\thelm.sh\/helm\/v3 /{print $2}' "$root/cluster/helm/go.mod" | head -1)"
[ -n "$helm_version" ] || { echo "build-helm: cluster/helm/go.mod requires no helm.sh/helm/v3" >&2; exit 1; }
key="$(cat "$root/cluster/helm/go.sum" "$0" | sha256sum | cut -c1-16)"
cache="${PROBELET_CACHE:-$HOME/.cache/probelet}"
out="$cache/helm-bin/$helm_version-$key"
if [ -x "$out/helm" ] && [ -f "$out/.complete" ]; then
  echo "build-helm: reusing $out (helm $helm_version)" >&2
  echo "$out"; exit 0
fi
mkdir -p "$out.tmp"
start=$SECONDS
# As helm's Makefile: without these `helm version` says v3.x-dev.
ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$helm_version -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
( cd "$root/cluster/helm" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -ldflags "$ldflags" -o "$out.tmp/helm" helm.sh/helm/v3/cmd/helm ) \
  || { echo "build-helm: building helm failed (see above)" >&2; exit 1; }
touch "$out.tmp/.complete"
rm -rf "$out"; mv "$out.tmp" "$out"
echo "build-helm: built helm $helm_version in $((SECONDS - start)) s into $out" >&2
echo "$out"
