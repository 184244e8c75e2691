#!/bin/sh
# A full disk: the state directory on a small tmpfs under an exec storm.
# - squeezed by a filler file: the oldest segments are deleted to make room
#   (logged, counted in status) and recording goes on;
# - completely full: records are dropped and status says so, the daemon
#   keeps running and answering;
# - space returns: recording resumes, status clears;
# and in the end every segment on disk is one perf reads, the index passes
# SQLite's integrity check, and nothing is left half-written; a stop that
# cannot finish a segment exits 3, and a stop repairs what a rotation on a
# full disk could not finish; in flight mode, a snapshot that cannot be
# written keeps its window for the next, and one that cannot fit even with
# the older snapshots gone deletes none of them.
. tests/lib.sh
need_events
need_perf
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"
mkdir -p "$T/state" "$T/cache"
mount -t tmpfs -o size=20m,mode=0750 tmpfs "$T/state" 2>/dev/null || skip "cannot mount a tmpfs"
cleanup_mount() { umount -l "$T/state" 2>/dev/null; }
trap 'TEST_RC=$?; cleanup_mount; cleanup' EXIT
cc -O2 -o "$T/execstorm" tests/bench/execstorm.c || fail "cannot build execstorm"
# 15 of the 20 MiB taken: segments fill the rest within seconds (a state
# directory perfmapd used before: its segments/ there, or the filler
# would make it someone else's, refused)
mkdir -m 0750 "$T/state/segments"
dd if=/dev/zero of="$T/state/filler" bs=1M count=15 status=none

start_daemon "[record]
frequency = 999
drain_interval = 250ms
[segments]
rotate_age = 0
rotate_size = 0
keep_size = 0
keep_count = 0
keep_age = 0
[cache]
dir = $T/cache"
S=$T/control.sock
ctl() { "$PERFMAPCTL" -s "$S" "$@"; }
dropped() { ctl --json status | jq -r ".disk.$1"; }
"$T/execstorm" 60 2 /bin/true > /dev/null & BG_PIDS=$!
# closed segments to sacrifice; from now on only the open one grows
for i in 1 2 3 4; do sleep 0.5; ctl snapshot > /dev/null || fail "snapshot $i"; done

# 1. squeezed: the oldest segments make room
for _ in $(seq 1 150); do [ "$(dropped segments_deleted_for_space)" -gt 0 ] && break; sleep 0.2; done
n=$(dropped segments_deleted_for_space)
[ "$n" -gt 0 ] || { ctl status; df -h "$T/state"; fail "no segment was deleted to make room"; }
grep -q 'disk full: deleted perf-' "$T/daemon.log" || fail "deletions for space not logged"
note "squeezed: $n segments deleted to make room, $(ls "$T/state/segments" | wc -l) files left"

# 2. completely full: the open segment has taken all the room the closed
# ones gave; nothing left to delete, records dropped, still answering
for _ in $(seq 1 150); do [ "$(dropped error)" != null ] && break; sleep 0.2; done
[ "$(dropped error)" != null ] || { ctl status; fail "status does not report the full disk"; }
ctl status | grep -q '^DISK TROUBLE' || fail "status text does not show the trouble"
sleep 2
d1=$(dropped records_dropped)
[ "$d1" -gt 0 ] || fail "records dropped not counted"
ctl ping > /dev/null || fail "daemon does not answer while the disk is full"
grep -q 'cannot write' "$T/daemon.log" || fail "the full disk was not logged"
note "full: $(dropped error), $d1 records dropped so far"

# 3. space returns: recording resumes
rm -f "$T/state/filler" "$T/state/filler2"
for _ in $(seq 1 100); do [ "$(dropped error)" = null ] && break; sleep 0.2; done
[ "$(dropped error)" = null ] || { ctl status; fail "status still reports trouble after space returned"; }
grep -q 'writing again' "$T/daemon.log" || fail "recovery not logged"
before=$(ls "$T/state/segments" | grep -c '\.data$')
sleep 2
seg=$(ctl snapshot) || fail "snapshot after recovery"
after=$(ls "$T/state/segments" | grep -c '\.data$')
[ "$after" -gt "$before" ] || fail "no new segment after space returned ($before -> $after)"
d2=$(dropped records_dropped)
sleep 1
[ "$(dropped records_dropped)" = "$d2" ] || fail "records still dropped after space returned"
kill $BG_PIDS 2>/dev/null; wait $BG_PIDS 2>/dev/null; BG_PIDS=""
stop_daemon

# 4. nothing corrupt
ls "$T/state/segments" | grep -q '\.partial$' && fail "a .partial segment is left"
bad=0
for f in $(segments); do
	perf report -i "$f" --stdio > /dev/null 2>&1 || { bad=$((bad + 1)); note "perf cannot read $f"; }
done
[ "$bad" -eq 0 ] || fail "$bad segments perf cannot read"
[ "$(sqlite3 "$T/state/index.db" 'PRAGMA integrity_check')" = ok ] || fail "index.db is damaged"
perf report -i "$seg" --stdio --sort comm 2>/dev/null | grep -q 'true\|execstorm' ||
	fail "the segment taken after recovery has no samples of the storm"

# full_under_storm: no segment left to delete, a daemon recording a storm,
# and the disk filled until a write fails
full_under_storm() {
	rm -f "$T/state/segments/"perf-*.data
	start_daemon "[record]
frequency = 999
drain_interval = 100ms
[segments]
rotate_age = 0
rotate_size = 0
[cache]
dir = $T/cache"
	"$T/execstorm" 30 1 /bin/true > /dev/null & BG_PIDS=$!
	sleep 1
	dd if=/dev/zero of="$T/state/filler" bs=1M count=64 status=none 2>/dev/null
	for _ in $(seq 1 150); do [ "$(dropped error)" != null ] && break; sleep 0.2; done
	[ "$(dropped error)" != null ] || { ctl status; fail "the full disk is not reported"; }
}

# 5. a stop on a full disk, nothing left to delete: the last segment cannot
# be finished, and the exit status says so (3: the unit is failed, and not
# restarted onto the same disk); the next start repairs what was left
full_under_storm	# the close cannot fit in what is left
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID"; rc=$?; DAEMON_PID=""
kill $BG_PIDS 2>/dev/null; wait $BG_PIDS 2>/dev/null; BG_PIDS=""
[ "$rc" = 3 ] || { tail -5 "$T/daemon.log"; fail "a stop that could not finish the last segment exited $rc"; }
grep -q 'a segment could not be finished: exit status 3' "$T/daemon.log" ||
	{ tail -5 "$T/daemon.log"; fail "the unfinished segment at stop was not logged"; }
ls "$T/state/segments" | grep -q '\.partial$' || fail "no .partial segment left by the stop: nothing to repair"
rm -f "$T/state/filler"
start_daemon "[cache]
dir = $T/cache"
stop_daemon
grep -q 'repaired' "$T/daemon.log" || { cat "$T/daemon.log"; fail "the segment left partial at stop was not repaired"; }
ls "$T/state/segments" | grep -q '\.partial$' && fail "a .partial segment is left after the repair"
[ "$(segments | wc -l)" -ge 1 ] || fail "no segment after the repair"
for f in $(segments); do
	perf report -i "$f" --stdio > /dev/null 2>&1 || fail "perf cannot read $f after the repair"
done

# 6. a rotation on a full disk, nothing to delete: its close fails and
# leaves a .partial; space returns and recording goes on; the stop repairs
# what the rotation left (before: a clean exit with the .partial still
# there, unreadable until the next start)
full_under_storm
ctl snapshot > /dev/null 2>&1	# the rotation: its close cannot fit
[ "$(dropped segments_unfinished)" -ge 1 ] || { ctl --json status | jq .disk; fail "a close on the full disk did not fail"; }
ls "$T/state/segments" | grep -q '\.partial$' || fail "the failed close left no .partial"
ctl status | grep -q '^unfinished .*1 segments could not be closed' || { ctl status; fail "status text does not show the unfinished segment"; }
rm -f "$T/state/filler"
for _ in $(seq 1 100); do [ "$(dropped error)" = null ] && break; sleep 0.2; done
[ "$(dropped error)" = null ] || { ctl status; fail "still in trouble after space returned"; }
sleep 1
kill $BG_PIDS 2>/dev/null; wait $BG_PIDS 2>/dev/null; BG_PIDS=""
stop_daemon
ls "$T/state/segments" | grep '\.partial$' && fail "a clean stop left the failed rotation's .partial: unreadable until the next start"
grep -q 'stop: 1 segment left unfinished by a failed write repaired' "$T/daemon.log" ||
	{ tail -5 "$T/daemon.log"; fail "the repair at the stop was not logged"; }
[ "$(segments | wc -l)" -ge 2 ] || fail "not the repaired segment and the one after it"
for f in $(segments); do
	perf report -i "$f" --stdio > /dev/null 2>&1 || fail "perf cannot read $f after the stop's repair"
done

# 7. a start on a disk that filled up while the daemon was stopped (after a
# clean stop, the index's -wal and -shm are gone and must be made again):
# the oldest segments make room, and the daemon records (before: the
# index could not be opened, and the daemon did not start)
dd if=/dev/zero of="$T/state/filler" bs=1M count=64 status=none 2>/dev/null
start_daemon "[cache]
dir = $T/cache"
ctl ping > /dev/null || fail "the daemon started on a full disk does not answer"
stop_daemon
rm -f "$T/state/filler"
grep -q "the disk is full: the oldest segment deleted to make room" "$T/daemon.log" ||
	fail "no segment was deleted to make room at start"
# 8. flight mode, a full disk and nothing to delete: a snapshot whose
# window cannot be written whole fails, leaves no segment and keeps the
# window in memory; space returns, and the next snapshot writes that window
# with what came before the failure; status clears (before: the failed
# snapshot emptied the buffer, and status reported the disk error after
# snapshots succeeded again)
rm -f "$T/state/segments/"perf-*
build_prog spin
mv "$T/spin" "$T/pm-flbefore"
start_daemon "[record]
frequency = 999
drain_interval = 100ms
[segments]
mode = flight
flight_age = 5m
flight_size = 32M
[cache]
dir = $T/cache"
"$T/pm-flbefore" 2 > /dev/null
avail=$(df --output=avail -B1 "$T/state" | tail -1)
fill=$(( (avail - 65536) / 4096 * 4096 ))
[ "$fill" -le 0 ] || head -c "$fill" /dev/zero > "$T/state/filler" 2>/dev/null
ctl snapshot > "$T/flsnap" 2>&1 && { cat "$T/flsnap"; df -h "$T/state"; fail "a snapshot on a full disk succeeded"; }
grep -q 'the snapshot is given up\|cannot write' "$T/daemon.log" || { tail -5 "$T/daemon.log"; fail "the failed snapshot was not logged"; }
[ "$(dropped error)" != null ] || { ctl status; fail "status does not report the full disk in flight mode"; }
ls "$T/state/segments" | grep -q '^perf-' && { ls -l "$T/state/segments"; fail "the failed snapshot left a segment"; }
rm -f "$T/state/filler"
seg=$(ctl snapshot) || { tail -5 "$T/daemon.log"; fail "no snapshot once space returned"; }
perf report -i "$seg" --stdio --sort comm 2>/dev/null | grep -q 'pm-flbefore' ||
	fail "the window recorded before the failed snapshot is lost"
[ "$(dropped error)" = null ] || { ctl status; fail "status still reports the disk error after a snapshot succeeded"; }
# 9. flight mode, a snapshot that cannot fit even with every older one
# deleted: none is deleted (before: the older snapshots went one by one to
# make room, and the snapshot was given up all the same)
segsize=$(stat -c %s "$seg")
avail=$(df --output=avail -B1 "$T/state" | tail -1)
fill=$(( (avail - 65536) / 4096 * 4096 ))
[ "$fill" -le 0 ] || head -c "$fill" /dev/zero > "$T/state/filler" 2>/dev/null
for _ in $(seq 1 20); do
	"$T/pm-flbefore" 1 > /dev/null
	[ "$(ctl --json status | jq .flight.bytes)" -gt $((segsize * 2 + 262144)) ] && break
done
wb=$(ctl --json status | jq .flight.bytes)
[ "$wb" -gt $((segsize * 2 + 262144)) ] || fail "the window ($wb bytes) did not outgrow the older snapshot ($segsize)"
ctl snapshot > "$T/flsnap" 2>&1 && { cat "$T/flsnap"; fail "a snapshot bigger than the disk succeeded"; }
[ -f "$seg" ] || { grep 'disk full\|flight' "$T/daemon.log" | tail -5; fail "the older snapshot was deleted for a snapshot that could not fit anyway"; }
grep -q 'none is deleted for it' "$T/daemon.log" || fail "the refusal to delete is not logged"
note "a window of $wb bytes, $segsize in the older snapshot: kept"
rm -f "$T/state/filler"
stop_daemon

echo "PASS: $n segments deleted for space, $d1+ records dropped while full, resumed; a stop on a full disk exits 3, its segment repaired at the next start; a rotation's unfinished segment repaired at the stop"
