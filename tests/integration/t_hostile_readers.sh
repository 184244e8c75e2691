#!/bin/sh
# Adversarial: the build-id reader's threads (buildid_mode = userspace).  A
# user whose FUSE mounts root may read (allow_other, where fuse.conf lets
# users ask for it) runs a program from each of five, and the servers never
# answer the daemon's reads.  Each read is given up after its deadline and
# its device marked slow, but the thread in it stays in the server's hands:
# five connections held every reader thread the daemon may start (4), and
# from then on the build-id of any file no pin proves, root's too, was
# "unknown".  The daemon must keep reading root's files while the user's
# servers hold what they hold (daemon/record/resolver.c), and say why the
# user's mappings went unread.
. tests/lib.sh
. tests/hostile/lib.sh
hostile_start
need_perf
stallfs_setup
N=5
FSS=""
for i in $(seq 1 $N); do
	mkdir "$H/mnt$i" && chown "$A" "$H/mnt$i"
	setpriv --ruid="$A" -- "$T/stallfs" "$T/v1" "$H/mnt$i" "$T/target.pid" > "$T/fs$i.log" 2>&1 &
	FSS="$FSS $!"
done
fs_abort_all() {
	_i=0
	for _p in $FSS; do
		_i=$((_i + 1))
		fuse_abort "$H/mnt$_i" "$_p"
	done
}
trap 'TEST_RC=$?; fs_abort_all; hostile_cleanup' EXIT
for i in $(seq 1 $N); do
	for _ in $(seq 1 50); do [ -x "$H/mnt$i/prog" ] && break; sleep 0.1; done
	[ -x "$H/mnt$i/prog" ] || { cat "$T/fs$i.log"; fail "FUSE file system $i did not come up"; }
done
cc -O0 -g -Wl,--build-id -DVERSION=2 $(unique_buildid) -o "$T/rootprog" tests/progs/capver.c ||
	fail "cannot build capver"
RID=$(readelf_buildid "$T/rootprog")

start_daemon "[record]
buildid_mode = userspace
frequency = 499
drain_interval = 100ms"
echo "$DAEMON_PID" > "$T/target.pid"
S=$T/control.sock
start_pinger
# the user's programs, one from each mount, one after the other: each read
# held long enough for the daemon to start a spare thread for the next
# (or answered "user-fs": another thread holds the user's file systems)
held() {
	"$PERFMAPCTL" -s "$S" --json status > "$T/st1.json" || fail "status"
	jq -r '.buildid_reads.threads_stuck + (.counters.buildid_unknown["user-fs"] // 0)' "$T/st1.json"
}
h=0
for i in $(seq 1 $N); do
	as_user "$A" "$H/mnt$i/prog" 20 &
	BG_PIDS="${BG_PIDS:-} $!"
	for _ in $(seq 1 30); do
		sleep 0.1
		[ "$(held)" -gt "$h" ] && break
	done
	h=$(held)
	[ "$i" -lt $N ] && sleep 0.3	# passes: a spare thread started
done
note "with the user's programs running: $(jq -c '{threads: .buildid_reads.threads, stuck: .buildid_reads.threads_stuck}' "$T/st1.json")"
# root's new program, while the user's servers hold what they hold
"$T/rootprog" 0.5 || fail "root's program failed"
seg=$(timeout 10 "$PERFMAPCTL" -s "$S" snapshot) || fail "snapshot"
"$PERFMAPCTL" -s "$S" --json status > "$T/st2.json" || fail "status"
note "build-id reads: $(jq -c .buildid_reads "$T/st2.json"); unknown: $(jq -c .counters.buildid_unknown "$T/st2.json")"
stuck=$(jq -r .buildid_reads.threads_stuck "$T/st2.json")
[ "$stuck" -le 1 ] || fail "$stuck reader threads are in the user's file systems (one at most)"
[ "$(jq -r '.counters.buildid_unknown["user-fs"] // 0' "$T/st2.json")" -ge 1 ] ||
	fail "no mapping of the user's programs was answered \"user-fs\""
perf buildid-list -i "$seg" 2>/dev/null | grep -q "^$RID " ||
	fail "the build-id of root's program was not read while a user's $N FUSE servers held the reader: $(perf buildid-list -i "$seg" 2>/dev/null | grep -c .) build-ids in the segment"
hostile_judge
fs_abort_all
FSS=""
stop_daemon
echo "PASS: root's program's build-id read while a user's $N FUSE servers never answered the daemon"
