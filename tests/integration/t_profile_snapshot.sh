#!/bin/sh
# [segments] snapshot_pprof: each snapshot leaves SEGMENT.pb.gz beside the
# segment it closed, a pprof of the period since the previous snapshot, for
# shippers (perfmapd-snapshot.timer runs snapshot).  Period 1 runs one
# program, period 2 another: each file has its own period's functions only;
# a period of several segments (rotations by age between two snapshots)
# has every sample of them.
# Off by default, and taken on reload.
# test-lane: beside (tests/run-tests.sh: light, judged in seconds)
. tests/lib.sh
need_events
need_pprof

for v in 1 2; do
	cc -O0 -g -fno-omit-frame-pointer -DVERSION=$v -o "$T/pm-snap$v" tests/progs/capver.c ||
		fail "cannot build capver v$v"
done
start_daemon "[record]
frequency = 499
drain_interval = 50ms
[segments]
snapshot_pprof = yes"
ctl() { "$PERFMAPCTL" -s "$T/control.sock" "$@"; }
wait_file() {
	for _ in $(seq 1 100); do [ -s "$1" ] && return 0; sleep 0.1; done
	cat "$T/daemon.log"; fail "$1 was not written"
}

# (a cut is made a little in the past, RECORDER_MARGIN_NS: a program's
# last samples are older than it only some time after its exit)
"$T/pm-snap1" 1
sleep 0.2
s1=$(ctl snapshot) || fail "snapshot 1"
"$T/pm-snap2" 1
sleep 0.2
s2=$(ctl snapshot) || fail "snapshot 2"
wait_file "$s1.pb.gz"
wait_file "$s2.pb.gz"
"$PPROF" -symbolize=none -top -nodecount=500 "$s1.pb.gz" > "$T/top1" 2>&1 || fail "pprof $s1.pb.gz"
"$PPROF" -symbolize=none -top -nodecount=500 "$s2.pb.gz" > "$T/top2" 2>&1 || fail "pprof $s2.pb.gz"
grep -q pm_capv1_hot "$T/top1" || fail "period 1 lacks pm_capv1_hot"
grep -q pm_capv2_hot "$T/top1" && fail "period 1 has period 2's pm_capv2_hot"
grep -q pm_capv2_hot "$T/top2" || fail "period 2 lacks pm_capv2_hot"
grep -q pm_capv1_hot "$T/top2" && fail "period 2 has period 1's pm_capv1_hot"
# A period is its segment's time: every sample of the segment, none of
# another (before: a period ran from one snapshot's reply to the next, and
# the samples between a cut and its reply were in no period).
for s in "$s1" "$s2"; do
	ps=$(pprof_samples "$s.pb.gz")
	ss=$(seg_samples "$s")
	note "$(basename "$s"): $ss samples in the segment, $ps in its pprof"
	[ "$ps" = "$ss" ] || fail "$(basename "$s"): its pprof has $ps samples, the segment $ss"
done
stop_daemon

# Segments closed by age inside a period are the period's too: with a 1 s
# rotate_age, the period from one snapshot to the next is several
# segments, and its pprof holds every sample of them all (before: only
# the last one's, the one the snapshot closed).
start_daemon "[record]
frequency = 499
drain_interval = 50ms
[segments]
rotate_age = 1s
snapshot_pprof = yes"
s5=$(ctl snapshot) || fail "snapshot 5"
"$T/pm-snap1" 2.6
sleep 0.2
s6=$(ctl snapshot) || fail "snapshot 6"
wait_file "$s6.pb.gz"
seq5=$(basename "$s5" | cut -d- -f2) seq6=$(basename "$s6" | cut -d- -f2)
n=0 want=0
for seg in "$T"/state/segments/perf-*.data; do
	q=$(basename "$seg" | cut -d- -f2)
	[ "$q" -gt "$seq5" ] && [ "$q" -le "$seq6" ] || continue
	n=$((n + 1)) want=$((want + $(seg_samples "$seg")))
done
[ "$n" -ge 2 ] || fail "the period holds $n segments: the case is not tested"
got=$(pprof_samples "$s6.pb.gz")
note "a period of $n segments: $want samples in them, $got in its pprof"
[ "$got" = "$want" ] || fail "a period of $n segments: its pprof has $got samples, they $want"
stop_daemon

# off by default
start_daemon "[record]
drain_interval = 50ms"
for _ in $(seq 1 50); do ctl ping > /dev/null 2>&1 && break; sleep 0.1; done
s3=$(ctl snapshot) || fail "snapshot 3"
sleep 1
[ -e "$s3.pb.gz" ] && fail "a pprof was written without snapshot_pprof"
# taken on reload
printf '[record]\ndrain_interval = 50ms\n[segments]\nsnapshot_pprof = yes\n' > "$T/perfmapd.conf"
ctl reload > /dev/null || fail "reload"
s4=$(ctl snapshot) || fail "snapshot 4"
wait_file "$s4.pb.gz"
stop_daemon
echo "PASS: one pprof per snapshot period, beside its segment, also after a reload turns it on"
