#!/usr/bin/env bash
# `npm run -s registry:env`: where the test registries of `npm run registry:up` are, and the
# pull Secret manifest for the private one; fails when they are not running.
set -euo pipefail
# shellcheck source=registry-instance.sh
. "$(dirname "$0")/registry-instance.sh"
if ! registry_running public || ! registry_running private; then
  echo "registry-env: the test registries are not running (npm run registry:up)" >&2
  exit 1
fi
echo "export PROBELET_REGISTRY=$PUBLIC_ADDR"
echo "export PROBELET_REGISTRY_PRIVATE=$PRIVATE_ADDR"
echo "export PROBELET_REGISTRY_SECRET=$RW/pull-secret.yaml"
