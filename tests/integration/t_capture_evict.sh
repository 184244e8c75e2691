#!/bin/sh
# Cache size cap, honoured before each copy: the cache never holds more
# than max_size.  A copy that needs room evicts the least recently
# referenced binaries first - never one a retained segment (or the open
# one) references - and a copy there is no room for is refused and
# counted (refused_full).  A program runs once and exits; while a segment
# that references it is kept, it stays; once retention deleted every such
# segment, a new binary that needs its room evicts it - and the binaries
# of live processes, referenced by every segment, stay; and an evicted
# binary that runs again is copied again.
# The daemon records the whole host: a binary some other job starts while
# the second daemon runs is copied too and takes room the test counted on
# (a compiler's 100 MB library did, once).  Such an attempt is told by the
# cache's entries (one the test did not make, or one gone that it did not
# send away) when a check fails, noted, and made again on a fresh state
# directory, up to three times; a check that holds whatever else was
# copied holds.
# test-lane: alone (tests/run-tests.sh: it judges the cache's room, which the binaries of a test beside it take: its daemon copies every binary the host runs)
. tests/lib.sh
need_events
command -v jq >/dev/null 2>&1 || skip "jq is not installed"
# The sizes are the files' (apparent) sizes: a hole at the end makes a
# binary large without costing the disk (the cache copies it sparse).
cc -O0 -Wl,--build-id -DKONST=$$ -o "$T/pm-evict" tests/progs/capver.c || fail "build"
cc -O0 -Wl,--build-id -DKONST=$$1 -o "$T/pm-big" tests/progs/capver.c || fail "build"
cc -O0 -Wl,--build-id -DKONST=$$2 -o "$T/pm-huge" tests/progs/capver.c || fail "build"
truncate -s 48M "$T/pm-evict"
truncate -s 24M "$T/pm-big"
ID=$(readelf_buildid "$T/pm-evict")
BIG=$(readelf_buildid "$T/pm-big")
HUGE=$(readelf_buildid "$T/pm-huge")
build_prog spin
cp "$T/spin" "$T/pm-live"; "$T/pm-live" 120 & BG_PIDS=$!
LIVE=$(readelf_buildid "$T/pm-live")
sleep 0.3
CONF="[record]
drain_interval = 50ms
[segments]
keep_count = 2"
S=$T/control.sock
C=$T/state/debug
ctl() { "$PERFMAPCTL" -s "$S" "$@"; }
link() { echo "$C/.build-id/$(echo "$1" | cut -c1-2)/$(echo "$1" | cut -c3-)"; }
entry() { echo "$(link "$1")/elf"; }
# What the daemon counts: the sizes of the entries' files.
cache_bytes() { find "$C" -type f ! -name '.tmp.*' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }'; }

# The build-ids the cache holds, one a line, sorted.
entries() { find "$C/.build-id" -mindepth 2 -maxdepth 2 -printf '%P\n' 2>/dev/null | tr -d / | sort; }
# Did the cache change otherwise than the test made it since $T/before?
others() {
	entries > "$T/after"
	comm -13 "$T/before" "$T/after" | grep -vx -e "$BIG" -e "$HUGE" | sed 's/^/copied /'
	comm -23 "$T/before" "$T/after" | grep -vx -e "$ID" | sed 's/^/evicted /'
}
# interfered WHEN: true (and noted) if another job's binary changed the cache
interfered() {
	others > "$T/others"
	[ -s "$T/others" ] || return 1
	note "attempt $attempt, $1: other binaries changed the cache: $(tr '\n' ' ' < "$T/others")"
	stop_daemon
	return 0
}

# One attempt: 0 when every check held (a failed check ends the test), 1
# when another job's binary changed the cache.
attempt() {
	rm -rf "$T/state"
	start_daemon "$CONF
[cache]
max_size = 1G"
	# Every tool run while the second daemon runs is copied now, by this one.
	for tool in jq find awk comm grep sed tr truncate cut sort seq sleep stat touch; do
		"$tool" --version > /dev/null 2>&1
	done
	"$T/pm-evict" 0.3
	for _ in $(seq 1 100); do [ -f "$(entry "$ID")" ] && break; sleep 0.2; done
	[ -f "$(entry "$ID")" ] || fail "pm-evict was not captured"
	# A cut is made a little in the past (RECORDER_MARGIN_NS, 20 ms): the exit
	# of pm-evict must be older than that, or it lands in a later segment,
	# which then rightly references it (captured at first sight, the copy is
	# often there before the process ends).
	sleep 0.3
	ctl snapshot >/dev/null || fail "snapshot"	# seg 1 references pm-evict
	ctl snapshot >/dev/null; sleep 0.5		# seg 2: pm-evict gone, seg 1 kept
	ctl snapshot >/dev/null; sleep 0.5		# seg 3: retention deletes seg 1
	ctl snapshot >/dev/null; sleep 0.5		# seg 4: and seg 2
	stop_daemon
	[ -f "$(entry "$ID")" ] || fail "pm-evict evicted with room to spare"
	# pm-evict is the least recently referenced binary from now on.
	touch -h -d @1000000000 "$(link "$ID")"

	# Room for 16M more: pm-big (24M) must make room, and pm-evict (48M,
	# referenced by no retained segment) is what goes first.
	entries > "$T/before"
	max=$(( $(cache_bytes) + 16777216 ))
	start_daemon "$CONF
[cache]
max_size = $max"
	note "max_size $max"
	sleep 1
	# pm-evict runs in this daemon too (its entry touched: present), and is
	# made the least recently referenced again
	"$T/pm-evict" 0.3
	for _ in $(seq 1 50); do
		[ "$(stat -c %Y "$(link "$ID")")" -gt 1000000000 ] && break
		sleep 0.1
	done
	[ "$(stat -c %Y "$(link "$ID")")" -gt 1000000000 ] || fail "pm-evict's entry was not touched when it ran"
	# (the daemon's last look at it done: a later touch, its capture job's
	# behind a loaded host's other copies, would make it referenced now)
	sleep 1
	touch -h -d @1000000000 "$(link "$ID")"
	"$T/pm-big" 0.3
	for _ in $(seq 1 100); do [ -f "$(entry "$BIG")" ] && break; sleep 0.2; done
	# Another job's binaries (a loaded CI's compilers) matter only where
	# they break a check: then the attempt is made again.
	[ -f "$(entry "$BIG")" ] || { interfered "pm-big" && return 1; ctl status; fail "pm-big was not captured"; }
	[ -f "$(entry "$ID")" ] && { interfered "pm-big" && return 1; fail "pm-evict was not evicted to make room for pm-big"; }
	[ -f "$(entry "$LIVE")" ] || fail "a live process's binary was evicted"
	grep -q 'cache: evicted' "$T/daemon.log" || fail "no eviction logged"
	# Evicted, and run again (smaller now: room for it): copied again
	# (before: the daemon had queued its build-id once, and never again)
	truncate -s 1M "$T/pm-evict"
	"$T/pm-evict" 0.3
	for _ in $(seq 1 50); do [ -f "$(entry "$ID")" ] && break; sleep 0.2; done
	[ -f "$(entry "$ID")" ] || { interfered "pm-evict again" && return 1; ctl --json status | jq -c .cache; fail "pm-evict, evicted, was not copied again when it ran again"; }
	# A binary larger than max_size is never copied, and counted.
	truncate -s $((max + 1)) "$T/pm-huge"
	"$T/pm-huge" 0.3
	sleep 1.5
	[ -f "$(entry "$HUGE")" ] && fail "a binary larger than max_size was copied"
	ctl --json status > "$T/st.json"
	jq -e '.cache.refused_full >= 1' "$T/st.json" >/dev/null ||
		{ interfered "pm-huge" && return 1; fail "refused copy not counted"; }
	bytes=$(jq .cache.bytes "$T/st.json")
	[ "$bytes" -le "$max" ] || fail "cache $bytes bytes, above max_size $max"
	[ "$(cache_bytes)" -le "$max" ] || fail "cache files $(cache_bytes) bytes, above max_size $max"
	note "cache $bytes of $max bytes, $(jq .cache.refused_full "$T/st.json") copies refused"
	stop_daemon
	return 0
}

for attempt in 1 2 3; do
	attempt && break
	[ "$attempt" -lt 3 ] || fail "other jobs' binaries changed the cache in each of 3 attempts: cannot check"
done
echo "PASS: room made before each copy; referenced binaries spared; no copy beyond max_size"
