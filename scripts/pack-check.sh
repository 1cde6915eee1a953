#!/usr/bin/env bash
# The package as a user gets it: packs probelet the way `npm publish` would (prepack builds
# dist/), installs the tarball into an empty directory, and runs it from there — the
# command (`npx probelet --version`, `npx probelet check` on a shipped example) and the
# library (`import('probelet')`). Catches a package without dist/, a file missing from
# "files", or a dependency that is only a devDependency. Leaves nothing behind.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d "${TMPDIR:-/tmp}/probelet-pack-check.XXXXXX")
trap 'rm -rf "$work"' EXIT

version=$(node -p "require('./package.json').version")
npm pack --silent --pack-destination "$work" >/dev/null
tarball="$work/probelet-$version.tgz"
contents=$(tar -tzf "$tarball")
echo "pack-check: packed $(basename "$tarball") ($(wc -l <<<"$contents") files)"
if ! grep -qx 'package/dist/cli/main.js' <<<"$contents"; then
  echo "pack-check: the tarball has no dist/cli/main.js" >&2
  exit 1
fi

mkdir "$work/app"
cd "$work/app"
echo '{ "name": "pack-check", "private": true, "type": "module" }' >package.json
npm install --no-audit --no-fund --loglevel=error "$tarball" >/dev/null

test "$(npx --no-install probelet --version)" = "$version"
npx --no-install probelet check node_modules/probelet/examples/demo/pod.yaml >/dev/null
node --input-type=module -e "
  const probelet = await import('probelet');
  for (const name of ['ProbeManager', 'Prober', 'ResultsManager', 'FakeClock', 'probeTcp']) {
    if (typeof probelet[name] !== 'function') throw new Error('probelet exports no ' + name);
  }
"
cd "$root"
echo "pack-check: installed from the tarball, probelet --version, check and the library import work"
