#!/bin/sh
# The adversarial suite's figures (tests/integration/t_hostile_*.sh), for
# tests/bench/RESULTS.md: root's ping under each attack (p50, p99, max, over
# 100 ms, failed), the daemon's RSS and heap growth, the index's size; and,
# first, root's ping with no attack at all, on the same machine, as the
# baseline.  Each test also judges its own bounds (they fail make check).
#   BENCH_PING_SECONDS (20): the baseline's length
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
need_events
BUILD=${BUILD:-build}
build_prog pinger
start_daemon "[record]
frequency = 499
drain_interval = 50ms"
sleep 1
printf "baseline, no attack: "
"$T/pinger" "$T/control.sock" 20 "${BENCH_PING_SECONDS:-20}" "$DAEMON_PID"
stop_daemon
logs=$(mktemp -d /tmp/perfmapd-bench-hostile.XXXXXX)
TEST_LOGDIR=$logs TESTS="$(ls tests/integration/t_hostile_*.sh | xargs -n1 basename |
	sed 's/\.sh$//' | tr '\n' ' ')" tests/run-tests.sh | grep -E '^(PASS|FAIL|SKIP)'
grep -h '^FIGURE' "$logs"/*.log
rm -rf "$logs"
