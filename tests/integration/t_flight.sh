#!/bin/sh
# The flight recorder ([segments] mode = flight), real daemon, real perf:
# - nothing is written to STATE/segments until a snapshot;
# - a snapshot is one segment perf reads: the last window (flight_age),
#   the recent phase of a workload with its symbols resolved from the
#   build-id cache (the binaries deleted), nothing of the phase before a
#   pause longer than the window, no sample stamped before the window's
#   start (perf script's ns times), which is flight_age before the
#   snapshot;
# - the window's start state: a process that began before the window and
#   still runs (its MMAP records aged out of the buffer; the model knows
#   them), and one that began before the window and exited inside it (its
#   state kept when it ended), both with their symbols;
# - its build-id table lists what the window references (readelf's ids),
#   not what ran before it;
# - the index has the segment and which binaries each snapshot references
#   (not one mapped after it); a second snapshot follows the first without
#   overlap; the daemon goes on recording; a stop writes nothing;
# - an exec inside the window, of a process that began before it, its new
#   image mapped where the old one was: both images' samples resolved;
# - memory: under a fast workload (high frequency, an exec storm) the
#   buffer turns over (records dropped, counted), holds no more than
#   flight_size, and the daemon's RSS stays under its RSS before the
#   workload + flight_size + a margin; SIGUSR2 snapshots too;
# - keep_count holds over the snapshots.
. tests/lib.sh
need_events
need_perf
command -v jq >/dev/null 2>&1 || fail "jq is not installed (tests/deps.sh)"

for v in old new mid dep late; do
	build_prog spin "-DSPIN_NAME=$v"
	mv "$T/spin" "$T/pm-$v"
	eval "ID_$v=\$(readelf_buildid \"\$T/pm-\$v\")"
done
ctl() { "$PERFMAPCTL" --socket "$T/control.sock" "$@"; }

# ---- the window ----------------------------------------------------------
WINDOW=3
start_daemon "[record]
frequency = 499
[segments]
mode = flight
flight_age = ${WINDOW}s
flight_size = 16M"
grep -q 'flight recorder' "$T/daemon.log" || fail "no flight recorder line in the log"

"$T/pm-mid" 13 & MID=$!
"$T/pm-dep" 8 & DEP=$!
BG_PIDS="$MID $DEP"
"$T/pm-old" 2			# the phase before the pause
sleep $((WINDOW + 1))		# a pause longer than the window
[ -z "$(segments)" ] || fail "a segment was written before any snapshot: $(segments)"
"$T/pm-new" 2			# the recent phase; pm-dep exits in the window too
wait "$DEP" || fail "pm-dep failed"
sleep 0.5
[ -z "$(segments)" ] || fail "a segment was written before any snapshot: $(segments)"
ls "$T/state/segments/" | grep -q partial && fail "a .partial segment in flight mode"

before=$(date +%s%N)
seg=$(ctl snapshot) || { cat "$T/daemon.log"; fail "snapshot failed"; }
after=$(date +%s%N)
[ -f "$seg" ] || fail "snapshot printed '$seg', not a file"
set -- $(segments)
[ $# -eq 1 ] || fail "expected one segment after the snapshot, got $#"
note "snapshot: $seg"
# A second snapshot, within the window: it begins where the first ended.
s1=$(ctl --json status | jq .counters.samples)
"$T/pm-late" 0.3
sleep 1.2
seg2=$(ctl snapshot) || fail "second snapshot failed"
[ "$seg2" != "$seg" ] && [ -f "$seg2" ] || fail "second snapshot: '$seg2'"
s2=$(ctl --json status | jq .counters.samples)
[ "$s2" -gt "$s1" ] || fail "not recording after the snapshot ($s1 -> $s2 samples)"

# The build-id table: what the window references, with readelf's ids, and
# not the phase before it.
perf buildid-list -i "$seg" > "$T/bids" 2>/dev/null || fail "perf buildid-list failed"
for v in new mid dep; do
	eval "id=\$ID_$v"
	grep -q "^$id $T/pm-$v\$" "$T/bids" || { cat "$T/bids"; fail "pm-$v's build-id $id not listed"; }
done
grep -q "^$ID_old " "$T/bids" && fail "pm-old (before the window) is in the build-id table"
# The binaries are gone: perf finds them in the build-id cache.
rm -f "$T/pm-old" "$T/pm-new" "$T/pm-mid" "$T/pm-dep" "$T/pm-late"
rep=$(perf --buildid-dir "$T/state/debug" report -i "$seg" --stdio --no-children \
	--sort comm,sym 2>&1) || fail "perf report failed: $rep"
for f in pm_new_inner pm_mid_inner pm_dep_inner; do
	echo "$rep" | grep -q "$f" || { echo "$rep" | head -40; fail "no $f in the snapshot"; }
done
echo "$rep" | grep -q 'pm_old' && { echo "$rep" | grep pm_old; fail "the phase before the window is in the snapshot"; }
# pm-mid's and pm-dep's samples resolved, not [unknown] (their maps: start state)
for c in pm-mid pm-dep pm-new; do
	unk=$(echo "$rep" | awk -v c="$c" '$2 == c && /\[unknown\]/ { s += $1 } END { print s + 0 }')
	awk -v u="$unk" 'BEGIN { exit !(u < 5) }' ||
		{ echo "$rep" | grep "$c"; fail "$c: $unk% of its samples unresolved"; }
done
scr=$(perf --buildid-dir "$T/state/debug" script -i "$seg" -F comm,ip,sym 2>&1) ||
	fail "perf script failed"
echo "$scr" | grep -A3 '^ *pm-new' | grep -q 'pm_new_outer' ||
	fail "no pm-new call chain through pm_new_outer"

# Times: no sample before the window's start; the window is flight_age
# long and ends at the snapshot (the index's wall times).
t0=$(seg_cut "$seg" | tr -d .)
[ -n "$t0" ] || fail "no CLOCK_DATA reference in the snapshot"
perf script -i "$seg" -F time --ns 2>/dev/null | tr -d ' :.' | sort -n > "$T/times"
[ -s "$T/times" ] || fail "no sample times"
min=$(head -1 "$T/times")
note "window start $t0 ns, first sample $min ns, $(wc -l < "$T/times") samples"
[ "$min" -ge "$t0" ] || fail "a sample at $min ns, before the window's start $t0"
ctl --json segments > "$T/segs.json" || fail "segments"
first=$(basename "$seg")
span=$(jq -r --arg n "$first" '.segments[] | select(.name == $n) | .end_ns - .start_ns' "$T/segs.json")
end=$(jq -r --arg n "$first" '.segments[] | select(.name == $n) | .end_ns' "$T/segs.json")
note "window $span ns, ends $end (snapshot asked between $before and $after)"
[ "$span" -le $((WINDOW * 1000000000)) ] || fail "the window spans $span ns, more than ${WINDOW}s"
[ "$span" -ge $((WINDOW * 1000000000 - 100000000)) ] || fail "the window spans only $span ns"
[ "$end" -ge $((before - 1000000000)) ] && [ "$end" -le "$after" ] ||
	fail "the window ends at $end, not at the snapshot ($before..$after)"
jq -e --arg n "$first" '.segments[] | select(.name == $n) | .samples > 0' "$T/segs.json" \
	>/dev/null || fail "the index row has no samples"

# The second window begins exactly where the first ended.
t1=$(seg_cut "$seg2" | tr -d .)
[ "$t1" -eq $((t0 + span)) ] || fail "the second window starts at $t1, not where the first ended ($((t0 + span)))"
rep=$(perf --buildid-dir "$T/state/debug" report -i "$seg2" --stdio --no-children --sort sym 2>&1) ||
	fail "perf report failed on the second snapshot"
echo "$rep" | grep -q pm_mid_inner || { echo "$rep" | head -30; fail "second snapshot: no pm_mid_inner"; }
echo "$rep" | grep -q pm_new_inner && fail "second snapshot holds the first one's phase"
kill "$MID" 2>/dev/null
BG_PIDS=""

# The index: which snapshot references which binary (as rotation's segments).
sleep 1.5	# the index's commit interval
segs_of() { ctl --json buildid "$1" | jq -r '.segments[]?.path' | sort; }
segs_of "$ID_new" > "$T/s.new"; segs_of "$ID_late" > "$T/s.late"; segs_of "$ID_old" > "$T/s.old"
segs_of "$ID_mid" > "$T/s.mid"; segs_of "$ID_dep" > "$T/s.dep"
grep -qx "$seg" "$T/s.new" || { cat "$T/s.new"; fail "the index does not name the first snapshot for pm-new"; }
grep -qx "$seg" "$T/s.dep" || fail "the index does not name the first snapshot for pm-dep"
grep -qx "$seg2" "$T/s.new" && fail "the index names the second snapshot for pm-new"
grep -qx "$seg2" "$T/s.late" || { cat "$T/s.late"; fail "the index does not name the second snapshot for pm-late"; }
grep -qx "$seg" "$T/s.late" && fail "the index names the first snapshot for pm-late (mapped after it)"
[ "$(wc -l < "$T/s.mid")" -eq 2 ] || { cat "$T/s.mid"; fail "pm-mid ran in both windows"; }
[ -s "$T/s.old" ] && { cat "$T/s.old"; fail "the index names a snapshot for pm-old (before the window)"; }
stop_daemon
[ "$(segments | wc -l)" -eq 2 ] || fail "the stop wrote a segment in flight mode"

# ---- an exec in the window -----------------------------------------------
# A process that began before the window execs itself inside it, without
# address randomization: the new image maps its files where the old one
# had them.  The old image's maps come from the state kept when it ended,
# and are not taken for the new image's MMAP records (which come after
# that state): its samples inside the window are resolved (before: the
# state's maps were left out as "brought by the window", and the old
# image's samples were [unknown]).
command -v setarch >/dev/null 2>&1 || fail "setarch is not installed (util-linux)"
build_prog reexec
mv "$T/reexec" "$T/pm-reexec"
rm -rf "$T/state"
start_daemon "[record]
frequency = 999
[segments]
mode = flight
flight_age = 2s"
setarch "$(uname -m)" -R "$T/pm-reexec" 3 1 || fail "pm-reexec failed"
seg=$(ctl snapshot) || fail "snapshot of the exec"
rep=$(perf --buildid-dir "$T/state/debug" report -i "$seg" --stdio --no-children \
	--comm pm-reexec --sort sym 2>&1) || fail "perf report failed: $rep"
for f in pm_reexec_before pm_reexec_after; do
	echo "$rep" | grep -q "$f" || { echo "$rep" | head -20; fail "no $f in the window of the exec"; }
done
unk=$(echo "$rep" | awk '/\[unknown\]|0x0000/ { s += $1 } END { print s + 0 }')
awk -v u="$unk" 'BEGIN { exit !(u < 5) }' ||
	{ echo "$rep" | head -20; fail "$unk% of pm-reexec's samples unresolved"; }
stop_daemon

# ---- memory --------------------------------------------------------------
SIZE_MB=4
rm -rf "$T/state"
start_daemon "[record]
frequency = 4999
[segments]
mode = flight
flight_size = ${SIZE_MB}M"
sleep 1
rss0=$(awk '/^VmRSS/ { print $2 }' /proc/$DAEMON_PID/status)
build_prog spin
"$T/spin" 10 & BG_PIDS="$!"
( end=$(( $(date +%s) + 10 )); while [ "$(date +%s)" -lt "$end" ]; do /bin/true; done ) &
BG_PIDS="$BG_PIDS $!"
# RSS under the workload, until the buffer has turned over for as long as
# it took to fill (2 s at least; 10 s in all at most)
max=0 since="" need=0
for i in $(seq 1 20); do
	sleep 0.5
	rss=$(awk '/^VmRSS/ { print $2 }' /proc/$DAEMON_PID/status)
	[ "$rss" -gt "$max" ] && max=$rss
	[ -n "$since" ] && [ $((i - since)) -ge "$need" ] && break
	[ -z "$since" ] && [ $((i % 2)) = 0 ] || continue
	ctl --json status > "$T/st.json" || fail "status"
	jq -e '.flight.dropped_records > 0' "$T/st.json" >/dev/null && since=$i need=$i
	[ "$need" -lt 4 ] && need=4
done
ctl --json status > "$T/st.json" || fail "status"
jq -c .flight "$T/st.json"
note "RSS before the workload ${rss0} kB, at most ${max} kB under it"
jq -e ".flight.size == $((SIZE_MB << 20)) and .flight.bytes <= .flight.size" "$T/st.json" \
	>/dev/null || fail "the buffer holds more than flight_size"
jq -e '.flight.dropped_records > 0' "$T/st.json" >/dev/null ||
	fail "the buffer never turned over: the workload was too slow to test the bound"
# (Under the sanitizers RSS is mostly their shadow memory and quarantine,
# not the daemon's: the buffer's own bound above is judged there too.)
case $BUILD in
*asan*|*tsan*) note "RSS not judged under the sanitizers";;
*) [ "$max" -le $((rss0 + SIZE_MB * 1024 + 8192)) ] ||
	fail "RSS grew to $max kB: more than $rss0 kB + flight_size + 8 MB";;
esac
[ -z "$(segments)" ] || fail "a segment before the snapshot"
kill -USR2 "$DAEMON_PID"
for _ in $(seq 1 50); do [ -n "$(segments)" ] && break; sleep 0.1; done
seg=$(segments)
[ -n "$seg" ] || fail "SIGUSR2 wrote no segment"
perf report -i "$seg" --stdio --no-children --sort sym 2>/dev/null | grep -q pm_spin_inner ||
	fail "SIGUSR2's snapshot: no pm_spin_inner"
kill $BG_PIDS 2>/dev/null; wait $BG_PIDS 2>/dev/null
BG_PIDS=""
stop_daemon

# ---- retention over the snapshots -----------------------------------------
# keep_count = 2: after four snapshots, the newest two are left (before,
# retention ran only at a rotation, which flight mode never has: snapshots
# piled up past keep_count, keep_size and keep_age until a reload).
rm -rf "$T/state/segments"
start_daemon "[record]
frequency = 99
[segments]
mode = flight
flight_age = 2s
keep_count = 2"
for i in 1 2 3 4; do
	eval "snap$i=\$(ctl snapshot)" || fail "snapshot $i"
done
n=$(segments | wc -l)
[ "$n" = 2 ] || { segments; fail "keep_count 2: $n snapshots left of four"; }
segments | grep -qx "$snap4" && segments | grep -qx "$snap3" ||
	{ segments; fail "keep_count 2: not the newest two snapshots left"; }
ctl --json status | jq -e '.disk.segments == 2' > /dev/null ||
	fail "status: $(ctl --json status | jq -c .disk)"
stop_daemon
echo "PASS"
