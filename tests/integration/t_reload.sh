#!/bin/sh
# A reload applies the intervals of the loop's timers (perfmapd.conf(5),
# DESCRIPTION): [record] drain_interval and [index] commit_interval taken
# from the new file rearm the drain timer and the index's commit timer.
# Before, both kept the period they had at start, and the reload said
# nothing.  Seen from outside:
#  - drain: with drain_interval 1h and rings far larger than what a quiet
#    host fills (8 MiB, woken at 2 MiB), no sample is read; after a reload
#    to 100ms they come within a second;
#  - commit: with both intervals 1h, a binary run for the first time is
#    news the index holds in memory (nothing ticks it); after a reload of
#    commit_interval to 200ms, a reader of index.db itself (perfmapctl
#    --state-dir) sees it within a second or two.
# A key a reload cannot apply is named in the log.
. tests/lib.sh
need_events
build_prog spin "$(unique_buildid)"

conf() {
	printf '[record]\nfrequency = 99\nring_size = 8M\ndrain_interval = %s\n[index]\ncommit_interval = %s\ncache_size = %s\n' \
		"$1" "$2" "$3"
}
ctl() { "$PERFMAPCTL" -s "$T/control.sock" "$@"; }
read_some() { [ "$(ctl --json status | jq .counters.samples)" -gt 0 ]; }
direct() { "$PERFMAPCTL" --state-dir "$T/state" lookup "$1" > /dev/null 2>&1; }
# Look up to 30 times, 0.1 s apart, until CMD... holds; LOOKS: how many it took.
within_3s() {
	for LOOKS in $(seq 1 30); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}
command -v jq >/dev/null 2>&1 || skip "jq is not installed"

start_daemon "$(conf 1h 1h 2M)"
sleep 1.5
read_some && fail "samples read with drain_interval 1h: the test's premise does not hold"
cp "$T/spin" "$T/fresh"
"$T/fresh" 0.1
sleep 1.5
direct "$T/fresh" && fail "the index committed news with commit_interval 1h: the test's premise does not hold"

conf 100ms 1h 2M > "$T/perfmapd.conf"
ctl reload > /dev/null || fail "reload"
within_3s read_some || fail "no sample read 3 s after a reload to drain_interval 100ms"
note "samples read at the look $LOOKS after the reload to drain_interval 100ms"

# The drain now ticks the index every 100 ms, at a 1h commit_interval: news
# stays pending.  Back to 1h for the drain; commit_interval 200ms: a timer
# of the index's own.
conf 1h 1h 2M > "$T/perfmapd.conf"
ctl reload > /dev/null || fail "reload"
sleep 0.5
direct "$T/fresh" && fail "the index committed news with commit_interval 1h after the reload"
conf 1h 200ms 2M > "$T/perfmapd.conf"
ctl reload > /dev/null || fail "reload"
within_3s direct "$T/fresh" ||
	fail "$T/fresh not in index.db 3 s after a reload to commit_interval 200ms"
note "in index.db at the look $LOOKS after the reload to commit_interval 200ms"

grep "take effect at restart" "$T/daemon.log" &&
	fail "a reload that changed only intervals named keys that wait for a restart"
conf 1h 200ms 4M > "$T/perfmapd.conf"
ctl reload > /dev/null || fail "reload"
grep -q "reload: \[index\] cache_size take effect at restart" "$T/daemon.log" ||
	fail "a reload changing [index] cache_size did not say it waits for a restart"
stop_daemon
echo "PASS: a reload rearms the drain and commit timers"
