#!/bin/sh
# The loop's instructions per storm process, counted by callgrind: a figure
# for changes of a few percent, which this machine's CPU time cannot show
# (the same binary's ms/s move by a third between runs: RESULTS.md, "A
# record's time where its layout puts it").  For each of BENCH_RUNS (1)
# rounds and each build in BENCH_BUILDS (default build/perfmapd), in turn:
# perfmapd on a warm state directory under valgrind --tool=callgrind,
# counting only inside the event loop (--toggle-collect=event_base_loop:
# the loop thread's work, not the start nor the other threads), a CPU
# spinner and an exec storm of /bin/true (2 workers) for 10 s.  Prints
# "BUILD: N instructions in the loop, P storm processes, I per process;
# R records, S samples, M mappings, U unknown".
#
# Under valgrind the daemon is some 50 times slower: its reads come late,
# more mappings are unknown than in a plain run (U), and the storm is
# slower; compare builds within one run, by instructions per process.
# Needs valgrind (installed if missing, tests/deps.sh).  Run it under
# flock /tmp/perfmapd-heavy.lock.
cd "$(dirname "$0")/../.." || exit 1
BUILDS=${BENCH_BUILDS:-./${BUILD:-build}/perfmapd}
RUNS=${BENCH_RUNS:-1}
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 0; }
sh tests/deps.sh valgrind || exit 1
. tests/bench/lib.sh
bench_setup
printf '[record]\nevent = cpu-clock\nfrequency = 999\n[segments]\nrotate_age = 10m\nkeep_count = 0\nkeep_size = 0\n' \
	> "$B/conf"

run() {
	p=$1
	rm -rf "$B/state/segments" "$B/cg.out"
	valgrind --tool=callgrind --callgrind-out-file="$B/cg.out" --collect-atstart=no \
		--toggle-collect=event_base_loop \
		"$p" -f -c "$B/conf" --state-dir "$B/state" --socket "$B/sock" > "$B/log" 2>&1 &
	pid=$!
	sleep 8			# valgrind's start
	"$B/spin" 10 & sp=$!
	"$B/execstorm" 10 2 /bin/true > "$B/storm"
	wait $sp; sleep 2
	kill -INT $pid; wait $pid
	ir=$(sed -n 's/^totals: *//p' "$B/cg.out")
	procs=$(sed -n 's/^\([0-9]*\) processes.*/\1/p' "$B/storm")
	sed -n 's/.*stopped: samples=\([0-9]*\) records=\([0-9]*\) mmaps=\([0-9]*\).* no_buildid=\([0-9]*\).*/\1 \2 \3 \4/p' \
		"$B/log" | head -1 > "$B/counts"
	read -r samples records mmaps unknown < "$B/counts"
	if [ -z "$ir" ] || [ -z "$procs" ] || [ "$procs" = 0 ] || [ -z "$records" ]; then
		echo "$p: no figures (log: $(tail -2 "$B/log" | tr '\n' ' '))"
		return 1
	fi
	echo "$p: $ir instructions in the loop, $procs storm processes, $((ir / procs)) per process; $records records, $samples samples, $mmaps mappings, $unknown unknown"
}

set -- $BUILDS
bench_warm "$1"
echo "spin + exec storm (2 workers), cpu-clock at 999 Hz, 10 s under callgrind; the loop's instructions"
bench_rounds run
