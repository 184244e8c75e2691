#!/bin/sh
# Cache size cap: above max_size the least recently referenced binaries
# go, but never one a retained segment (or the open one) references.  A
# program runs once and exits; while a segment that references it is
# kept, it stays; once retention deleted every such segment, it is evicted
# - and the binaries of live processes, referenced by every segment, stay.
. tests/lib.sh
need_events
cc -O0 -Wl,--build-id -DKONST=$$ -o "$T/pm-evict" tests/progs/capver.c || fail "build"
ID=$(readelf_buildid "$T/pm-evict")
build_prog spin
cp "$T/spin" "$T/pm-live"; "$T/pm-live" 20 & BG_PIDS=$!
LIVE=$(readelf_buildid "$T/pm-live")
sleep 0.3
start_daemon "[record]
drain_interval = 50ms
[segments]
keep_count = 2
[cache]
max_size = 1M"
S=$T/control.sock
ctl() { "$PERFMAPCTL" -s "$S" "$@"; }
entry() { echo "$T/state/debug/.build-id/$(echo "$1" | cut -c1-2)/$(echo "$1" | cut -c3-)/elf"; }

"$T/pm-evict" 0.3
for _ in $(seq 1 100); do [ -f "$(entry "$ID")" ] && break; sleep 0.2; done
[ -f "$(entry "$ID")" ] || fail "pm-evict was not captured"
ctl snapshot >/dev/null || fail "snapshot"	# seg 1 references pm-evict
sleep 1.2
[ -f "$(entry "$ID")" ] || fail "evicted while a retained segment references it"
ctl snapshot >/dev/null; sleep 1.2		# seg 2: pm-evict gone, seg 1 kept
[ -f "$(entry "$ID")" ] || fail "evicted while segment 1 is still kept"
ctl snapshot >/dev/null; sleep 1.2		# seg 3: retention deletes seg 1
# Eviction runs on the capture worker after a segment closes: under load it
# may take a while, so wait for it (closing segments now and then) up to 20 s.
for i in $(seq 1 40); do
	[ -f "$(entry "$ID")" ] || break
	[ $((i % 6)) -eq 0 ] && ctl snapshot >/dev/null
	sleep 0.5
done
[ -f "$(entry "$ID")" ] && fail "not evicted after every segment referencing it was deleted"
[ -f "$(entry "$LIVE")" ] || fail "a live process's binary was evicted"
grep -q 'cache: evicted' "$T/daemon.log" || fail "no eviction logged"
stop_daemon
echo "PASS: eviction spares referenced binaries, removes the rest"
