#!/usr/bin/env bash
# cluster/lock.sh WHAT PID: takes the lock on the machine's cluster state dir for WHAT
# (cluster:up, oracle, bench) on behalf of process PID and holds it while PID lives. Prints
# "ok" once held; else prints who holds it and exits 75. The holder is this script, not PID:
# PID keeps no lock descriptor, so the daemons cluster:up starts never inherit the lock.
# Usage from bash: exec 8< <(bash cluster/lock.sh cluster:up $$); read -r answer <&8
set -uo pipefail
. "$(dirname "$0")/lib.sh"
what=$1 pid=$2
exec 9>>"$LOCK"
if ! flock -n 9; then
  echo "held by $(cat "$LOCK.owner" 2>/dev/null || echo 'an unknown process') (lock $LOCK)"
  exit 75
fi
echo "$what, pid $pid, $(id -un), since $(date -u +%FT%TZ), in $(readlink -f "/proc/$pid/cwd" 2>/dev/null || echo '?')" >"$LOCK.owner"
echo ok
# Held until PID ends (checked each second); the lock goes with this process.
while kill -0 "$pid" 2>/dev/null; do sleep 1; done
: >"$LOCK.owner"
