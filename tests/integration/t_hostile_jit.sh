#!/bin/sh
# Adversarial: a JIT map in a user's own namespace.  The daemon reads a
# JIT process's /tmp/perf-PID.map from that process's /tmp, which a user
# who owns the namespace can rearrange: here the name becomes a mount
# point (a FIFO bind-mounted on it, as a FUSE file system or a device
# could be), with a process of the user's waiting to open the FIFO for
# writing.  A daemon that crosses the mount opens the FIFO (the writer
# goes on; a FUSE server would hold the capture worker, a device would
# be opened by root).  The map must be left alone, the FIFO never opened,
# and a plain map of the user's next process still kept.
# Part 2: a user's JIT maps grown to many MiB (a sparse truncate costs the
# user nothing; each keep writes it whole) are copies of the user's files:
# they stop at the user's share ([cache] user_bytes), and every segment's
# maps count toward keep_size (before: no bound at all, and retention saw
# only the segments' own bytes, so the state directory filled).
# Part 3: a user's idle processes with a page of executable memory each
# take at most their share of the JIT watches; root's JIT map is kept.
. tests/lib.sh
. tests/hostile/lib.sh
hostile_start
[ "$(uname -m)" = x86_64 ] || skip "the JIT test program is x86-64 code"
build_prog jit
chmod 0755 "$T/jit"
as_user "$A" unshare -Urm true 2>/dev/null || skip "this user cannot unshare -Urm"

start_daemon "[record]
frequency = 499
drain_interval = 50ms"
start_pinger
# In the user's namespace, a /tmp of its own: jit writes its map, then
# the FIFO goes on top of it and the user's writer waits for a reader.
# ($T and $H are under the host's /tmp, hidden by the new one: the shell
# works from $H, the directory it started in.)
as_user "$A" unshare -Urm sh -c "
	cd '$H' || exit 1
	mount -t tmpfs pm-jit-tmp /tmp || exit 1
	../jit 1.5 & J=\$!
	sleep 0.5
	[ -s /tmp/perf-\$J.map ] || exit 1
	echo \$J > jit.pid
	mkfifo /tmp/fifo && mount --bind /tmp/fifo /tmp/perf-\$J.map || exit 1
	(exec 3> /tmp/perf-\$J.map; echo opened > opened) &
	wait \$J
	sleep 1.5
	kill \$! 2>/dev/null
	exit 0" || fail "the attack did not run"
J=$(cat "$H/jit.pid")
[ -e "$H/opened" ] && fail "the daemon opened the FIFO mounted on /tmp/perf-$J.map"
ls "$T/state/segments/"*.jit/perf-$J.map > /dev/null 2>&1 &&
	fail "a map that is a mount point was kept"
# The same user's next JIT process, a plain map in a /tmp of its own: kept,
# and as private as it was (umask 077: 0600, the control group does not
# read the copy; before, every copy was 0640).
as_user "$A" unshare -Urm sh -c "
	cd '$H' || exit 1
	mount -t tmpfs pm-jit-tmp /tmp || exit 1
	umask 077
	../jit 1.0 & echo \$! > jit2.pid
	wait" || fail "the plain JIT process did not run"
J2=$(cat "$H/jit2.pid")
km=$(kept_map "$J2") || fail "the plain map of pid $J2 in the user's own /tmp was not kept"
[ "$(stat -c %a "$km")" = 600 ] ||
	fail "a map only its user could read was kept mode $(stat -c %a "$km"): the control group reads it"
hostile_judge
stop_daemon

# --- 2. JIT maps grown to fill the disk --------------------------------------
start_daemon "[record]
frequency = 499
drain_interval = 50ms
[segments]
rotate_size = 8M
keep_size = 40M
[cache]
user_bytes = 20M"
S=$T/control.sock
# grow RUNAS N: N JIT processes of RUNAS ("" for root) at once, each map a
# 12 MiB sparse file when they exit (grown well before: a map written
# after its process exited is another's); their pids in $GP
grow() {
	${1:+as_user "$1"} sh -c "for i in \$(seq 1 $2); do '$T/jit' 1.0 & echo \$!; done > '$H/grow.pid'
		sleep 0.3; for p in \$(cat '$H/grow.pid'); do truncate -s 12M /tmp/perf-\$p.map; done
		wait"
	GP=$(tr '\n' ' ' < "$H/grow.pid")
	at_exit "for p in $GP; do rm -f /tmp/perf-\$p.map; done"
}
# a user's six: 72 MiB of copies asked for, 20 MiB of share
grow "$A" 6
apids=$GP
sleep 1
kept=0
for p in $apids; do
	for f in "$T/state/segments/"*.jit/perf-$p.map; do
		[ -f "$f" ] && kept=$((kept + $(stat -c %s "$f")))
	done
done
[ $kept -le $((20 * 1048576)) ] || fail "the user's JIT maps took $kept bytes, past its share of 20 MiB"
[ $kept -gt 0 ] || fail "none of the user's JIT maps was kept"
"$PERFMAPCTL" -s "$S" --json status | jq -e '.cache.refused_quota >= 1' > /dev/null ||
	fail "the maps beyond the share are not counted in refused_quota"
grep -q "uid $(id -u "$A") used its share" "$T/daemon.log" || fail "the refusal is not logged"
note "user: $kept bytes of JIT maps kept of 6 x 12 MiB asked for (share 20 MiB)"
# the same user's long-lived JIT process, its 6 MiB map unchanged across
# two closes: kept with both segments, the second a link to the first
# (charged once: the 8 MiB left of the share would not take two copies)
as_user "$A" sh -c "'$T/jit' 1.5 & echo \$! > '$H/long.pid'; sleep 0.3
	truncate -s 6M /tmp/perf-\$(cat '$H/long.pid').map; wait" &
LJ=$!
sleep 0.8
LP=$(cat "$H/long.pid")
at_exit "rm -f /tmp/perf-$LP.map"
s1=$("$PERFMAPCTL" -s "$S" snapshot) || fail "snapshot"
s2=$("$PERFMAPCTL" -s "$S" snapshot) || fail "snapshot"
wait $LJ
i1=$(stat -c %i "$s1.jit/perf-$LP.map" 2>/dev/null) || fail "the long-lived map was not kept with the first segment"
i2=$(stat -c %i "$s2.jit/perf-$LP.map" 2>/dev/null) ||
	fail "the long-lived map, unchanged, was not kept with the second segment (charged twice?)"
[ "$i1" = "$i2" ] || fail "the unchanged map was copied again, not linked"
# root's, which have no share: three segments of two 12 MiB maps each; keep_size
# (40 MiB) counts them, so the oldest go
first=""
for _ in 1 2 3; do
	grow "" 2
	for p in $GP; do kept_map "$p" > /dev/null || fail "root's map of pid $p was not kept"; done
	seg=$("$PERFMAPCTL" -s "$S" snapshot) || fail "snapshot"
	[ -n "$first" ] || first=$seg
done
[ -d "$first.jit" ] && fail "keep_size 40M: the first of three segments with 24 MiB of JIT maps each is still there (maps not counted)"
used=$("$PERFMAPCTL" -s "$S" --json status | jq .disk.segments_bytes)
[ "$used" -ge $((24 * 1048576)) ] || fail "status disk.segments_bytes $used does not count the last segment's JIT maps"
du=$(du -sb "$T/state/segments" | cut -f1)
[ "$du" -le $((48 * 1048576)) ] || fail "the segments directory holds $du bytes, past keep_size and one segment"
note "root: three segments of 24 MiB of JIT maps, keep_size 40 MiB: $du bytes on disk, status says $used"
stop_daemon

# A map unchanged across closes is one file, linked into each segment's
# .jit: counted once toward keep_size, not once per link (before: a 12 MiB
# map counted 12 MiB in every segment, and after four closes retention
# deleted history that took no room; a user's could do it at no cost).
rm -rf "$T/state/segments"
start_daemon "[record]
frequency = 499
drain_interval = 50ms
[segments]
rotate_size = 8M
keep_size = 40M"
"$T/jit" 6 & LJ=$!
sleep 0.3
truncate -s 12M "/tmp/perf-$LJ.map"
at_exit "rm -f /tmp/perf-$LJ.map"
sleep 0.5
segs=""
for _ in 1 2 3 4 5; do
	segs="$segs $("$PERFMAPCTL" -s "$S" snapshot)" || fail "snapshot"
	sleep 0.2
done
for seg in $segs; do
	[ -f "$seg" ] || fail "keep_size 40M: $(basename "$seg") deleted, with one 12 MiB map linked into five segments"
	[ -f "$seg.jit/perf-$LJ.map" ] || fail "the unchanged map is not kept with $(basename "$seg")"
done
[ "$(stat -c %h "$seg.jit/perf-$LJ.map")" -ge 5 ] || fail "the unchanged map was not linked"
used=$("$PERFMAPCTL" -s "$S" --json status | jq .disk.segments_bytes)
du=$(du -sb "$T/state/segments" | cut -f1)
[ "$used" -le $((du + 2 * 1048576)) ] ||
	fail "status disk.segments_bytes $used counts the linked map more than once ($du bytes on disk)"
note "one 12 MiB map linked into five segments: $du bytes on disk, status says $used"
kill "$LJ" 2>/dev/null; wait "$LJ" 2>/dev/null
stop_daemon

# --- 3. every JIT watch taken by a user's idle processes -----------------------
# A page of executable memory is all it takes to be watched as a JIT
# process; the daemon watches at most 4096.  The user's 4200 idle ones
# (forked, cheap) must leave root's JIT process watched and its map kept
# (before: the user's took every watch, and root's map was not kept).
build_prog jitidle
chmod 0755 "$T/jitidle"
start_daemon "[record]
frequency = 99
drain_interval = 50ms"
S=$T/control.sock
# (setpriv execs it: $! is jitidle itself, killed before the exit's wait)
setpriv --reuid="$A" --regid="$(id -g "$A")" --init-groups -- \
	"$T/jitidle" 4200 "$H/idle.ready" 2> "$T/jitidle.err" &
IDLE=$!
BG_PIDS="${BG_PIDS:-} $IDLE"
at_exit "pkill -9 -u '$A' jitidle 2>/dev/null"
for _ in $(seq 1 300); do
	[ -e "$H/idle.ready" ] && break
	kill -0 $IDLE 2>/dev/null ||
		skip "the user could not start 4200 processes: $(cat "$T/jitidle.err")"
	sleep 0.1
done
[ -e "$H/idle.ready" ] || fail "the user's 4200 idle JIT processes did not start in 30 s"
# the watches are taken on the worker: wait until the count stops growing
u=0
for _ in $(seq 1 60); do
	sleep 0.5
	n=$("$PERFMAPCTL" -s "$S" --json status | jq .cache.jit_unwatched)
	[ "$n" -gt 0 ] && [ "$n" = "$u" ] && break
	u=$n
done
"$T/jit" 0.3 & RJ=$!
wait $RJ || fail "root's JIT process failed"
at_exit "rm -f /tmp/perf-$RJ.map"
kept_map "$RJ" > /dev/null ||
	fail "root's JIT map of pid $RJ was not kept beside a user's 4200 idle JIT processes"
u=$("$PERFMAPCTL" -s "$S" --json status | jq .cache.jit_unwatched)
lost=$("$PERFMAPCTL" -s "$S" --json status | jq .counters.lost)
# 4200 - 512 of them beyond the user's share, less any whose records were lost
[ "$u" -ge $((4200 - 512 - lost)) ] ||
	fail "status cache.jit_unwatched is $u ($lost records lost): the user's processes beyond its share of 512 are not counted"
note "a user's 4200 idle JIT processes: $u not watched ($lost records lost), root's map kept"
kill -9 $IDLE 2>/dev/null; pkill -9 -u "$A" jitidle 2>/dev/null; wait $IDLE 2>/dev/null
stop_daemon
echo "PASS: a mount on a JIT map's name is not crossed; plain maps are kept; a user's maps stop at its share, and keep_size counts them; a user's JIT processes take at most their share of the watches"
