#!/bin/sh
# Recording overhead, side by side in one run, on the same workload (a CPU
# spinner plus an exec storm of thousands of processes per second), same
# event and frequency for all:
#   perfmapd          rotation every second, everything on; restarted on the
#                     state directory of its earlier runs (the usual case)
#   perfmapd-first    the same on an empty state directory: its first start,
#                     when the build-id cache is filled with every binary running
#   perf-switch       perf record -a --buildid-mmap --switch-output=1s
#   perf              perf record -a --buildid-mmap
#   perfmapd-zstd     perfmapd with [segments] compress = zstd (BENCH_ZSTD_LEVEL, 1)
#   perf-z            perf record -a --buildid-mmap -z (zstd level 1)
#                     (the last two: bench_compress.sh)
# For each: collector CPU time (user+sys, wait4 rusage, exit included), the
# steady-state CPU rate (ms per second of recording, start-up and exit left
# out), the same per process of the storm (us: the rate divided by the
# run's own storm rate, which moves from run to run), peak RSS, RSS slope,
# bytes written, samples recorded, records lost; medians of BENCH_RUNS runs;
# ratios perfmapd / perf.
#   BENCH_SECONDS (20), BENCH_RUNS (3), BENCH_FREQ (999), BENCH_STORM (2 workers),
#   BENCH_COLLECTORS ("perfmapd perfmapd-first perf-switch perf": a subset,
#   for a quick look; perfmapd-first starts on an empty state directory),
#   BENCH_PERFMAPD (build/perfmapd: another build, e.g. to compare two commits),
#   BENCH_RECORD_CONF (more [record] lines for perfmapd, e.g. "buildid_mode = mmap2
#   mmap2_on_leaky_kernel = yes" to compare kernel build-ids with the default),
#   BENCH_ROTATE_AGE (1s: perfmapd's rotate_age)
set -u
cd "$(dirname "$0")/../.." || exit 1
SECS=${BENCH_SECONDS:-20}
RUNS=${BENCH_RUNS:-3}
FREQ=${BENCH_FREQ:-999}
STORM=${BENCH_STORM:-2}
COLLECTORS=${BENCH_COLLECTORS:-perfmapd perfmapd-first perf-switch perf}
PERFMAPD=${BENCH_PERFMAPD:-./${BUILD:-build}/perfmapd}
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
	state=$out/state
	case $name in
	perfmapd|perfmapd-first|perfmapd-zstd)
		# perfmapd: the state directory of earlier runs (its build-id cache
		# holds the machine's binaries, as after the daemon's first start);
		# perfmapd-first: an empty one (the cache is filled during the run).
		[ "$name" != perfmapd-first ] && { state=$B/warm; rm -rf "$state/segments"; }
		z=""
		[ "$name" = perfmapd-zstd ] && z="compress = zstd
compress_level = ${BENCH_ZSTD_LEVEL:-1}"
		printf '[record]\nevent = cpu-clock\nfrequency = %s\n%s\n[segments]\nrotate_age = %s\nkeep_count = 0\nkeep_size = 0\n%s\n' \
			"$FREQ" "${BENCH_RECORD_CONF:-}" "${BENCH_ROTATE_AGE:-1s}" "$z" > "$out/conf"
		"$B/measure" "$out/m" "$PERFMAPD" -f -c "$out/conf" --state-dir "$state" \
			--socket "$out/sock" > "$out/log" 2>&1 &
		;;
	perf-switch)
		"$B/measure" "$out/m" perf record -a -g -e cpu-clock -F "$FREQ" --buildid-mmap \
			--switch-output=1s -o "$out/perf.data" > "$out/log" 2>&1 &
		;;
	perf|perf-z)
		zflag=""
		[ "$name" = perf-z ] && zflag=-z
		"$B/measure" "$out/m" perf record -a -g -e cpu-clock -F "$FREQ" --buildid-mmap \
			$zflag -o "$out/perf.data" > "$out/log" 2>&1 &
		;;
	esac
	mpid=$!
	sleep 2
	"$B/spin" "$SECS" & spid=$!
	"$B/execstorm" "$SECS" "$STORM" /bin/true > "$out/storm"
	wait $spid
	kill -INT $mpid; wait $mpid
	case $name in
	perfmapd*) files=$(find "$state/segments" -name 'perf*.data' -type f | sort);;
	*) files=$(find "$out" -name 'perf*.data*' -type f | sort);;
	esac
	bytes=$(cat $files | wc -c)
	set -- $(count $files)
	samples=$1 lost=$2
	case $name in
	perfmapd*)
		l2=$(sed -n 's/.*stopped:.* lost=\([0-9]*\).*/\1/p' "$out/log")
		[ -n "$l2" ] && lost=$l2;;
	esac
	cpu=$(awk '/^cpu_user/ { u = $2 } /^cpu_sys/ { s = $2 } END { printf "%.2f", u + s }' "$out/m")
	# steady state: CPU per second of recording, from 3 s after the start
	# to the last reading before the stop (start-up and exit left out)
	steady=$(awk '/^cpu / && $2 >= 3 { if (t0 == "") { t0 = $2; c0 = $3 } t1 = $2; c1 = $3 }
		END { if (t1 > t0) printf "%.2f", 1000 * (c1 - c0) / (t1 - t0); else print 0 }' "$out/m")
	rss=$(awk '/^maxrss_kb/ { print $2 }' "$out/m")
	slope=$(awk '/^rss / && $2 >= 3 { n++; x += $2; y += $3; xx += $2 * $2; xy += $2 * $3 }
		END { d = n * xx - x * x; if (n < 3 || d == 0) print 0; else printf "%.1f", 60 * (n * xy - x * y) / d }' "$out/m")
	rate=$(sed -n 's/.*, \([0-9][0-9]*\)\/s.*/\1/p' "$out/storm")
	echo "$cpu $rss $slope $bytes $samples $lost $steady ${rate:-0}"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "workload: spin + exec storm ($STORM workers) for ${SECS}s, cpu-clock at ${FREQ} Hz, $RUNS runs"
case " $COLLECTORS " in
*" perfmapd "*|*" perfmapd-zstd "*)
	# fill the warm state directory once (not measured): its first start
	mkdir -p "$B/warm0"
	printf '[record]\nevent = cpu-clock\nfrequency = %s\n' "$FREQ" > "$B/warm0/conf"
	"$PERFMAPD" -f -c "$B/warm0/conf" --state-dir "$B/warm" --socket "$B/warm0/sock" \
		> "$B/warm0/log" 2>&1 & wpid=$!
	sleep 5; kill -INT $wpid; wait $wpid;;
esac
for i in $(seq 1 "$RUNS"); do
	for c in $COLLECTORS; do
		r=$(run "$c" "$i")
		echo "$c $r" >> "$B/results"
		set -- $r
		echo "  run $i $c: cpu=${1}s steady=${7}ms/s rss=${2}kB samples=$5 lost=$6 storm: $(cat "$B/$c.$i/storm")"
	done
done

col() { awk -v c="$1" -v k="$2" '$1 == c { print $k }' "$B/results" | median; }
# bytes per sample of each run, for its median
awk '{ if ($6 > 0) printf "%s %.1f\n", $1, $5 / $6; else print $1, 0 }' "$B/results" > "$B/bps"
bps() { awk -v c="$1" '$1 == c { print $2 }' "$B/bps" | median; }
# steady CPU per storm process (us), each run's own rate: the storm's pace
# moves from run to run, and with it what a collector spends on it
awk '{ if ($9 > 0) printf "%s %.2f\n", $1, 1000 * $8 / $9; else print $1, 0 }' "$B/results" > "$B/upp"
upp() { awk -v c="$1" '$1 == c { print $2 }' "$B/upp" | median; }
printf '\n| collector | CPU s | steady CPU ms/s | steady us per storm process | peak RSS kB | RSS slope kB/min | bytes | samples | bytes/sample | lost |\n|---|---|---|---|---|---|---|---|---|---|\n'
for c in $COLLECTORS; do
	printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$c" "$(col $c 2)" "$(col $c 8)" \
		"$(upp $c)" "$(col $c 3)" "$(col $c 4)" "$(col $c 5)" "$(col $c 6)" "$(bps $c)" "$(col $c 7)"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
has() { case " $COLLECTORS " in *" $1 "*) return 0;; esac; return 1; }
if has perfmapd-zstd; then
	echo
	for q in perfmapd perf perf-z; do
		has $q || continue
		echo "perfmapd-zstd / $q: bytes/sample $(ratio "$(bps perfmapd-zstd)" "$(bps $q)"), CPU $(ratio "$(col perfmapd-zstd 2)" "$(col $q 2)"), steady CPU $(ratio "$(col perfmapd-zstd 8)" "$(col $q 8)")"
	done
	has perf && has perf-z &&
		echo "perf-z / perf: bytes/sample $(ratio "$(bps perf-z)" "$(bps perf)"), CPU $(ratio "$(col perf-z 2)" "$(col perf 2)"), steady CPU $(ratio "$(col perf-z 8)" "$(col perf 8)")"
fi
echo
for p in perfmapd perfmapd-first; do
	for q in perf-switch perf; do
		case " $COLLECTORS " in *" $p "*) ;; *) continue;; esac
		case " $COLLECTORS " in *" $q "*) ;; *) continue;; esac
		echo "$p / $q: CPU $(ratio "$(col $p 2)" "$(col $q 2)"), steady CPU $(ratio "$(col $p 8)" "$(col $q 8)"), per storm process $(ratio "$(upp $p)" "$(upp $q)"), RSS $(ratio "$(col $p 3)" "$(col $q 3)"), bytes $(ratio "$(col $p 5)" "$(col $q 5)")"
	done
done
