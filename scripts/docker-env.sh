#!/usr/bin/env bash
# `npm run -s docker:env`: the line that points Docker clients (and probelet --runtime docker)
# at the private daemon of `npm run docker:up`; fails when it is not running.
set -euo pipefail
# -- --podman: the private Podman service instead (docker-podman.sh).
if [ "${1:-}" = --podman ]; then exec bash "$(dirname "$0")/docker-podman.sh" env; fi
if [ $# -gt 0 ]; then echo "docker-env: unknown argument $1 (only --podman)" >&2; exit 2; fi
# shellcheck source=docker-instance.sh
. "$(dirname "$0")/docker-instance.sh"
if ! dockerd_running; then
  echo "docker-env: the private Docker daemon is not running (npm run docker:up)" >&2
  exit 1
fi
echo "$DOCKER_HOST_LINE"
