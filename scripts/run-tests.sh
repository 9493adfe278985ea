#!/usr/bin/env bash
# Every test (make test). The pure engine suites (tests/engine: CPU only, no server) run in a second
# pytest process beside the rest, which mostly waits on servers: on this 2-core machine that takes
# minutes off the suite. Extra arguments go to both pytest runs. Exit status: non-zero if either failed.
set -u
cd "$(dirname "$0")/.."
mkdir -p var
log=var/test-engine.log
echo "tests/engine runs beside the other tests (its output: $log, shown at the end)"
.venv/bin/pytest -q -p no:cacheprovider tests/engine "$@" >"$log" 2>&1 &
engine=$!
trap 'kill "$engine" 2>/dev/null' EXIT INT TERM
.venv/bin/pytest -q -p no:cacheprovider --ignore=tests/engine "$@"
rest=$?
wait "$engine"
eng=$?
trap - EXIT INT TERM
echo "--- tests/engine ---"
if [ "$eng" -eq 0 ]; then tail -n 3 "$log"; else cat "$log"; fi
[ "$rest" -eq 0 ] && [ "$eng" -eq 0 ]
