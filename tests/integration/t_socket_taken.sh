#!/bin/sh
# A second daemon started with another state directory but the socket a
# running one listens on (perfmapd(8), FILES) refuses to start, before it
# opens anything (no segment in its state directory): exit 1, "another
# daemon listens on it" in its log, and the first daemon's socket stays
# its own and answers.  Before, the second removed the socket and
# bound its own: perfmapctl reached the second, and when the second
# stopped it deleted the path, so the first could no longer be reached
# at all.  A socket left by a daemon that is gone (nobody listens) is
# still taken over, as after a crash.
# test-lane: beside (tests/run-tests.sh: light, judged in seconds)
. tests/lib.sh
need_events
command -v jq >/dev/null 2>&1 || skip "jq is not installed"
ctl() { "$PERFMAPCTL" -s "$T/control.sock" "$@"; }
state_of() { ctl --json status | jq -r .state_dir; }

start_daemon "$(printf '[record]\nfrequency = 99\n')"
first=$(state_of)
[ -n "$first" ] && [ "$first" != null ] || fail "status has no state_dir"

"$PERFMAPD" -f -c "$T/perfmapd.conf" --state-dir "$T/state2" --socket "$T/control.sock" \
	> "$T/second.log" 2>&1 &
second=$!
# refused before its start: at once (a second or two under a sanitizer)
for _ in $(seq 1 300); do
	kill -0 $second 2>/dev/null || break
	sleep 0.1
done
if kill -0 $second 2>/dev/null; then
	now=$(state_of)
	kill -TERM $second; wait $second
	fail "a second daemon on the same socket runs (the socket now reaches $now, not $first)"
fi
wait $second; rc=$?
[ $rc -eq 1 ] || fail "the second daemon exited with $rc, not 1"
grep -q "another daemon listens on it" "$T/second.log" ||
	fail "the second daemon's log does not say why: $(tail -2 "$T/second.log")"
[ -e "$T/state2/segments" ] && fail "the refused daemon started: $T/state2/segments exists"
[ -S "$T/control.sock" ] || fail "the socket is gone after the second daemon exited"
[ "$(state_of)" = "$first" ] || fail "the socket does not reach the first daemon"
note "a second daemon on the socket refused (exit 1); the first still answers on it"

# A socket nobody listens on (the first daemon killed): taken, as after a crash.
kill -9 "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null
DAEMON_PID=""
[ -S "$T/control.sock" ] || fail "premise: the killed daemon's socket should be left behind"
rm -rf "$T/state"
start_daemon "$(printf '[record]\nfrequency = 99\n')"
[ "$(state_of)" = "$first" ] || fail "the restarted daemon does not answer on the stale socket"
stop_daemon
[ -e "$T/control.sock" ] && fail "the daemon's own socket was left at its stop"
note "a stale socket taken over; removed at the stop"
exit 0
