#!/bin/sh
# Age cuts are exact under fast wake-ups: with rings that wake the loop
# every 8K and 4,999 samples a second per CPU, a ring's wake-up often
# comes before the rotation's timer; every sample still lands in the
# segment whose cut covers its time: [its cut, the next segment's cut).
# (The bug this guards: a pass woken by a ring drained past the age
# boundary and left samples stamped after it in the segment it ended;
# t_record saw it 1 run in 2 at this rate, with 5 cuts.  Here ~20 cuts.)
. tests/lib.sh
need_events
need_perf

build_prog spin "$(unique_buildid)"
"$T/spin" 9 & BG_PIDS="$!"
"$T/spin" 9 & BG_PIDS="$BG_PIDS $!"
start_daemon "[record]
frequency = 4999
wakeup_size = 8K
[segments]
rotate_age = 300ms"
sleep 6
stop_daemon

ns() { echo "$1" | awk -F. '{ printf "%.0f\n", $1 * 1e9 + substr($2 "000000000", 1, 9) }'; }
set -- $(segments)
n=$#
[ "$n" -ge 12 ] || fail "expected at least 12 segments in 6 s at rotate_age 300ms, got $n"
i=0 total=0 checked=0
for seg in "$@"; do
	i=$((i + 1))
	cut=$(seg_cut "$seg")
	[ -n "$cut" ] || fail "$seg: no reference time (CLOCK_DATA) in the header"
	start=$(ns "$cut") end=""
	eval "next=\${$((i + 1)):-}"
	[ -z "$next" ] || end=$(ns "$(seg_cut "$next")")
	perf script --ns -i "$seg" -F time 2>/dev/null | tr -d ' :' |
		awk -F. 'NF == 2 { printf "%.0f\n", $1 * 1e9 + $2 }' > "$T/times"
	c=$(wc -l < "$T/times"); total=$((total + c))
	[ "$c" -gt 0 ] || continue
	out=$(awk -v s="$start" -v e="${end:-0}" \
		'$1 < s || (e > 0 && $1 >= e) { n++; if (!w) w = $1 } END { if (n) print n, w }' "$T/times")
	[ -z "$out" ] || fail "$(basename "$seg"): ${out% *} of $c samples outside its cut [$start, ${end:-end}), the first at ${out#* } ns"
	[ -z "$end" ] || checked=$((checked + 1))
done
[ "$checked" -ge 10 ] || fail "only $checked segments with samples and a next cut"
lost=$(sed -n 's/.*stopped:.* lost=\([0-9]*\).*/\1/p' "$T/daemon.log")
[ "${lost:-x}" = 0 ] || sanitized || fail "${lost:-unknown} records lost"
echo "PASS: $n segments, $total samples, each within its cut ($checked cuts checked)"
