#!/bin/sh
# Recording overhead, side by side in one run, on the same workload (a CPU
# spinner plus an exec storm of thousands of processes per second), same
# event and frequency for all:
#   perfmapd          rotation every second, everything on
#   perf-switch       perf record -a --buildid-mmap --switch-output=1s
#   perf              perf record -a --buildid-mmap
# For each: collector CPU time (user+sys, wait4 rusage, exit included), peak
# RSS, RSS slope, bytes written, samples recorded, records lost; medians of
# BENCH_RUNS runs; ratios perfmapd / perf.
#   BENCH_SECONDS (20), BENCH_RUNS (3), BENCH_FREQ (999), BENCH_STORM (2 workers)
set -u
cd "$(dirname "$0")/../.." || exit 1
SECS=${BENCH_SECONDS:-20}
RUNS=${BENCH_RUNS:-3}
FREQ=${BENCH_FREQ:-999}
STORM=${BENCH_STORM:-2}
B=$(mktemp -d /tmp/perfmapd-bench.XXXXXX)
trap 'rm -rf "$B"' EXIT
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 0; }
command -v perf >/dev/null || { echo "SKIP: perf not installed"; exit 0; }
cc -O2 -o "$B/execstorm" tests/bench/execstorm.c &&
cc -O2 -o "$B/measure" tests/bench/measure.c &&
cc -O0 -fno-omit-frame-pointer -o "$B/spin" tests/progs/spin.c || exit 1

# samples and lost records in a set of perf.data files
count() {
	s=0 l=0
	for f in "$@"; do
		perf report -D -i "$f" 2>/dev/null > "$B/dump"
		s=$((s + $(grep -c 'PERF_RECORD_SAMPLE(' "$B/dump")))
		l=$((l + $(awk '/PERF_RECORD_LOST / { for (i = 1; i <= NF; i++) if ($i == "lost:") n += $(i + 1) } END { print n + 0 }' "$B/dump")))
	done
	echo "$s $l"
}

# one run of collector NAME: prints "cpu rss slope bytes samples lost"
run() {
	name=$1 out=$B/$1.$2
	rm -rf "$out"; mkdir -p "$out"
	case $name in
	perfmapd)
		printf '[record]\nevent = cpu-clock\nfrequency = %s\n[segments]\nrotate_age = 1s\nkeep_count = 0\nkeep_size = 0\n' \
			"$FREQ" > "$out/conf"
		"$B/measure" "$out/m" ./perfmapd -f -c "$out/conf" --state-dir "$out/state" \
			--socket "$out/sock" > "$out/log" 2>&1 &
		;;
	perf-switch)
		"$B/measure" "$out/m" perf record -a -g -e cpu-clock -F "$FREQ" --buildid-mmap \
			--switch-output=1s -o "$out/perf.data" > "$out/log" 2>&1 &
		;;
	perf)
		"$B/measure" "$out/m" perf record -a -g -e cpu-clock -F "$FREQ" --buildid-mmap \
			-o "$out/perf.data" > "$out/log" 2>&1 &
		;;
	esac
	mpid=$!
	sleep 2
	"$B/spin" "$SECS" & spid=$!
	"$B/execstorm" "$SECS" "$STORM" /bin/true > "$out/storm"
	wait $spid
	kill -INT $mpid; wait $mpid
	files=$(find "$out" -name 'perf*.data*' -type f ! -name '*.partial' | sort)
	bytes=$(cat $files | wc -c)
	set -- $(count $files)
	samples=$1 lost=$2
	if [ "$name" = perfmapd ]; then
		l2=$(sed -n 's/.*stopped:.* lost=\([0-9]*\).*/\1/p' "$out/log")
		[ -n "$l2" ] && lost=$l2
	fi
	cpu=$(awk '/^cpu_user/ { u = $2 } /^cpu_sys/ { s = $2 } END { printf "%.2f", u + s }' "$out/m")
	rss=$(awk '/^maxrss_kb/ { print $2 }' "$out/m")
	slope=$(awk '/^rss / && $2 >= 3 { n++; x += $2; y += $3; xx += $2 * $2; xy += $2 * $3 }
		END { d = n * xx - x * x; if (n < 3 || d == 0) print 0; else printf "%.1f", 60 * (n * xy - x * y) / d }' "$out/m")
	echo "$cpu $rss $slope $bytes $samples $lost"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "workload: spin + exec storm ($STORM workers) for ${SECS}s, cpu-clock at ${FREQ} Hz, $RUNS runs"
for i in $(seq 1 "$RUNS"); do
	for c in perfmapd perf-switch perf; do
		r=$(run "$c" "$i")
		echo "$c $r" >> "$B/results"
		echo "  run $i $c: cpu=$(echo "$r" | cut -d' ' -f1)s rss=$(echo "$r" | cut -d' ' -f2)kB samples=$(echo "$r" | cut -d' ' -f5) lost=$(echo "$r" | cut -d' ' -f6) storm: $(cat "$B/$c.$i/storm")"
	done
done

col() { awk -v c="$1" -v k="$2" '$1 == c { print $k }' "$B/results" | median; }
printf '\n| collector | CPU s | peak RSS kB | RSS slope kB/min | bytes | samples | lost |\n|---|---|---|---|---|---|---|\n'
for c in perfmapd perf-switch perf; do
	printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$c" "$(col $c 2)" "$(col $c 3)" "$(col $c 4)" \
		"$(col $c 5)" "$(col $c 6)" "$(col $c 7)"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
echo
echo "perfmapd / perf record --switch-output=1s: CPU $(ratio "$(col perfmapd 2)" "$(col perf-switch 2)"), RSS $(ratio "$(col perfmapd 3)" "$(col perf-switch 3)"), bytes $(ratio "$(col perfmapd 5)" "$(col perf-switch 5)")"
echo "perfmapd / perf record:                    CPU $(ratio "$(col perfmapd 2)" "$(col perf 2)"), RSS $(ratio "$(col perfmapd 3)" "$(col perf 3)"), bytes $(ratio "$(col perfmapd 5)" "$(col perf 5)")"
