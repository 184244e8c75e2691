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
# [daemon] public_queries is taken too, the socket's mode with it: a user
# outside the control group (a real one, made for the test) can connect
# after a reload turns it on, and not after one turns it off.  Before, the
# socket kept its start mode.
# A key a reload cannot apply is named in the log and in the reply, and
# its running value stays: [daemon] control_group, the state directory's
# group as well.  Before, a reload naming another group gave that group
# the privileged commands through the socket, while the state directory
# and the socket stayed the old group's.
# [segments] keep_count lowered by a reload deletes at once; and the
# unit's reload (perfmapctl --pid $MAINPID) reaches a daemon whose file
# now names another socket.
# test-lane: beside (tests/run-tests.sh: light, judged in seconds)
. tests/lib.sh
need_events
build_prog spin "$(unique_buildid)"
test_group PMC pmc
test_group PMO pmo
test_user PMU pmu "$PMO"
pmo=$(getent group "$PMO" | cut -d: -f3)
chmod 755 "$T"

# conf DRAIN COMMIT CACHE_SIZE PUBLIC_QUERIES CONTROL_GROUP
conf() {
	printf '[daemon]\npublic_queries = %s\ncontrol_group = %s\n' "$4" "$5"
	printf '[record]\nfrequency = 99\nring_size = 8M\ndrain_interval = %s\n' "$1"
	printf '[index]\ncommit_interval = %s\ncache_size = %s\n' "$2" "$3"
}
# reload DRAIN ...: the file, then perfmapctl reload; its reply in $T/reload
reload() {
	conf "$@" > "$T/perfmapd.conf"
	ctl reload > "$T/reload" || fail "reload"
}
# perfmapctl CMD as PMU, in its group PMO only
asuser() { setpriv --reuid="$PMU" --regid="$pmo" --clear-groups "$PERFMAPCTL" -s "$T/control.sock" "$@"; }
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

start_daemon "$(conf 1h 1h 2M no "$PMC")"
sleep 1.5
read_some && fail "samples read with drain_interval 1h: the test's premise does not hold"
cp "$T/spin" "$T/fresh"
"$T/fresh" 0.1
sleep 1.5
direct "$T/fresh" && fail "the index committed news with commit_interval 1h: the test's premise does not hold"

reload 100ms 1h 2M no "$PMC"
within_3s read_some || fail "no sample read 3 s after a reload to drain_interval 100ms"
note "samples read at the look $LOOKS after the reload to drain_interval 100ms"

# The drain now ticks the index every 100 ms, at a 1h commit_interval: news
# stays pending.  Back to 1h for the drain; commit_interval 200ms: a timer
# of the index's own.
reload 1h 1h 2M no "$PMC"
sleep 0.5
direct "$T/fresh" && fail "the index committed news with commit_interval 1h after the reload"
reload 1h 200ms 2M no "$PMC"
within_3s direct "$T/fresh" ||
	fail "$T/fresh not in index.db 3 s after a reload to commit_interval 200ms"
note "in index.db at the look $LOOKS after the reload to commit_interval 200ms"

grep "take effect at restart" "$T/daemon.log" &&
	fail "a reload that changed only intervals named keys that wait for a restart"
grep -q "next start" "$T/reload" && { cat "$T/reload"; fail "the reply named keys that wait for a restart"; }

# public_queries, and the socket's mode with it
asuser status > /dev/null 2>&1 && fail "$PMU, not in $PMC, could connect without public_queries"
reload 1h 200ms 2M yes "$PMC"
asuser status > /dev/null || fail "$PMU was refused status after a reload turned public_queries on"
asuser snapshot 2> /dev/null && fail "$PMU, not in $PMC, could take a snapshot"

# control_group waits for a restart, and the reply says so
reload 1h 200ms 4M yes "$PMO"
grep -q "^at the next start.*\[daemon\] control_group" "$T/reload" &&
	grep -q "\[index\] cache_size" "$T/reload" ||
	{ cat "$T/reload"; fail "the reply did not name control_group and cache_size as waiting for a restart"; }
grep -q "reload: \[daemon\] control_group, \[index\] cache_size take effect at restart" \
	"$T/daemon.log" || fail "the log did not name the keys that wait for a restart"
asuser snapshot 2> /dev/null &&
	fail "$PMU could take a snapshot once a reload named its group: the state directory is still $PMC's"
[ "$(stat -c %G "$T/state")" = "$PMC" ] || fail "the state directory's group changed on a reload"

reload 1h 200ms 4M no "$PMO"
asuser status > /dev/null 2>&1 && fail "$PMU could still connect after a reload turned public_queries off"

# keep_count lowered by a reload (to free a disk): applied at once, not at
# the next rotation (an hour or more away, or never with rotate_age 0).
for _ in 1 2 3; do ctl snapshot > /dev/null || fail "snapshot"; done
[ "$(segments | wc -l)" -ge 3 ] || fail "three snapshots left $(segments | wc -l) segments"
{ conf 1h 200ms 4M no "$PMO"; printf '[segments]\nkeep_count = 1\n'; } > "$T/perfmapd.conf"
ctl reload > "$T/reload" || { cat "$T/reload"; fail "reload"; }
within_3s [ "$(segments | wc -l)" -le 1 ] ||
	fail "$(segments | wc -l) closed segments 3 s after a reload to keep_count 1"

# rotate_age lowered by a reload below the open segment's age: it ends
# now, not back at the new age (before: it ended 1 s after its start,
# holding 5 s of records past its end, and a segment of a start state
# alone followed at once for each second it had been open).
{ conf 1h 200ms 4M no "$PMO"; printf '[segments]\nrotate_age = 1h\n'; } > "$T/perfmapd.conf"
ctl reload > "$T/reload" || { cat "$T/reload"; fail "reload"; }
ctl snapshot > /dev/null || fail "snapshot"
n0=$(segments | wc -l)
sleep 6
{ conf 1h 200ms 4M no "$PMO"; printf '[segments]\nrotate_age = 1s\n'; } > "$T/perfmapd.conf"
ctl reload > "$T/reload" || { cat "$T/reload"; fail "reload"; }
sleep 0.5
n1=$(segments | wc -l)
note "a reload to rotate_age 1s on a segment open 6 s: $((n1 - n0)) segments closed in 0.5 s"
[ $((n1 - n0)) -le 2 ] ||
	fail "a reload to rotate_age 1s on a segment open 6 s closed $((n1 - n0)) segments at once"
{ conf 1h 200ms 4M no "$PMO"; printf '[segments]\nrotate_age = 1h\n'; } > "$T/perfmapd.conf"
ctl reload > "$T/reload" || { cat "$T/reload"; fail "reload"; }

# The unit's reload after an edit of [daemon] socket: the file names a
# socket the daemon does not listen on yet (it binds at its start).  The
# reload as the unit runs it (perfmapctl --pid $MAINPID) reaches the
# daemon (started here with --socket, which the file does not override);
# before, the unit's perfmapctl read the file, could not connect, and the
# edit's other keys were not applied either.
conf 1h 200ms 4M no "$PMO" | sed "s|^\[daemon\]\$|[daemon]\nsocket = $T/moved.sock|" > "$T/perfmapd.conf"
grep -q "^socket = $T/moved.sock" "$T/perfmapd.conf" || fail "the edit of the socket"
"$PERFMAPCTL" -c "$T/perfmapd.conf" ping > /dev/null 2>&1 &&
	fail "the edited file's socket is reachable: the test proves nothing"
PERFMAPD_SOCKET=/nonexistent "$PERFMAPCTL" --pid "$DAEMON_PID" reload > "$T/reload" 2>&1 ||
	{ cat "$T/reload"; fail "the unit's reload (perfmapctl --pid) did not reach the daemon"; }
grep -q "ExecReload=/usr/bin/perfmapctl --pid \$MAINPID reload" units/perfmapd.service ||
	fail "the unit's ExecReload is not perfmapctl --pid \$MAINPID"
sleep 30 & other=$!
"$PERFMAPCTL" --pid "$other" ping > "$T/other" 2>&1; rc=$?
kill "$other"
[ "$rc" = 3 ] || fail "perfmapctl --pid of another program exited $rc, not 3: $(cat "$T/other")"
# A user's program named perfmapd, serving a socket: neither --pid nor -s
# talks to it (before, root's perfmapctl sent it the call and took its
# reply: a profile's reply names a file that perfmapctl reads and removes).
mkdir "$T/u" && chown "$PMU" "$T/u" && chmod 0755 "$T" "$T/u" || fail "the user's directory"
ln -s /usr/bin/python3 "$T/u/perfmapd"
setpriv --reuid="$PMU" --regid="$pmo" --clear-groups -- "$T/u/perfmapd" -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(8); time.sleep(30)' "$T/u/fake.sock" & fake=$!
for _ in $(seq 1 50); do [ -S "$T/u/fake.sock" ] && break; sleep 0.1; done
[ -S "$T/u/fake.sock" ] || fail "the user's fake server did not come up"
"$PERFMAPCTL" -t 2 -s "$T/u/fake.sock" ping > "$T/fake" 2>&1; rc=$?
"$PERFMAPCTL" -t 2 --pid "$fake" ping > "$T/fakepid" 2>&1; rcp=$?
kill "$fake"
note "a user's server: $(cat "$T/fake"); by its pid: $(cat "$T/fakepid")"
grep -q "not root: not perfmapd" "$T/fake" && [ "$rc" = 3 ] ||
	fail "perfmapctl -s talked to a user's socket (exit $rc): $(cat "$T/fake")"
grep -q "not root: not perfmapd" "$T/fakepid" && [ "$rcp" = 3 ] ||
	fail "perfmapctl --pid talked to a user's process named perfmapd (exit $rcp): $(cat "$T/fakepid")"
stop_daemon
echo "PASS: a reload rearms the drain and commit timers, applies public_queries, names what waits for a restart, applies keep_count at once; the unit's reload finds the daemon by its pid"
