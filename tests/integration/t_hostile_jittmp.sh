#!/bin/sh
# Adversarial: the /tmp directories the daemon holds for JIT maps.  A JIT
# process's /tmp/perf-PID.map is read from the /tmp of its own mount
# namespace, which the daemon holds open (at most 64 distinct ones, 8 of
# them one user's).  Eight users, each with eight processes in user and
# mount namespaces of their own, each with a tmpfs on /tmp and a page of
# executable memory, take 64 /tmp directories (before: all of them).
# Root's JIT process in a container-like mount namespace of its own, its
# map in its own /tmp, must still have its map kept: users together hold
# at most 48 (daemon/capture/jit.c).  A ninth namespace of a user's has
# no map kept (none looked for in the daemon's /tmp, where the user can
# plant one); the user's process on the host (the daemon's /tmp) does.
. tests/lib.sh
. tests/hostile/lib.sh
hostile_start
[ "$(uname -m)" = x86_64 ] || skip "the JIT test program is x86-64 code"
as_user "$A" unshare -Urm true 2>/dev/null || skip "this user cannot unshare -Urm"
build_prog jit
build_prog jitidle
chmod 0755 "$T/jit" "$T/jitidle"
USERS="$A"
for u in b c d e f g h; do
	new_user U "$u"
	USERS="$USERS $U"
done

start_daemon "[record]
frequency = 99
drain_interval = 50ms"
start_pinger
# the daemon's held /tmp directories: O_PATH files whose link reads /tmp
held_tmps() {
	find "/proc/$DAEMON_PID/fd" -mindepth 1 -maxdepth 1 -lname /tmp 2>/dev/null | wc -l
}
t0=$(held_tmps)
# Each user's eight: a namespace each, a tmpfs on its /tmp, one idle JIT
# process in it (jitidle's child; its parent waits).  Started a few at a
# time: the daemon takes a new JIT process's root while its watch is queued
# (64 at most at once).
for u in $USERS; do
	h=$(user_home "$u")
	for i in 1 2 3 4 5 6 7 8; do
		as_user "$u" unshare -Urm sh -c "cd '$h' && mount -t tmpfs pm-jittmp /tmp &&
			exec ../jitidle 1 ready.$i" 2> "$T/idle.$u.$i.err" &
		BG_PIDS="${BG_PIDS:-} $!"
	done
	sleep 0.3
done
at_exit "for u in $USERS; do pkill -9 -u \$u jitidle 2>/dev/null; done"
for u in $USERS; do
	h=$T/home-$u
	for i in 1 2 3 4 5 6 7 8; do
		for _ in $(seq 1 100); do [ -e "$h/ready.$i" ] && break; sleep 0.1; done
		[ -e "$h/ready.$i" ] || fail "user $u's JIT process $i did not start: $(cat "$T/idle.$u.$i.err")"
	done
done
# the worker takes the /tmp directories: until their count stops growing
n=0
for _ in $(seq 1 30); do
	sleep 0.5
	m=$(held_tmps)
	[ "$m" = "$n" ] && [ "$m" -gt "$t0" ] && break
	n=$m
done
note "the daemon holds $n /tmp directories ($t0 before the users' 64 namespaces)"
[ "$n" -ge $((t0 + 40)) ] || fail "the daemon holds $n /tmp directories, $t0 before: the users' namespaces took too few to test anything"

# Root's JIT process in a mount namespace of its own, its /tmp its own.
( cd "$T" && exec unshare -m sh -c "mount -t tmpfs pm-jittmp-root /tmp && exec ./jit 0.5" ) &
RJ=$!
wait $RJ || fail "root's JIT process in its own mount namespace failed"
kept_map "$RJ" > /dev/null ||
	fail "root's JIT map of pid $RJ in its own /tmp was not kept beside eight users' 64 /tmp directories"

# A ninth namespace of the first user: its /tmp cannot be held (the user's
# eight are).  The user plants a map under the process's host pid in the
# daemon's own /tmp: not the process's (its /tmp is the namespace's), and
# not kept (before: the daemon fell back to its own /tmp, and kept the
# user's plant as the process's map).
# (its pid: the shell's, which execs jit; unshare may fork to map the ids)
h=$(user_home "$A")
as_user "$A" unshare -Urm sh -c "cd '$h' && mount -t tmpfs pm-jittmp /tmp && echo \$\$ > ninth.pid &&
	sleep 0.5 && exec ../jit 1.2" 2> "$T/ninth.err" &
NJ=$!
for _ in $(seq 1 30); do [ -s "$h/ninth.pid" ] && break; sleep 0.1; done
AJ=$(cat "$h/ninth.pid") || fail "the user's ninth JIT process did not start: $(cat "$T/ninth.err")"
as_user "$A" sh -c "printf '1000 10 pm_planted_fn\n' > /tmp/perf-$AJ.map" ||
	fail "the user cannot write /tmp/perf-$AJ.map"
at_exit "rm -f /tmp/perf-$AJ.map"
wait $NJ || fail "the user's ninth JIT process failed: $(cat "$T/ninth.err")"
sleep 1
for f in "$T/state/segments/"*.jit/perf-$AJ.map; do
	[ -f "$f" ] && grep -q pm_planted_fn "$f" &&
		fail "the user's map planted in the daemon's /tmp was kept as pid $AJ's ($f)"
done
# The same user's JIT process on the host: its /tmp is the daemon's own,
# which takes none of the user's eight; its map is kept.
as_user "$A" sh -c "cd '$h' && echo \$\$ > host.pid && exec ../jit 0.5" 2> "$T/host.err" ||
	fail "the user's JIT process on the host failed: $(cat "$T/host.err")"
HJ=$(cat "$h/host.pid")
at_exit "rm -f /tmp/perf-$HJ.map"
kept_map "$HJ" > /dev/null ||
	fail "the map of the user's JIT process $HJ on the host (the daemon's /tmp) was not kept"
hostile_judge
stop_daemon
echo "PASS: eight users' 64 JIT processes in namespaces of their own held $((n - t0)) /tmp directories; root's map in its own /tmp kept; a ninth namespace's plant in the daemon's /tmp not kept, the user's host process's map kept"
