#!/bin/sh
# bench_profile: perfmapctl profile on a one-hour window at 99 Hz on 2 CPUs,
# in each format: elapsed time, CPU and peak RSS.  The hour is made from a
# real minute: perfmapd records a workload that keeps both CPUs busy (a
# spinner with call chains, xz compressing, a shell starting processes), and
# bench_stretch copies that segment 60 times along the clock into six
# 10-minute segments with their index rows; the binaries are the ones the
# daemon cached.  For scale, perf report on the hour's perf.data (what one
# would run without perfmapd) is measured the same way.
#   BENCH_PROFILE_SECONDS (60): the minute recorded
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
SECS=${BENCH_PROFILE_SECONDS:-60}
B=$(mktemp -d /tmp/perfmapd-bench-profile.XXXXXX)
trap 'kill $PIDS 2>/dev/null; wait 2>/dev/null; rm -rf "$B"' EXIT
PIDS=""
[ "$(id -u)" = 0 ] || { echo "bench_profile: needs root (perf events)"; exit 0; }
cc -O2 -o "$B/measure" tests/bench/measure.c &&
cc -O0 -fno-omit-frame-pointer -o "$B/spin" tests/progs/spin.c || exit 1

printf '[record]\nfrequency = 99\nevent = cpu-clock\n' > "$B/conf"
"$BUILD/perfmapd" -f -c "$B/conf" --state-dir "$B/state" --socket "$B/sock" > "$B/log" 2>&1 &
PIDS=$!
for _ in $(seq 1 100); do grep -q "recording into" "$B/log" && break; sleep 0.1; done
"$BUILD/perfmapctl" -s "$B/sock" snapshot > /dev/null	# the minute starts now
end=$(($(date +%s) + SECS))
"$B/spin" "$SECS" & PIDS="$PIDS $!"
( while [ "$(date +%s)" -lt "$end" ]; do xz -3 -c "$BUILD/perfmapd" > /dev/null; sh -c true; done ) &
PIDS="$PIDS $!"
sleep "$SECS"
wait $(echo "$PIDS" | cut -d' ' -f2-) 2>/dev/null
seg=$("$BUILD/perfmapctl" -s "$B/sock" snapshot) || exit 1
"$BUILD/perfmapctl" -s "$B/sock" stop > /dev/null
wait
PIDS=""
win=$("$BUILD/tests/bench/bench_stretch" "$seg" "$B/state" $((3600 / SECS)) $((600 / SECS))) || exit 1
rm -f "$seg"
set -- $win
echo "one hour: $(ls "$B/state/segments/" | grep -c '^perf-9') segments, $(du -sh "$B/state/segments" | cut -f1) on disk, window $1 .. $2"
printf '%-8s %10s %8s %8s %10s %10s %9s\n' format samples wall_s cpu_s peak_rss out_size stacks
# measure polls once a second: CPU and peak RSS from it, elapsed time from a second run
for f in perf pprof folded svg; do
	"$B/measure" "$B/m.$f" "$BUILD/perfmapctl" --state-dir "$B/state" --json profile \
		--since "$1" --until "$2" --format "$f" -o "$B/out.$f" > "$B/json.$f" || {
		echo "profile --format $f failed"; exit 1; }
	t0=$(date +%s.%N)
	"$BUILD/perfmapctl" --state-dir "$B/state" profile --since "$1" --until "$2" \
		--format "$f" -o "$B/out2.$f" > /dev/null || exit 1
	t1=$(date +%s.%N)
	printf '%-8s %10s %8.2f %8.2f %7s MB %7s MB %9s\n' "$f" "$(jq .samples "$B/json.$f")" \
		"$(echo "scale=3; $t1 - $t0" | bc)" \
		"$(awk '/^cpu_user/ { u = $2 } /^cpu_sys/ { s = $2 } END { print u + s }' "$B/m.$f")" \
		"$(awk '/^maxrss_kb/ { printf "%.1f", $2 / 1024 }' "$B/m.$f")" \
		"$(du -m "$B/out.$f" | cut -f1)" "$(jq .stacks "$B/json.$f")"
done
set -- --buildid-dir "$B/state/debug" report -i "$B/out.perf" --stdio --no-children \
	--sort comm,dso,sym -g none
"$B/measure" "$B/m.report" perf "$@" > /dev/null 2>&1
t0=$(date +%s.%N)
perf "$@" > /dev/null 2>&1
t1=$(date +%s.%N)
printf '%-8s %10s %8.2f %8.2f %7s MB   (perf report --stdio on the perf output)\n' "report" "-" \
	"$(echo "scale=3; $t1 - $t0" | bc)" \
	"$(awk '/^cpu_user/ { u = $2 } /^cpu_sys/ { s = $2 } END { print u + s }' "$B/m.report")" \
	"$(awk '/^maxrss_kb/ { printf "%.1f", $2 / 1024 }' "$B/m.report")"
