#!/bin/sh
# tests/run-tests.sh interrupted as a terminal's ^C does (SIGINT to its
# process group) while a unit test and then an integration test run: each
# is stopped, its daemon too, and the run ends 130.  Before, the runner
# died at once and its background jobs, which a non-interactive shell
# starts with SIGINT ignored, went on: the integration test started its
# next daemon, recording the host after make check was interrupted.
# test-lane: alone (tests/run-tests.sh: it looks for any test daemon left on the machine)
. tests/lib.sh
need_events
# interrupt_during TEST PATTERN: the run of TEST interrupted once a process
# matching PATTERN runs; nothing matching it is left 3 s later.
interrupt_during() {
	# a session of its own, SIGINT as a terminal leaves it (a background
	# job of this shell starts with it ignored)
	TEST_LOGDIR=$T/logs.$1 TESTS=$1 python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.setsid()
os.execvp(sys.argv[1], sys.argv[1:])' sh "$TOP/tests/run-tests.sh" > "$T/run.$1" 2>&1 &
	rp=$!
	for _ in $(seq 1 100); do pgrep -f "$2" > /dev/null && break; sleep 0.1; done
	pgrep -f "$2" > /dev/null || fail "$1 did not start: $(cat "$T/run.$1")"
	sleep 0.5
	kill -INT "-$rp"
	t0=$(date +%s)
	wait "$rp"
	rc=$?
	secs=$(( $(date +%s) - t0 ))
	for _ in $(seq 1 30); do pgrep -f "$2" > /dev/null || break; sleep 0.1; done
	left=$(pgrep -af "$2")
	note "$1 interrupted: run exit $rc after ${secs} s; left: ${left:-nothing}"
	if [ -n "$left" ]; then
		pkill -KILL -f "$2"
		sleep 0.5
		pkill -TERM -f "$PERFMAPD -f -d -c /tmp/perfmapd-t\\."	# what it started
		fail "$1 went on after the run was interrupted: $left"
	fi
	[ "$rc" = 130 ] || fail "the interrupted run of $1 exited $rc, not 130: $(tail -3 "$T/run.$1")"
}
mkdir -p "$T/logs.check_profile" "$T/logs.t_record"
interrupt_during check_profile "^$BUILD/tests/check_profile"
interrupt_during t_record "^sh tests/integration/t_record.sh"
pgrep -af "$PERFMAPD -f -d -c /tmp/perfmapd-t\." && fail "a test's daemon went on"
echo "PASS: an interrupted run stopped its unit test, its integration test and the test's daemon"
