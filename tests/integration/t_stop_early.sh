#!/bin/sh
# A stop that comes while the daemon starts is a clean stop (perfmapd(8),
# SIGNALS): systemd stopping a start that takes long sends SIGTERM, a
# script that runs the daemon in the background and stops it sends SIGINT.
# The signal is sent the moment the daemon's log shows it is starting (the
# probe, its first line), while the start still has a /proc scan of a few
# hundred processes ahead of it; the daemon must then come to its loop,
# stop there, exit 0, and leave its segment closed.  Before, SIGTERM's
# default action killed the daemon mid-start (exit 143, the open segment
# left partial), and a SIGINT, which a shell's background job ignores until
# a handler is set, was lost: the daemon went on recording.
# test-lane: beside (tests/run-tests.sh: light, judged in seconds)
. tests/lib.sh
need_events

# The start's /proc scan: 400 more processes to look at.
BG_PIDS=""
for _ in $(seq 1 400); do
	sleep 300 &
	BG_PIDS="$BG_PIDS $!"
done
printf '[record]\nfrequency = 99\n' > "$T/perfmapd.conf"
# the rest of the start and the stop, in tenths of a second (sanitizers: slower)
WAIT=200
sanitized && WAIT=900

for sig in TERM INT; do
	rm -rf "$T/state" "$T/daemon.log"
	# as start_daemon does: a background job of this shell, whose SIGINT is ignored
	"$PERFMAPD" -f -d -c "$T/perfmapd.conf" --state-dir "$T/state" \
		--socket "$T/control.sock" > "$T/daemon.log" 2>&1 &
	DAEMON_PID=$!
	for _ in $(seq 1 2000); do		# 20 s at most
		grep -q "probe (" "$T/daemon.log" 2>/dev/null && break
		kill -0 "$DAEMON_PID" 2>/dev/null || fail "SIG$sig: the daemon died before its probe"
		sleep 0.01
	done
	grep -q "probe (" "$T/daemon.log" || fail "SIG$sig: no probe line in the log"
	kill -"$sig" "$DAEMON_PID"
	started=0
	grep -q "recording into" "$T/daemon.log" && started=1
	daemon_gone $WAIT ||
		fail "SIG$sig sent during the start: the daemon still runs $((WAIT / 10)) s later (the signal was lost)"
	[ "$started" = 0 ] || note "SIG$sig: the start was over before the signal (the test's premise is weak)"
	[ $DAEMON_RC -eq 0 ] ||
		fail "SIG$sig sent during the start: the daemon exited with $DAEMON_RC, not 0"
	grep -q "signal $( [ $sig = TERM ] && echo 15 || echo 2 ): stopping" "$T/daemon.log" ||
		fail "SIG$sig: the log does not say the signal stopped the daemon"
	grep -q "stopped: samples=" "$T/daemon.log" || fail "SIG$sig: no final statistics in the log"
	partial=$(ls "$T/state/segments/" 2>/dev/null | grep -c '\.partial$')
	[ "$partial" = 0 ] || fail "SIG$sig: a segment was left partial"
	[ -n "$(segments)" ] || fail "SIG$sig: no closed segment"
	perf report --header-only -i "$(segments | head -1)" > /dev/null 2>&1 ||
		fail "SIG$sig: perf cannot read the segment"
	note "SIG$sig during the start: a clean stop (exit 0, $(segments | wc -l) closed segment)"
done
exit 0
