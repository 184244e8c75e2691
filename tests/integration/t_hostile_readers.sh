#!/bin/sh
# Adversarial: the build-id reader's threads (buildid_mode = userspace).  A
# user whose FUSE mounts root may read (allow_other, where fuse.conf lets
# users ask for it) runs a program from each of four, and the servers never
# answer the daemon.  Each read is given up after its deadline and its
# device marked slow, but the thread in it stays in the server's hands:
# four connections held every reader thread the daemon may start (4), and
# from then on the build-id of any file no pin proves, root's too, was
# "unknown".  The daemon must keep reading (and copying) root's files while
# the user's servers hold what they hold: one thread per device and three
# devices at most (daemon/record/resolver.c), the others answered
# "user-fs".  And a user's mount over a directory of theirs on the host's
# device, made after they opened a file there that they then map: the
# walk of the record's path held in the mount does not leave the host's
# device alone for everyone (it did, for 30 s).
# Two of the servers answer no request of the daemon's (stat, open, read);
# the other two answer all but the FLUSH of a close: the file read, its
# close never returned (before the close was made under the lane, the
# file was kept for the capture and closed later outside any lane: four
# reader threads, or the capture worker, held in close).
. tests/lib.sh
. tests/hostile/lib.sh
hostile_start
need_perf
stallfs_setup
FSS=""
fs_abort_all() {
	for _p in $FSS; do
		fuse_abort "${_p%%:*}" "${_p##*:}"
	done
	FSS=""
}
trap 'TEST_RC=$?; fs_abort_all; hostile_cleanup' EXIT
S=$T/control.sock

# held: reader threads held, and mappings answered "user-fs"
held() {
	"$PERFMAPCTL" -s "$S" --json status > "$T/st1.json" || fail "status"
	jq -r '.buildid_reads.threads_stuck + (.counters.buildid_unknown["user-fs"] // 0)' "$T/st1.json"
}

# part NAME MODE...: a mount of stallfs for each MODE ("-": the plain
# one), the user's programs on them, then root's new program: read and
# copied.
part() {
	name=$1
	shift
	N=$#
	i=0
	for mode in "$@"; do
		i=$((i + 1))
		[ "$mode" = - ] && mode=""
		m=$H/$name.$i
		mkdir "$m" && chown "$A" "$m"
		setpriv --ruid="$A" -- "$T/stallfs" "$T/v1" "$m" "$T/target.pid" $mode \
			> "$T/fs.$name.$i.log" 2>&1 &
		FSS="$FSS $m:$!"
	done
	set -- "$name"
	for i in $(seq 1 $N); do
		for _ in $(seq 1 50); do [ -x "$H/$1.$i/prog" ] && break; sleep 0.1; done
		[ -x "$H/$1.$i/prog" ] || { cat "$T/fs.$1.$i.log"; fail "$1: FUSE file system $i did not come up"; }
	done
	cc -O0 -g -Wl,--build-id -DVERSION=2 $(unique_buildid) -o "$T/root.$1" tests/progs/capver.c ||
		fail "cannot build capver"
	rid=$(readelf_buildid "$T/root.$1")

	start_daemon "[record]
buildid_mode = userspace
frequency = 499
drain_interval = 100ms"
	echo "$DAEMON_PID" > "$T/target.pid"
	start_pinger
	# the user's programs, one from each mount, one after the other: each
	# held long enough for the daemon to start a spare thread for the next
	h=0
	for i in $(seq 1 $N); do
		as_user "$A" "$H/$1.$i/prog" 20 &
		BG_PIDS="${BG_PIDS:-} $!"
		for _ in $(seq 1 30); do
			sleep 0.1
			[ "$(held)" -gt "$h" ] && break
		done
		h=$(held)
		[ "$i" -lt $N ] && sleep 0.3	# passes: a spare thread started
	done
	note "$1: with the user's programs running: $(jq -c '{threads: .buildid_reads.threads, stuck: .buildid_reads.threads_stuck}' "$T/st1.json")"
	# root's new program, while the user's servers hold what they hold
	"$T/root.$1" 0.5 || fail "root's program failed"
	seg=$(timeout 10 "$PERFMAPCTL" -s "$S" snapshot) || fail "$1: snapshot"
	"$PERFMAPCTL" -s "$S" --json status > "$T/st2.json" || fail "status"
	note "$1: build-id reads: $(jq -c .buildid_reads "$T/st2.json"); unknown: $(jq -c .counters.buildid_unknown "$T/st2.json")"
	stuck=$(jq -r .buildid_reads.threads_stuck "$T/st2.json")
	[ "$stuck" -le 3 ] || fail "$1: $stuck reader threads are in the user's file systems (three at most)"
	[ "$(jq -r '.counters.buildid_unknown["user-fs"] // 0' "$T/st2.json")" -ge 1 ] ||
		fail "$1: no mapping of the user's programs was answered \"user-fs\""
	perf buildid-list -i "$seg" 2>/dev/null | grep -q "^$rid " ||
		fail "$1: the build-id of root's program was not read while a user's $N FUSE servers held the reader: $(perf buildid-list -i "$seg" 2>/dev/null | grep -c .) build-ids in the segment"
	in_cache "$rid" || fail "$1: root's program was not copied while a user's $N FUSE servers held the reader"
	hostile_judge
	for p in $BG_PIDS; do kill -9 "$p" 2>/dev/null; done
	BG_PIDS=""
	fs_abort_all
	stop_daemon
}

part mix - - flush flush

# A server that answers, slowly (each request of the daemon's 2 ms late):
# the user's two programs on it, one file each, started together: both
# are read under the device's lane ("user-fs" or "timeout" for neither).
# (A reader starts with one thread, so here they are read one after the
# other; a second thread meeting the lane would park its request.)
m=$H/slow
mkdir "$m" && chown "$A" "$m"
setpriv --ruid="$A" -- "$T/stallfs" "$T/v1" "$m" "$T/target.pid" slow=2 > "$T/fs.slow.log" 2>&1 &
FSS="$FSS $m:$!"
for _ in $(seq 1 50); do [ -x "$m/prog2" ] && break; sleep 0.1; done
[ -x "$m/prog2" ] || { cat "$T/fs.slow.log"; fail "slow: the FUSE file system did not come up"; }
start_daemon "[record]
buildid_mode = userspace
frequency = 499
drain_interval = 100ms"
echo "$DAEMON_PID" > "$T/target.pid"
as_user "$A" "$m/prog" 1 & p1=$!
as_user "$A" "$m/prog2" 1 & p2=$!
wait $p1 $p2 || fail "slow: the user's programs failed"
seg=$(timeout 10 "$PERFMAPCTL" -s "$S" snapshot) || fail "slow: snapshot"
"$PERFMAPCTL" -s "$S" --json status > "$T/st3.json" || fail "status"
note "slow: unknown: $(jq -c .counters.buildid_unknown "$T/st3.json")"
fid=$(readelf_buildid "$T/v1")
for f in prog prog2; do
	perf buildid-list -i "$seg" 2>/dev/null | grep -q "^$fid $m/$f\$" ||
		fail "slow: the build-id of $m/$f was not read: $(perf buildid-list -i "$seg" 2>/dev/null | grep "$m")"
done
# (of the slow device's files only: root's own programs of the test, read
# on their lane while the one thread reads the slow files, may time out on
# a slow machine, ASan's daemon there included)
! grep "build-id of $m/.* unknown" "$T/daemon.log" ||
	fail "slow: a read of the user's device went unanswered"
fs_abort_all
stop_daemon
# A user's FUSE mount over a directory of theirs on the host's device,
# made after the user opened a file in it, which the user then maps: the
# record names the file by its path on the host's device, and the
# daemon's walk of that path goes into the mount, whose server never
# answers.  The walk is held there, under the mount's lane, and the host's
# device is not left alone for it (before: the deadline marked the
# record's device slow, and every new file of the host's, root's too, was
# "timeout" for 30 s).
build_hostile mapexec
d=$H/over
mkdir "$d" && cp "$T/v1" "$d/prog" && chown -R "$A" "$d" || fail "over: setup"	# the name the server has
cc -O0 -g -Wl,--build-id -DVERSION=2 $(unique_buildid) -o "$T/root.over" tests/progs/capver.c ||
	fail "cannot build capver"
rid=$(readelf_buildid "$T/root.over")
sleep 1		# the files older than their mappings by far
start_daemon "[record]
buildid_mode = userspace
frequency = 499
drain_interval = 100ms"
echo "$DAEMON_PID" > "$T/target.pid"
as_user "$A" "$T/mapexec" -d 1.5 20 "$d/prog" & BG_PIDS=$!
sleep 0.3	# opened
setpriv --ruid="$A" -- "$T/stallfs" "$T/v1" "$d" "$T/target.pid" > "$T/fs.over.log" 2>&1 &
FSS="$FSS $d:$!"
mounted() { awk -v m="$d" '$5 == m { f = 1 } END { exit !f }' /proc/self/mountinfo; }
for _ in $(seq 1 12); do mounted && break; sleep 0.1; done
mounted || { cat "$T/fs.over.log"; fail "over: the FUSE file system did not come up in time"; }
sleep 2.5	# mapped under the mount, and its read's deadline past
grep -q "build-id of $d/prog .*unknown" "$T/daemon.log" ||
	note "over: the user's mapping was not given up (yet): $(grep -c . "$T/daemon.log") log lines"
"$T/root.over" 0.5 || fail "over: root's program failed"
seg=$(timeout 10 "$PERFMAPCTL" -s "$S" snapshot) || fail "over: snapshot"
! grep "did not answer" "$T/daemon.log" ||
	fail "over: a device was left alone for a walk held in a user's mount"
perf buildid-list -i "$seg" 2>/dev/null | grep -q "^$rid " ||
	fail "over: root's program was not read while a user's mount held a walk of a path on its device: $(grep "root.over" "$T/daemon.log")"
kill -9 $BG_PIDS 2>/dev/null; BG_PIDS=""
fs_abort_all
stop_daemon

echo "PASS: root's program read and copied while a user's $N FUSE servers never answered the daemon (two: every request; two: a close's FLUSH); a slow server's two files read one after the other; a user's mount over a path on the host's device leaves the device alone"
