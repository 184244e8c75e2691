#!/bin/sh
# Short-lived processes and userspace build-ids (buildid_mode = userspace,
# the path every mode takes when the kernel's record has no build-id): the
# share of processes living 10, 50 and 200 ms whose binary's build-id
# perfmapd proves, and what recording costs in CPU meanwhile, beside plain
# `perf record -a -g` on the same workload.
#
# Each process runs its own copy of one program (its own inode: no cache
# hit helps), kernel-blind (tests/progs/hidenote.c, so even a kernel with
# attr.build_id would not give the build-id), and the copy is deleted the
# moment the process exits: the build-id can be proven only from the
# mapping while the process lives.  A process counts as resolved when the
# index holds its copy's path with a build-id.
#
# CPU: the collector's threads' run time (/proc/PID/task/*/schedstat),
# from the start of the workload to its end, in ms per second.
#   BENCH_LIFETIMES ("10 50 200"), BENCH_PROCS (300 per lifetime),
#   BENCH_PAR (4 at a time), BENCH_FREQ (999),
#   BENCH_PERFMAPD (build/perfmapd), BENCH_PERFMAPD_BEFORE (another build
#   to compare, e.g. main's before the side-band: measured first, as
#   "before")
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/bench/lib.sh
LIFETIMES=${BENCH_LIFETIMES:-10 50 200}
N=${BENCH_PROCS:-300}
PAR=${BENCH_PAR:-4}
FREQ=${BENCH_FREQ:-999}
PERFMAPD=${BENCH_PERFMAPD:-./${BUILD:-build}/perfmapd}
BEFORE=${BENCH_PERFMAPD_BEFORE:-}
B=$(mktemp -d /tmp/perfmapd-bench-bid.XXXXXX)
trap 'rm -rf "$B"' EXIT
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 0; }
command -v perf >/dev/null || { echo "SKIP: perf not installed"; exit 0; }
command -v sqlite3 >/dev/null || { echo "SKIP: sqlite3 not installed"; exit 0; }
cc -O2 -o "$B/hidenote" tests/progs/hidenote.c &&
cc -O0 -g -fno-omit-frame-pointer -Wl,--build-id -o "$B/prog" tests/progs/capver.c &&
"$B/hidenote" "$B/prog" || exit 1

# CPU nanoseconds so far of process PID's threads
cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d", s }'
}
now_ns() { date +%s%N; }

# run NAME LIFETIME: prints "resolved cpu_ms_per_s"
run() {
	name=$1 ms=$2 out=$B/$1.$2
	rm -rf "$out"; mkdir -p "$out/bin"
	for i in $(seq 1 "$N"); do cp "$B/prog" "$out/bin/pm-bench-$ms-$i"; done
	start_collector "$name" "$out" "[cache]
capture = off"
	sleep 2
	c0=$(cpu_ns $pid); t0=$(now_ns)
	seq 1 "$N" | xargs -P "$PAR" -I{} sh -c '"$1" -s "$2"; rm -f "$1"' \
		sh "$out/bin/pm-bench-$ms-{}" "$ms"
	c1=$(cpu_ns $pid); t1=$(now_ns)
	sleep 1
	kill -INT $pid; wait $pid
	# Resolved: the index has the copy's path with a build-id (the old
	# daemon's segments cannot be read by perf on a leaky kernel, #17).
	resolved=-
	[ "$name" != perf ] && resolved=$(sqlite3 -readonly "$out/state/index.db" \
		"SELECT count(DISTINCT path) FROM objects WHERE path GLOB '*/pm-bench-$ms-*'")
	awk -v r="$resolved" -v c=$((c1 - c0)) -v t=$((t1 - t0)) \
		'BEGIN { printf "%s %.2f\n", r, 1000 * c / t }'
}

echo "$N processes per lifetime, $PAR at a time, each its own deleted copy; cpu-clock at $FREQ Hz; buildid_mode = userspace"
collectors="after perf"
[ -n "$BEFORE" ] && collectors="before after perf"
printf '\n| lifetime | collector | resolved | share | CPU ms/s |\n|---|---|---|---|---|\n'
for ms in $LIFETIMES; do
	for c in $collectors; do
		set -- $(run "$c" "$ms")
		share=-
		[ "$1" != - ] && share=$(awk -v r="$1" -v n="$N" 'BEGIN { printf "%.1f%%", 100 * r / n }')
		printf '| %s ms | %s | %s | %s | %s |\n' "$ms" "$c" "$1" "$share" "$2"
	done
done
