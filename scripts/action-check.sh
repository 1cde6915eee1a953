#!/usr/bin/env bash
# The GitHub Action's check step (action.yml): SARIF for code scanning, one workflow-command
# annotation per finding and input problem, and probelet's own exit status (1: a finding at
# fail-on, 2: an input problem). Inputs come as INPUT_* variables; PROBELET is the command.
set -uo pipefail
read -r -a paths <<< "${INPUT_PATHS:-.}"
read -r -a extra <<< "${INPUT_ARGS:-}"
if [ -n "${INPUT_HELM:-}" ]; then target=(--helm "$INPUT_HELM"); else target=("${paths[@]}"); fi
json="$(mktemp)"
trap 'rm -f "$json"' EXIT
node "$PROBELET" check "${target[@]}" "${extra[@]}" --fail-on never -o sarif > "${INPUT_SARIF:-probelet.sarif}"
node "$PROBELET" check "${target[@]}" "${extra[@]}" --fail-on never -o json > "$json"
node "$(dirname "$0")/action-annotate.mjs" "$json"
node "$PROBELET" check "${target[@]}" "${extra[@]}" --fail-on "${INPUT_FAIL_ON:-error}" > /dev/null 2>&1
status=$?
echo "probelet check: exit $status (SARIF in ${INPUT_SARIF:-probelet.sarif})"
exit "$status"
