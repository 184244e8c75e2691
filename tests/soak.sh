#!/bin/sh
# make soak: a long run under an exec storm with rotation every 2 s and a
# snapshot every few seconds (plus store, where the daemon has it).  Passes
# when nothing was lost, RSS and the fd count stay flat, and the log holds
# no warning.  SOAK_SECONDS (600), SOAK_FREQ (999), SOAK_CACHE_KB (2048).
#
# RSS holds one cache that fills slowly by design: SQLite's page cache of
# the index writer, which grows with index.db (every segment adds rows) up
# to [index] cache_size.  The soak reads SQLite's share from `status` and
# checks both: RSS without it is flat, and it stays within cache_size.
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
need_events
SECS=${SOAK_SECONDS:-600}
FREQ=${SOAK_FREQ:-999}
cache_kb=${SOAK_CACHE_KB:-2048}		# the default [index] cache_size
cc -O2 -o "$T/execstorm" tests/bench/execstorm.c || fail "cannot build execstorm"

start_daemon "[record]
event = cpu-clock
frequency = $FREQ
[segments]
rotate_age = 2s
keep_count = 50
[index]
cache_size = ${cache_kb}K"
"$T/execstorm" "$SECS" 2 /bin/true > "$T/storm" & BG_PIDS=$!
has_store=$("$PERFMAPCTL" --help | grep -c '^  store')
end=$(( $(date +%s) + SECS )) t0=$(date +%s)
: > "$T/samples"
while [ "$(date +%s)" -lt "$end" ]; do
	seg=$("$PERFMAPCTL" -s "$T/control.sock" snapshot) || fail "snapshot failed"
	[ "$has_store" -gt 0 ] && { "$PERFMAPCTL" -s "$T/control.sock" store "$seg" > /dev/null ||
		fail "store failed"; }
	rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$DAEMON_PID/status")
	fds=$(ls "/proc/$DAEMON_PID/fd" | wc -l)
	sq=$("$PERFMAPCTL" -s "$T/control.sock" --json status | jq '.memory.sqlite / 1024 | floor')
	echo "$(( $(date +%s) - t0 )) $rss $fds $sq" >> "$T/samples"
	sleep 5
done
wait $BG_PIDS; BG_PIDS=""
"$PERFMAPCTL" -s "$T/control.sock" --json status > "$T/status.json"
stop_daemon
note "storm: $(cat "$T/storm")"
# after a minute of warm-up: slopes (kB/min) of RSS and of RSS without
# SQLite's memory, fd range, SQLite's largest
stats=$(awk -v w=60 '$1 >= w { n++; x += $1; y += $2; z += $2 - $4; xx += $1 * $1;
	xy += $1 * $2; xz += $1 * ($2 - $4);
	if (min == "" || $3 < min) min = $3; if ($3 > max) max = $3; last = $2;
	if ($4 > sq) sq = $4; if (sq0 == "") sq0 = $4 }
	END { d = n * xx - x * x; s = (n > 2 && d) ? 60 * (n * xy - x * y) / d : 0;
	s2 = (n > 2 && d) ? 60 * (n * xz - x * z) / d : 0;
	printf "%.1f %d %d %d %d %.1f %d %d", s, min, max, last, n, s2, sq0, sq }' "$T/samples")
set -- $stats
note "RSS slope $1 kB/min (last $4 kB); without SQLite's memory $6 kB/min;" \
	"SQLite $7..$8 kB (cache_size $cache_kb kB); fds $2..$3; $5 samples after warm-up"
grep -q '"lost": 0,' "$T/status.json" || fail "records were lost: $(grep lost "$T/status.json")"
[ "$5" -lt 3 ] || awk -v s="$6" 'BEGIN { exit !(s < 50) }' ||
	fail "RSS without SQLite's page cache grows by $6 kB/min"
# SQLite's fixed part (schema, statements, lookaside) was ~0.4 MB here
[ "$8" -le $((cache_kb + 1024)) ] || fail "SQLite holds $8 kB, more than cache_size allows"
# fds: a client's connection may still be open when the count is read (a
# loaded machine); a leak is a floor that rises: the fewest fds over the
# last ten samples against the fewest over the first ten after warm-up
floors=$(awk -v w=60 '$1 >= w { v[n++] = $3 } END {
	a = b = -1; for (i = 0; i < n && i < 10; i++) if (a < 0 || v[i] < a) a = v[i];
	for (i = n - 10; i < n; i++) if (i >= 0 && (b < 0 || v[i] < b)) b = v[i];
	print a, b }' "$T/samples")
set -- $floors
[ "$1" -lt 0 ] || [ "$2" -le $(( $1 + 2 )) ] || fail "open fds rise: at least $1 at first, $2 at the end"
bad=$(grep -Ei 'cannot|failed|error|refused|dropped|not finished|out of memory|torn|overrun|corrupt' \
	"$T/daemon.log" | grep -v 'stopped: samples=\|capture: [0-9]* build-ids seen' | head -5)
[ -z "$bad" ] || fail "trouble in the log: $bad"
echo "PASS: soak ${SECS}s"
