#!/bin/sh
# Recording end to end, with the real perf as the judge:
# - a program that was running before each segment began is attributed
#   with its command and symbols in the first, a middle and the last segment
#   (perf report, perf script);
# - perf buildid-list lists build-ids identical to readelf -n;
# - per-segment sample counts add up to the daemon's total, each segment
#   begins where the previous one was cut and holds only samples of its cut
#   (perf script's ns time stamps), its SAMPLE_TIME is its first and last
#   sample's time, and across each cut the samples leave no gap the
#   sampling rate does not explain; under an exec storm, across rotations
#   by age and by SIGUSR2;
# - no record lost.
. tests/lib.sh
need_events
need_perf

build_prog spin
cp "$T/spin" "$T/pm-spin"
touch "$T/started"
"$T/pm-spin" 14 & BG_PIDS="$!"
# An exec storm: MMAP2/COMM/FORK/EXIT records flow while we rotate.
( end=$(( $(date +%s) + 11 )); while [ "$(date +%s)" -lt "$end" ]; do /bin/true; done ) &
BG_PIDS="$BG_PIDS $!"
sleep 0.5

FREQ=199
start_daemon "[record]
frequency = $FREQ
[segments]
rotate_age = 2s"
sleep 3
kill -USR2 "$DAEMON_PID"; sleep 1
kill -USR2 "$DAEMON_PID"; sleep 4
stop_daemon
grep -q 'build-id mode' "$T/daemon.log" || fail "no mode line in the log"

set -- $(segments)
n=$#
note "$n segments"
[ "$n" -ge 4 ] || { cat "$T/daemon.log"; fail "expected at least 4 segments, got $n"; }
ls "$T/state/segments/" | grep -q partial && fail "a .partial segment was left behind"
# Cuts are exact: a segment closed by age spans rotate_age to the nanosecond
# (its start and end as the index has them); none spans more.
"$PERFMAPCTL" --state-dir "$T/state" --json segments |
	jq -r '.segments[] | .end_ns - .start_ns' > "$T/spans" || fail "segments"
note "segment spans (ns): $(tr '\n' ' ' < "$T/spans")"
grep -qx 2000000000 "$T/spans" || fail "no segment spans exactly rotate_age (2 s)"
awk '$1 > 2000000000 { exit 1 }' "$T/spans" || fail "a segment spans more than rotate_age"

# The last one that is more than a sliver: a stop just after an age cut
# leaves a segment of a few ms (cuts are exact) that may hold no sample.
first=$1; eval "middle=\${$(( (n + 1) / 2 ))}"
segments | paste "$T/spans" - > "$T/spans.seg"
last=$(awk '$1 >= 500000000 { s = $2 } END { print s }' "$T/spans.seg")
for seg in "$first" "$middle" "$last"; do
	rep=$(perf report -i "$seg" --stdio --no-children --comm pm-spin --sort sym 2>&1) ||
		fail "perf report failed on $seg: $rep"
	echo "$rep" | grep -q 'pm_spin_inner' ||
		{ echo "$rep" | head -30; fail "$seg: no pm_spin_inner samples for pm-spin in perf report"; }
	scr=$(perf script -i "$seg" -F comm,ip,sym 2>&1) || fail "perf script failed on $seg"
	echo "$scr" | grep -A3 '^ *pm-spin' | grep -q 'pm_spin_outer' ||
		fail "$seg: perf script shows no pm-spin call chain through pm_spin_outer"
done

# Build-ids: identical to readelf -n for every file that still exists
# and has not been replaced since.
want=$(readelf_buildid "$T/pm-spin")
[ -n "$want" ] || fail "readelf found no build-id in the test program"
checked=0
for seg in "$@"; do
	perf buildid-list -i "$seg" > "$T/bids" 2>/dev/null || fail "perf buildid-list failed on $seg"
	grep -q "^$want $T/pm-spin\$" "$T/bids" || { cat "$T/bids"; fail "$seg: pm-spin build-id $want not listed"; }
	while read -r id path; do
		case $path in /*) ;; *) continue;; esac
		[ -f "$path" ] || continue
		# replaced since recording began: the table rightly names what ran
		[ "$path" -nt "$T/started" ] && continue
		got=$(readelf_buildid "$path")
		# no build-id at all: not the file that ran (another mount
		# namespace's bind mount over it, as other tests on the host do)
		[ -n "$got" ] || continue
		[ "$got" = "$id" ] || fail "$seg: $path listed with $id, readelf says $got"
		checked=$((checked + 1))
	done < "$T/bids"
	grep -q '\[kernel.kallsyms\]' "$T/bids" || fail "$seg: kernel build-id not listed"
done
note "$checked build-id entries match readelf -n"

# Samples add up, and the cuts are judged by the samples themselves, as
# perf script gives their time stamps (ns): each segment begins where the
# previous one was cut (its CLOCK_DATA reference, which perf prints in ns)
# and holds only samples of its cut; SAMPLE_TIME is its first and last
# sample's time (perf prints it in us); across each cut the last sample of
# N is older than the first of N+1 (no overlap), and the gap between them
# is no longer than the sampling explains: two periods at $FREQ Hz (pm-spin
# keeps a CPU busy), or the longest gap between two samples inside one
# segment if the host stalled longer than that.  A segment cut a few ms
# after a rotation may hold no sample: no longer than the sampling
# explains, and the gap is measured across it.
ns() { echo "$1" | awk -F. '{ printf "%.0f\n", $1 * 1e9 + substr($2 "000000000", 1, 9) }'; }
total=$(sed -n 's/.*stopped: samples=\([0-9]*\).*/\1/p' "$T/daemon.log")
sum=0 i=0 longest=0 gaps="" empty="" plast=""
for seg in "$@"; do
	i=$((i + 1))
	c=$(seg_samples "$seg"); sum=$((sum + c))
	f=$(seg_first "$seg"); l=$(seg_last "$seg"); cut=$(seg_cut "$seg")
	[ -n "$cut" ] || fail "$seg: no reference time (CLOCK_DATA) in the header"
	eval "next=\${$((i + 1)):-}"
	start=$(ns "$cut"); end=""
	[ -z "$next" ] || end=$(ns "$(seg_cut "$next")")
	perf script --ns -i "$seg" -F time 2>/dev/null | tr -d ' :' |
		awk -F. 'NF == 2 { printf "%.0f\n", $1 * 1e9 + $2 }' | sort -n > "$T/times"
	[ "$(wc -l < "$T/times")" = "$c" ] || fail "$seg: perf script shows $(wc -l < "$T/times") samples, perf report -D $c"
	note "$(basename "$seg"): $c samples, $f .. $l, cut at $cut"
	if [ "$c" = 0 ]; then
		[ -z "$end" ] || empty="$empty $((end - start))"
		continue
	fi
	sf=$(head -1 "$T/times") sl=$(tail -1 "$T/times")
	[ -n "$f" ] && [ -n "$l" ] || fail "$seg: no sample time range in the header"
	[ $(( $(ns "$f") / 1000 )) = $((sf / 1000)) ] && [ $(( $(ns "$l") / 1000 )) = $((sl / 1000)) ] ||
		fail "$seg: SAMPLE_TIME says $f .. $l, its samples run $sf .. $sl ns"
	[ "$sf" -ge "$start" ] && { [ -z "$end" ] || [ "$sl" -lt "$end" ]; } ||
		fail "$seg: samples from $sf to $sl ns, outside its cut [$start, ${end:-end})"
	g=$(awk 'NR > 1 && $1 - p > g { g = $1 - p } { p = $1 } END { printf "%.0f\n", g }' "$T/times")
	[ "$g" -gt "$longest" ] && longest=$g
	[ -z "$plast" ] || gaps="$gaps $((sf - plast))"
	plast=$sl
done
period=$((1000000000 / FREQ))
allowed=$((2 * period)); [ "$longest" -gt "$allowed" ] && allowed=$longest
for g in $gaps; do
	[ "$g" -le "$allowed" ] ||
		fail "a gap of $g ns between the samples of two segments; the sampling explains $allowed"
done
for d in $empty; do
	[ "$d" -le "$allowed" ] || fail "a segment of $d ns without a sample; the sampling explains $allowed"
done
note "gaps across the cuts (ns):$gaps; the longest inside a segment $longest, a period $period"
[ "$sum" = "$total" ] || fail "segments hold $sum samples, the daemon counted $total"
[ "$total" -gt 100 ] || fail "only $total samples recorded"
lost=$(sed -n 's/.*stopped:.* lost=\([0-9]*\).*/\1/p' "$T/daemon.log")
[ "$lost" = 0 ] || fail "$lost records lost"
echo "PASS: $n segments, $total samples, contiguous, build-ids match"
