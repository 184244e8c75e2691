#!/bin/sh
# The daemon's own CPU under the exec storm of bench_record.sh, per thread,
# without perf record beside it: what a change to the recording path costs,
# alternating builds in one run.  For each build in BENCH_BUILDS (default
# build/perfmapd) and each of BENCH_RUNS (2) rounds: perfmapd starts on a warm
# state directory (rotation every second: BENCH_ROTATE_AGE), a CPU spinner
# and an exec storm of /bin/true (2 workers) run for 14 s, and from second 3
# the CPU of every thread of the daemon is summed from
# /proc/PID/task/*/schedstat over 8 s.  Prints "BUILD ms/s (per thread ...)
# storm lost".  BENCH_FREQ (999), BENCH_PROFILE=1 also records the daemon
# (perf record -g -F 4999 -p) into $B/NAME.prof.data and prints its top
# symbols.  BENCH_RECORD_CONF: more lines for the [record] section (e.g.
# "buildid_mode = mmap2" and "mmap2_on_leaky_kernel = yes", one per line).
# Run it under flock /tmp/perfmapd-heavy.lock.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILDS=${BENCH_BUILDS:-./${BUILD:-build}/perfmapd}
RUNS=${BENCH_RUNS:-2}
FREQ=${BENCH_FREQ:-999}
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 0; }
. tests/bench/lib.sh
bench_setup
printf '[record]\nevent = cpu-clock\nfrequency = %s\n%s\n[segments]\nrotate_age = %s\nkeep_count = 0\nkeep_size = 0\n' \
	"$FREQ" "${BENCH_RECORD_CONF:-}" "${BENCH_ROTATE_AGE:-1s}" > "$B/conf"

# CPU ns of each thread of PID: "tid ns name" lines (perfmapd(7) THREADS)
threads() { for t in /proc/$1/task/*; do echo "${t##*/} $(cut -d' ' -f1 "$t/schedstat") $(cat "$t/comm")"; done; }

run() {
	p=$1 n=$2
	rm -rf "$B/state/segments"
	"$p" -f -c "$B/conf" --state-dir "$B/state" --socket "$B/sock" > "$B/log" 2>&1 &
	pid=$!
	sleep 2
	"$B/spin" 14 & sp=$!
	"$B/execstorm" 14 2 /bin/true > "$B/storm" &
	sleep 3
	threads $pid > "$B/s0"; t0=$(date +%s%N)
	if [ "${BENCH_PROFILE:-0}" = 1 ]; then
		perf record -q -g -F 4999 -p $pid -o "$B/$n.prof.data" -- sleep 8 >/dev/null 2>&1
	else
		sleep 8
	fi
	threads $pid > "$B/s1"; t1=$(date +%s%N)
	wait $sp; sleep 1
	kill -INT $pid; wait $pid
	lost=$(sed -n 's/.*stopped:.* lost=\([0-9]*\).*/\1/p' "$B/log")
	awk -v dt=$((t1 - t0)) -v name="$p" -v storm="$(cat "$B/storm")" -v lost="${lost:-?}" '
		NR == FNR { a[$1] = $2; next }
		{ d = ($2 - a[$1]) / dt * 1000; s += d; if (d >= 0.005) per = per sprintf(" %s %.2f", $3, d) }
		END { printf "%s %.2f ms/s (threads:%s) storm: %s, lost %s\n", name, s, per, storm, lost }' \
		"$B/s0" "$B/s1"
	if [ "${BENCH_PROFILE:-0}" = 1 ]; then
		perf report -i "$B/$n.prof.data" --no-children --sort sym --stdio -g none 2>/dev/null |
			grep '%' | head -15
	fi
}

set -- $BUILDS
bench_warm "$1"
echo "spin + exec storm (2 workers), cpu-clock at $FREQ Hz, rotation ${BENCH_ROTATE_AGE:-1s}; CPU of the daemon's threads over 8 s"
bench_rounds run
