#!/bin/sh
# A build-like storm: shell pipelines of some forty different system
# programs (sed, grep, awk, sort, gzip, perl, python3, cc, git, ...), with
# their libraries some sixty files that an exec storm maps over and over.
# The bench_record storm runs one program (/bin/true: three files); this
# one shows what the loop's pins (resolver.h) are worth when a storm's
# files outnumber them: a mapping of a file no pin holds is a request to
# the reader thread, a path walk and a read.
#
# Each collector in turn, beside the same storm, RUNS rounds: perfmapd
# (buildid_mode = userspace, this kernel's; the build-id cache filled by a
# first storm, not measured) and plain `perf record -a -g`.  CPU: the
# collector's threads' run time (/proc/PID/task/*/schedstat) over the
# storm, in ms per second; for perfmapd also the mappings the storm made
# (counters.mmaps), how many went to the reader (buildid_reads.requests),
# how many a pin proved (pinned), and the pins let go (pins_dropped).
#   BENCH_RUNS (3), BENCH_SECONDS (8), BENCH_FREQ (999),
#   BENCH_PERFMAPD (build/perfmapd), BENCH_PERFMAPD_BEFORE (another build,
#   measured as "before" in the same rounds)
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/bench/lib.sh
RUNS=${BENCH_RUNS:-3}
SECS=${BENCH_SECONDS:-8}
FREQ=${BENCH_FREQ:-999}
PERFMAPD=${BENCH_PERFMAPD:-./${BUILD:-build}/perfmapd}
PERFMAPCTL=$(dirname "$PERFMAPD")/perfmapctl
[ -x "$PERFMAPCTL" ] || PERFMAPCTL=./${BUILD:-build}/perfmapctl
BEFORE=${BENCH_PERFMAPD_BEFORE:-}
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 0; }
command -v perf >/dev/null || { echo "SKIP: perf not installed"; exit 0; }
command -v jq >/dev/null || { echo "SKIP: jq not installed"; exit 0; }
B=$(mktemp -d /tmp/perfmapd-bench-pins.XXXXXX) || exit 1
trap 'rm -rf "$B"' EXIT

# The storm: for SECONDS, pipelines of programs that are installed.
cat > "$B/storm.sh" <<'EOF'
end=$(( $(date +%s) + $1 ))
q() { "$@" > /dev/null 2>&1; }
while [ "$(date +%s)" -lt "$end" ]; do
	echo "a b c" | sed s/a/x/ | grep x | awk '{print $2}' | sort | uniq | cut -c1 |
		tr b y | wc -l > /dev/null
	q ls /; q cat /etc/hostname; q id; q date; q stat /; q basename /a/b; q dirname /a/b
	q head -1 /etc/passwd; q tail -1 /etc/passwd; q find /etc -maxdepth 0
	q md5sum /etc/hostname; q sha256sum /etc/hostname; q env true; q expr 1 + 1; q seq 1 2
	q readlink -f /; gzip -c /etc/hostname | gunzip > /dev/null; q tar --version
	q diff /dev/null /dev/null; q perl -e 1; q python3 -c 1; q cc --version
	q as --version; q ld --version; q git --version; q jq -n 1; q sqlite3 -version
	q make -v; q xargs echo
done
EOF

cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d", s }'; }
counts() {
	"$PERFMAPCTL" -s "$B/sock" --json status | jq -r '[.counters.mmaps,
	    .buildid_reads.requests, .buildid_reads.pinned, .buildid_reads.pins_dropped,
	    .counters.lost, (.buildid_reads.pins_max // 0)] | @tsv'
}

# run NAME: one line of figures
run() {
	rm -rf "$B/state" "$B/perf.data"
	start_collector "$1" "$B" "[segments]
rotate_age = 10m"
	sleep 2
	sh "$B/storm.sh" 3	# the cache filled, the files seen once
	[ "$1" = perf ] || a=$(counts)
	c0=$(cpu_ns $pid); t0=$(date +%s%N)
	sh "$B/storm.sh" "$SECS"
	c1=$(cpu_ns $pid); t1=$(date +%s%N)
	[ "$1" = perf ] || b=$(counts)
	kill -INT $pid; wait $pid
	if [ "$1" = perf ]; then
		awk -v c=$((c1 - c0)) -v t=$((t1 - t0)) 'BEGIN { printf "perf      %6.2f ms/s\n", 1000 * c / t }'
		return
	fi
	printf '%s\t%s\n' "$a" "$b" | awk -v n="$1" -v c=$((c1 - c0)) -v t=$((t1 - t0)) '{
		printf "%-9s %6.2f ms/s  %6d mappings  %5d requests  %6d pinned  %4d pins dropped  %d lost  (%d pins)\n",
		    n, 1000 * c / t, $7 - $1, $8 - $2, $9 - $3, $10 - $4, $11, $12 }'
}

echo "a build-like storm of ${SECS} s, cpu-clock at $FREQ Hz with call chains; buildid_mode = userspace"
for r in $(seq 1 "$RUNS"); do
	[ -n "$BEFORE" ] && run before
	run after
	run perf
done
