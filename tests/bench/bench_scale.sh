#!/bin/sh
# A big host: BENCH_SCALE_PROCS sleeping processes (10000), each mapping
# BENCH_SCALE_FILES small ELF files executable (200): 2M maps at full size
# (tests/progs/manymaps).  Then, one after the other on that host, with the
# same event and frequency:
#   perfmapd   start time (launch to "recording into": the /proc scan, the
#              build-id reads, the first segment's start state), peak RSS,
#              CPU per second in steady state, records lost (short
#              processes run through its start: BENCH_SCALE_STORM), rotations
#              (rotate_size BENCH_SCALE_ROTATE, 16M: smaller than the start
#              state, which does not count toward it) and segment sizes
#   perf       perf record -a -g: start time (launch to its workload's
#              first instruction: perf synthesizes /proc first), peak RSS,
#              CPU per second while recording, its exit (the build-id pass)
# Both record BENCH_SCALE_SECONDS (15) after their start.  The full size
# takes a few minutes: make bench runs it; a quick look: BENCH_SCALE_PROCS=1000.
#   BENCH_SCALE_FREQ (99), BENCH_PERFMAPD (build/perfmapd: another build,
#   e.g. main's, to compare), BENCH_SCALE_PERF=0 (perfmapd only)
set -u
cd "$(dirname "$0")/../.." || exit 1
NPROCS=${BENCH_SCALE_PROCS:-10000}
NFILES=${BENCH_SCALE_FILES:-200}
SECS=${BENCH_SCALE_SECONDS:-15}
FREQ=${BENCH_SCALE_FREQ:-99}
ROTATE=${BENCH_SCALE_ROTATE:-16M}
PERFMAPD=${BENCH_PERFMAPD:-./${BUILD:-build}/perfmapd}
PERFMAPCTL=./${BUILD:-build}/perfmapctl
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 0; }
command -v perf >/dev/null || { echo "SKIP: perf not installed"; exit 0; }
B=$(mktemp -d /tmp/perfmapd-bench.XXXXXX)
MM=""
trap '[ -n "$MM" ] && kill $MM 2>/dev/null && wait $MM; rm -rf "$B"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# what the host allows: pids, maps per process, memory (the kernel's VMAs
# and page tables: about 1 kB per map)
pid_max=$(cat /proc/sys/kernel/pid_max)
nthreads=$(ps -eLf --no-headers | wc -l)
map_max=$(cat /proc/sys/vm/max_map_count)
avail_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
ulim=$(awk '/^Max processes/ { print $3 }' /proc/self/limits)
[ $((NPROCS + nthreads + 2000)) -lt "$pid_max" ] ||
	{ echo "SKIP: $NPROCS processes do not fit in pid_max $pid_max ($nthreads threads running)"; exit 0; }
[ "$ulim" = unlimited ] || [ "$NPROCS" -lt "$ulim" ] ||
	{ echo "SKIP: the process limit $ulim is below $NPROCS"; exit 0; }
[ $((NFILES + 100)) -lt "$map_max" ] || { echo "SKIP: vm.max_map_count $map_max"; exit 0; }
[ $((NPROCS * NFILES * 2)) -lt "$avail_kb" ] ||
	{ echo "SKIP: $((NPROCS * NFILES)) maps need about $((NPROCS * NFILES * 2 / 1024)) MB, $((avail_kb / 1024)) MB available"; exit 0; }

cc -O2 -o "$B/manymaps" tests/progs/manymaps.c &&
cc -O2 -o "$B/measure" tests/bench/measure.c || exit 1
mkdir "$B/mm"
t0=$(date +%s.%N)
"$B/manymaps" "$B/mm" "$NPROCS" "$NFILES" /usr/bin/true > "$B/mm.out" 2>&1 &
MM=$!
while ! grep -q '^ready' "$B/mm.out"; do
	kill -0 $MM 2>/dev/null || { cat "$B/mm.out"; echo "FAIL: manymaps"; exit 1; }
	sleep 0.2
done
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
echo "host: $NPROCS processes x $NFILES file maps = $((NPROCS * NFILES)) maps, made in $(secs "$t0" "$(date +%s.%N)") s; cpu-clock at $FREQ Hz, call chains, ${SECS} s each"

# CPU ms per second of the collector from second FROM on (measure's lines)
steady() { awk -v from="$2" '/^cpu / && $2 >= from { if (t0 == "") { t0 = $2; c0 = $3 } t1 = $2; c1 = $3 }
	END { if (t1 > t0) printf "%.2f", 1000 * (c1 - c0) / (t1 - t0); else print "n/a" }' "$1"; }
maxrss() { awk '/^maxrss_kb/ { print $2 }' "$1"; }

# ---- perfmapd
printf '[record]\nevent = cpu-clock\nfrequency = %s\n[segments]\nrotate_size = %s\nkeep_size = 0\n' \
	"$FREQ" "$ROTATE" > "$B/conf"
# A host does not stand still while perfmapd starts: short processes (a
# few hundred a second, BENCH_SCALE_STORM=0 for none) run from its launch
# to the end of its start, whose records the kernel holds in the rings the
# /proc scan keeps the loop from reading.
storm() {
	n=0
	while [ ! -e "$B/storm.stop" ]; do
		/bin/true; /bin/true; /bin/true
		n=$((n + 3))
		sleep 0.01
	done
	echo "$n" > "$B/storm.n"
}
spid=""
[ "${BENCH_SCALE_STORM:-1}" = 1 ] && { storm & spid=$!; }
t0=$(date +%s.%N)
"$B/measure" "$B/m.perfmapd" "$PERFMAPD" -f -d -c "$B/conf" --state-dir "$B/state" \
	--socket "$B/sock" > "$B/log" 2>&1 &
mpid=$!
while ! grep -q "recording into" "$B/log"; do
	kill -0 $mpid 2>/dev/null || { tail "$B/log"; echo "FAIL: perfmapd died"; exit 1; }
	sleep 0.1
done
t1=$(date +%s.%N)
touch "$B/storm.stop"
[ -n "$spid" ] && wait $spid
start=$(secs "$t0" "$t1")
from=$(awk -v s="$start" 'BEGIN { printf "%d", s + 3 }')	# 3 s after the start
sleep "$SECS"
status=$("$PERFMAPCTL" -s "$B/sock" status)
kill -INT $mpid; wait $mpid
lost=$(sed -n 's/.*stopped:.* lost=\([0-9]*\).*/\1/p' "$B/log")
recorded=$(sed -n 's/.*stopped:.* bytes=\([0-9]*\).*/\1/p' "$B/log")
nseg=$(ls "$B/state/segments/"perf-*.data | wc -l)
sizes=$(ls -l "$B/state/segments/"perf-*.data | awk '{ printf "%s%.1f", sep, $5 / 1048576; sep = " " }')
synth=$(sed -n 's/.*opened .*: \([0-9]*\) processes, [0-9]* threads, \([0-9]*\) maps synthesized.*/\1 processes, \2 maps/p' "$B/log" | head -n 1)
echo "perfmapd: start $start s; peak RSS $(maxrss "$B/m.perfmapd") kB; steady CPU $(steady "$B/m.perfmapd" "$from") ms/s; lost $lost records"
echo "perfmapd: start state $synth; $nseg segments (MiB: $sizes) with rotate_size $ROTATE; $recorded bytes recorded after the start states"
echo "$status" | grep -E '^(lost|processes) ' | sed 's/^/perfmapd status: /'
[ -e "$B/storm.n" ] && echo "perfmapd: $(cat "$B/storm.n") short processes ran during its start; $(sed -n 's/.*start: \([0-9]* bytes of records held in memory.*\)/\1/p' "$B/log")"
start_pm=$start rss_pm=$(maxrss "$B/m.perfmapd") cpu_pm=$(steady "$B/m.perfmapd" "$from")

[ "${BENCH_SCALE_PERF:-1}" = 0 ] && exit 0

# ---- perf record -a -g: its workload starts once perf has synthesized /proc
t0=$(date +%s.%N)
"$B/measure" "$B/m.perf" perf --buildid-dir "$B/perfdebug" record -a -g -e cpu-clock \
	-F "$FREQ" -o "$B/perf.data" -- sh -c "date +%s.%N > $B/started; sleep $SECS; date +%s.%N > $B/ended" \
	> "$B/perf.log" 2>&1
t2=$(date +%s.%N)
start=$(secs "$t0" "$(cat "$B/started")")
from=$(awk -v s="$start" 'BEGIN { printf "%d", s + 3 }')
plost=$(awk '/lost/ && /chunks|events/' "$B/perf.log" | head -n 2 | tr '\n' ' ')
echo "perf record -a -g: start $start s; peak RSS $(maxrss "$B/m.perf") kB; steady CPU $(steady "$B/m.perf" "$from") ms/s; exit after the workload $(secs "$(cat "$B/ended")" "$t2") s; $(stat -c %s "$B/perf.data" | awk '{ printf "%.1f", $1 / 1048576 }') MiB; ${plost:-no lost warning}"
start_pf=$start rss_pf=$(maxrss "$B/m.perf") cpu_pf=$(steady "$B/m.perf" "$from")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
echo "perfmapd / perf record -a -g: start $(ratio "$start_pm" "$start_pf"), peak RSS $(ratio "$rss_pm" "$rss_pf"), steady CPU $(ratio "$cpu_pm" "$cpu_pf")"
