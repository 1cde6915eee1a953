#!/usr/bin/env bash
# Builds helm 3 (for `probelet check --helm` and its tests) from the Go module proxy, pinned by
# cluster/helm/go.mod, into a cache keyed by its go.sum and this script, outside the clone, as
# cluster/build.sh does for the Kubernetes components. Needs no cluster. Prints the directory
# holding the binary on its last line. `--print-dir` prints that directory when this script's
# build of it is complete (nothing otherwise) and builds nothing: cluster/env.sh's PATH.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
command -v go >/dev/null 2>&1 || { echo "build-helm: Go is missing: install Go >= 1.25 (https://go.dev/doc/install) and put it on PATH" >&2; exit 1; }
helm_version="$(awk '/^require helm.sh\/helm\/v3 /{print $3} /^\thelm.sh\/helm\/v3 /{print $2}' "$root/cluster/helm/go.mod" | head -1)"
[ -n "$helm_version" ] || { echo "build-helm: cluster/helm/go.mod requires no helm.sh/helm/v3" >&2; exit 1; }
key="$(cat "$root/cluster/helm/go.sum" "$0" | sha256sum | cut -c1-16)"
cache="${PROBELET_CACHE:-$HOME/.cache/probelet}"
out="$cache/helm-bin/$helm_version-$key"
if [ "${1:-}" = "--print-dir" ]; then
  if [ -x "$out/helm" ] && [ -f "$out/.complete" ]; then echo "$out"; fi
  exit 0
fi
if [ -x "$out/helm" ] && [ -f "$out/.complete" ]; then
  echo "build-helm: reusing $out (helm $helm_version)" >&2
  echo "$out"; exit 0
fi
mkdir -p "$out.tmp"
start=$SECONDS
# As helm's Makefile: without these `helm version` says v3.x-dev, and `helm template` renders
# for Kubernetes v1.20.0 (its built-in default), which charts with `kubeVersion: >=1.21.0-0`
# refuse; released helm renders for the minor of the client-go it is built with.
client_go="$(cd "$root/cluster/helm" && GOFLAGS=-mod=readonly go list -m -f '{{.Version}}' k8s.io/client-go)"
client_go_minor="$(echo "$client_go" | cut -d. -f2)"
[[ "$client_go" =~ ^v0\.[0-9]+\. ]] || { echo "build-helm: unexpected k8s.io/client-go version '$client_go'" >&2; exit 1; }
ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$helm_version -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for pkg in helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules; do
  ldflags="$ldflags -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$client_go_minor"
done
( cd "$root/cluster/helm" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -ldflags "$ldflags" -o "$out.tmp/helm" helm.sh/helm/v3/cmd/helm ) \
  || { echo "build-helm: building helm failed (see above)" >&2; exit 1; }
touch "$out.tmp/.complete"
rm -rf "$out"; mv "$out.tmp" "$out"
echo "build-helm: built helm $helm_version in $((SECONDS - start)) s into $out" >&2
echo "$out"
