# tests/bench/lib.sh - what the builds-alternating storm benchmarks share
# (bench_threads.sh, bench_instr.sh); sourced from the top of the tree.
#   bench_setup      $B, a scratch directory removed at exit, with the
#                    storm's programs: $B/execstorm, $B/spin
#   bench_warm BIN   a first start of BIN on $B/state, not measured: the
#                    build-id cache filled, as on a host that has run it
#   bench_rounds FN  FN BUILD N for each of $RUNS rounds and each build of
#                    $BUILDS in turn (N counts from 1); 1 if any FN failed
#   start_collector NAME DIR CONF
#                    in the background, recording into DIR: perf record -a
#                    -g (NAME perf) or perfmapd ($BEFORE for NAME before,
#                    else $PERFMAPD) with buildid_mode = userspace and the
#                    lines CONF after [record]; at $FREQ Hz; its pid in $pid
#                    (bench_buildid.sh, bench_pins.sh)

bench_setup() {
	B=$(mktemp -d /tmp/perfmapd-bench.XXXXXX) || exit 1
	trap 'rm -rf "$B"' EXIT
	cc -O2 -o "$B/execstorm" tests/bench/execstorm.c &&
	cc -O0 -fno-omit-frame-pointer -o "$B/spin" tests/progs/spin.c || exit 1
}

bench_warm() {
	"$1" -f -c "$B/conf" --state-dir "$B/state" --socket "$B/sock" > "$B/log" 2>&1 &
	_w=$!
	sleep 5
	kill -INT $_w
	wait $_w
}

bench_rounds() {
	_rc=0 _n=0
	for _r in $(seq 1 "$RUNS"); do
		for _p in $BUILDS; do
			_n=$((_n + 1))
			"$1" "$_p" "$_n" || _rc=1
		done
	done
	return $_rc
}

start_collector() {
	case $1 in
	perf)
		perf record -q -a -g -F "$FREQ" -o "$2/perf.data" > "$2/log" 2>&1 &
		pid=$!;;
	*)
		_bin=$PERFMAPD
		[ "$1" = before ] && _bin=$BEFORE
		printf '[record]\nbuildid_mode = userspace\nfrequency = %s\n%s\n' "$FREQ" "$3" \
			> "$2/conf"
		"$_bin" -f -c "$2/conf" --state-dir "$2/state" --socket "$2/sock" > "$2/log" 2>&1 &
		pid=$!;;
	esac
}
