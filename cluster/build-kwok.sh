#!/usr/bin/env bash
# Builds kwok (sigs.k8s.io/kwok, the baseline of `npm run bench -- --scenario fleet --vs kwok`)
# from the Go module proxy, pinned by cluster/kwok/go.mod, into a cache keyed by its go.sum and
# this script, outside the clone, as cluster/build-helm.sh does for helm. Needs no cluster.
# Beside the binary it writes kwok-stages.yaml: kwok's default stages (node-initialize,
# node-heartbeat-with-lease, pod-ready, pod-complete, pod-delete) taken from the same pinned
# module, because the kwok binary run outside a cluster simulates nothing without stages given by
# --config (kwokctl writes the same set into its kwok.yaml). Prints the directory on its last
# line. `--print-dir` prints that directory when this script's build of it is complete (nothing
# otherwise) and builds nothing: cluster/env.sh's PATH.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
command -v go >/dev/null 2>&1 || { echo "build-kwok: Go is missing: install Go >= 1.26 (https://go.dev/doc/install) and put it on PATH" >&2; exit 1; }
mod="$root/cluster/kwok"
kwok_version="$(awk '/^require sigs.k8s.io\/kwok /{print $3} /^\tsigs.k8s.io\/kwok /{print $2}' "$mod/go.mod" | head -1)"
[ -n "$kwok_version" ] || { echo "build-kwok: cluster/kwok/go.mod requires no sigs.k8s.io/kwok" >&2; exit 1; }
key="$(cat "$mod/go.sum" "$0" | sha256sum | cut -c1-16)"
cache="${PROBELET_CACHE:-$HOME/.cache/probelet}"
out="$cache/kwok-bin/$kwok_version-$key"
complete() { [ -x "$out/kwok" ] && [ -f "$out/kwok-stages.yaml" ] && [ -f "$out/.complete" ]; }
if [ "${1:-}" = "--print-dir" ]; then
  if complete; then echo "$out"; fi
  exit 0
fi
if complete; then
  echo "build-kwok: reusing $out (kwok $kwok_version)" >&2
  echo "$out"; exit 0
fi
rm -rf "$out.tmp"; mkdir -p "$out.tmp"
start=$SECONDS
export CGO_ENABLED=0 GOFLAGS=-mod=readonly
src="$(cd "$mod" && go mod download sigs.k8s.io/kwok && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)"
[ -d "$src" ] || { echo "build-kwok: the Go module proxy gave no sigs.k8s.io/kwok $kwok_version (see above)" >&2; exit 1; }
# As kwok's Makefile (hack/releases.sh): the version is the release tag, the default Kubernetes
# version the first line of the release's supported_releases.txt; without them `kwok --version`
# and the nodes' `kwok-<version>` nodeInfo say what the source defaults to.
kube_version="v$(head -1 "$src/supported_releases.txt")"
[[ "$kube_version" =~ ^v1\.[0-9]+\.[0-9]+$ ]] || { echo "build-kwok: unexpected supported_releases.txt in $src: '$kube_version'" >&2; exit 1; }
ldflags="-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$kwok_version -X sigs.k8s.io/kwok/pkg/consts.KubeVersion=$kube_version"
( cd "$mod" && go build -trimpath -ldflags "$ldflags" -o "$out.tmp/kwok" sigs.k8s.io/kwok/cmd/kwok ) \
  || { echo "build-kwok: building kwok failed (see above)" >&2; exit 1; }
for stage in node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
  [ -f "$src/kustomize/stage/$stage.yaml" ] || { echo "build-kwok: kwok $kwok_version has no stage $stage" >&2; exit 1; }
  printf -- '---\n'; cat "$src/kustomize/stage/$stage.yaml"
done >"$out.tmp/kwok-stages.yaml"
touch "$out.tmp/.complete"
rm -rf "$out"; mv "$out.tmp" "$out"
echo "build-kwok: built kwok $kwok_version in $((SECONDS - start)) s into $out" >&2
echo "$out"
