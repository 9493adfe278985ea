#!/usr/bin/env bash
# Every test (make test). The suites that need no shared test cluster — the pure engine suites
# (CPU only), the clients', the deployment's and the browser tests (they serve their own cluster) —
# run in a second pytest process beside the rest, which mostly waits on servers: on this 2-core
# machine that takes minutes off the suite. (A third process was tried: on 2 cores it made the whole
# run longer and starved the timing-bound tests.) The chaos suites run last on their side: their own
# Ray nodes start best once the servers of the first tests are up. Extra arguments go to both pytest
# runs. Exit status: non-zero if either failed.
set -u
cd "$(dirname "$0")/.."
mkdir -p var
log=var/test-beside.log
beside=(tests/engine tests/web tests/client tests/deploy tests/notify)
echo "${beside[*]} run beside the other tests (their output: $log, shown at the end)"
.venv/bin/pytest -q -p no:cacheprovider "${beside[@]}" "$@" >"$log" 2>&1 &
engine=$!
trap 'kill "$engine" 2>/dev/null' EXIT INT TERM
.venv/bin/pytest -q -p no:cacheprovider "${beside[@]/#/--ignore=}" tests/gateway tests/services tests/fuzz tests/e2e \
  tests/chaos "$@"
rest=$?
wait "$engine"
eng=$?
trap - EXIT INT TERM
echo "--- ${beside[*]} ---"
if [ "$eng" -eq 0 ]; then tail -n 3 "$log"; else cat "$log"; fi
[ "$rest" -eq 0 ] && [ "$eng" -eq 0 ]
