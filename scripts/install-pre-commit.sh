#!/usr/bin/env bash
# Installs pre-commit (PyPI, pinned) for test/check/pre-commit.test.ts into a venv in the cache,
# outside the clone, and prints the venv's bin directory on its last line. Reused when there.
# Debian's python3 has no venv module until python3-venv is installed (apt-get, as root in CI).
set -euo pipefail
version=4.7.0
cache="${PROBELET_CACHE:-$HOME/.cache/probelet}"
venv="$cache/pre-commit-$version"
if [ -x "$venv/bin/pre-commit" ] && [ -f "$venv/.complete" ]; then
  echo "install-pre-commit: reusing $venv" >&2
  echo "$venv/bin"; exit 0
fi
command -v python3 >/dev/null 2>&1 || { apt-get update >&2 && apt-get install -y --no-install-recommends python3 >&2; }
rm -rf "$venv"
if ! python3 -m venv "$venv" >&2; then
  rm -rf "$venv"
  apt-get update >&2 && apt-get install -y --no-install-recommends python3-venv >&2
  python3 -m venv "$venv" >&2
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check "pre-commit==$version" >&2
"$venv/bin/pre-commit" --version >&2
touch "$venv/.complete"
echo "$venv/bin"
