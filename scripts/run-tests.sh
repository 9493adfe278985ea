#!/usr/bin/env bash
# Every test (make test), in three pytest processes at once. On this 2-core machine the suites wait
# on servers, browsers and deadlines much of the time, so running them side by side takes minutes
# off the suite:
#   - the browser tests (tests/web: they serve their own cluster and drive a headless Chromium);
#   - the suites that need no server (tests/engine, pure CPU; tests/client; tests/deploy);
#   - the rest, which share one test cluster (Ray, redis-server, the gateway in-process).
# (Run as 19 + 13 + 13 minutes of work before the last two sides took the few slow tests below.)
# Each side's output goes to var/test-<side>.log, shown at the end (in full when it failed). Extra
# arguments go to every pytest run. Exit status: non-zero if any failed.
set -u
cd "$(dirname "$0")/.."
mkdir -p var
# (each side also takes a few of the slowest tests that serve their own cluster, to even the sides out)
web=(tests/web tests/e2e/test_cli.py)
cpu=(tests/engine tests/client tests/deploy tests/e2e/test_eight_bots.py tests/e2e/test_admin.py)
echo "${web[*]} and ${cpu[*]} run beside the other tests (their output: var/test-web.log, var/test-cpu.log)"
.venv/bin/pytest -q -p no:cacheprovider "${web[@]}" "$@" >var/test-web.log 2>&1 &
web_pid=$!
.venv/bin/pytest -q -p no:cacheprovider "${cpu[@]}" "$@" >var/test-cpu.log 2>&1 &
cpu_pid=$!
trap 'kill "$web_pid" "$cpu_pid" 2>/dev/null' EXIT INT TERM
# (the chaos suites last: their own Ray nodes start best once the other sides' servers are up or done;
# the locust smoke stays here, away from the browsers)
.venv/bin/pytest -q -p no:cacheprovider "${web[@]/#/--ignore=}" "${cpu[@]/#/--ignore=}" \
  tests/gateway tests/services tests/fuzz tests/e2e tests/chaos "$@"
rest=$?
wait "$web_pid"
web_rc=$?
wait "$cpu_pid"
cpu_rc=$?
trap - EXIT INT TERM
for side in web cpu; do
  rc_var="${side}_rc"
  echo "--- var/test-$side.log ---"
  if [ "${!rc_var}" -eq 0 ]; then tail -n 3 "var/test-$side.log"; else cat "var/test-$side.log"; fi
done
[ "$rest" -eq 0 ] && [ "$web_rc" -eq 0 ] && [ "$cpu_rc" -eq 0 ]
