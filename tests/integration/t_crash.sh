#!/bin/sh
# kill -9 at random moments: each restart repairs the torn segment (records
# up to the last whole one, build-id table rebuilt), and perf reads every
# segment, including the repaired ones.
. tests/lib.sh
need_events
need_perf

ROUNDS=${CRASH_ROUNDS:-8}	# 12 took 47 s and 84 s of CPU in CI; more: CRASH_ROUNDS
build_prog spin
cp "$T/spin" "$T/pm-spin"
"$T/pm-spin" 60 & BG_PIDS="$!"
want=$(readelf_buildid "$T/pm-spin")

i=0 torn=0
while [ $i -lt "$ROUNDS" ]; do
	i=$((i + 1))
	start_daemon "[record]
drain_interval = 250ms
[segments]
rotate_age = 1s"
	# 0.3 .. 1.6 s: in the first segment or the second, sometimes right
	# around the rotation between them
	sleep "$(awk -v s="$(od -An -N2 -tu2 /dev/urandom)" 'BEGIN { printf "%.2f", 0.3 + (s % 130) / 100 }')"
	kill -9 "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=""
	# killed between one segment's close and the next one's open (a
	# rotation, longer on a loaded machine) leaves nothing torn: nothing
	# to repair then
	if ls "$T/state/segments/" | grep -q '\.partial$'; then
		torn=$((torn + 1)) last=1
	else
		note "round $i: killed between two segments: none torn"
		last=0
	fi
done
[ "$torn" -ge $((ROUNDS / 2)) ] || fail "only $torn of $ROUNDS kills left a torn segment"
start_daemon "[segments]
rotate_age = 1s"
sleep 1
stop_daemon
grep -c 'repaired' "$T/daemon.log" | grep -q "^$last\$" || { cat "$T/daemon.log"; fail "the last torn segment was not repaired"; }
ls "$T/state/segments/" | grep -q '\.partial$' && fail "a .partial segment is left"

repaired=0 with_samples=0
for seg in $(segments); do
	out=$(perf report -i "$seg" --stdio --no-children --comm pm-spin --sort sym 2>&1) ||
		fail "perf report failed on $seg: $out"
	if perf report --header-only -i "$seg" 2>/dev/null | grep -q 'repaired'; then
		repaired=$((repaired + 1))
		echo "$out" | grep -q pm_spin_inner && with_samples=$((with_samples + 1))
		perf buildid-list -i "$seg" 2>/dev/null | grep -q "^$want " ||
			fail "repaired $seg: pm-spin's build-id missing from the table"
		# repaired this boot: the machine described (perf 6.1 crashes without CPUDESC/CPUID)
		perf report --header-only -I -i "$seg" 2>/dev/null | grep -q '^# CPU 0: Core ID' ||
			fail "repaired $seg: no CPU topology in its header"
		rm -f "$T/j.json"
		perf data convert --to-json "$T/j.json" -i "$seg" >/dev/null 2>&1 ||
			fail "repaired $seg: perf data convert --to-json failed"
	fi
done
[ "$repaired" -eq "$torn" ] || fail "$repaired repaired segments, expected $torn"
# What was still in the rings or in the write buffer dies with the process
# (at most one drain interval); the rest must be there.
[ "$with_samples" -ge 1 ] || fail "no repaired segment kept pm-spin samples"

# A power loss with [segments] sync = no (the default): the last segment
# closed before it has its final name, but its data never reached the disk
# (here: cut in half, and dated before this boot, as it would be).
seg=$(segments | tail -n 1)
size=$(stat -c %s "$seg")
truncate -s $((size / 2)) "$seg"
btime=$(awk '/^btime/ { print $2 }' /proc/stat)
touch -d "@$((btime - 10))" "$seg"
# perf reads it whole: exits 0 without stopping at a record it cannot process
perf_reads() {
	out=$(perf report -i "$1" --stdio 2>&1) && ! echo "$out" | grep -q 'failed to process'
}
# on the cut one, perf stops at the cut ("failed to process") or dies of SIGBUS
perf_reads "$seg" && fail "perf reads the cut segment without complaint: the test proves nothing"
start_daemon ""
sleep 0.5
stop_daemon
grep -q "$(basename "$seg"): unreadable after a power loss: repairing it" "$T/daemon.log" ||
	{ cat "$T/daemon.log"; fail "the incomplete segment was not noticed at start"; }
# (the records up to the cut are kept: perhaps only the initial state, no sample)
perf_reads "$seg" || fail "the segment cut by a power loss was not repaired: $(echo "$out" | head -3)"
perf report --header-only -i "$seg" 2>/dev/null | grep -q 'repaired' || fail "$seg: not marked repaired"
# written before this boot: its CPU model, not a topology this boot cannot vouch for
hdr=$(perf report --header-only -I -i "$seg" 2>/dev/null)
echo "$hdr" | grep -q '^# cpudesc : ' || fail "$seg: no CPU description"
echo "$hdr" | grep -q '^# CPU 0: Core ID' && fail "$seg: a topology from another boot"
rm -f "$T/j.json"
perf data convert --to-json "$T/j.json" -i "$seg" >/dev/null 2>&1 || fail "$seg: perf data convert --to-json failed"

# A power loss that kept none of a segment's records: perf refuses a
# perf.data without data, so there is nothing to repair it to.  It is
# removed, once, and said so.
seg=$(segments | tail -n 1)
off=$(od -An -j40 -N8 -tu8 "$seg" | tr -d ' ')	# perf_file_header.data.offset
truncate -s "$off" "$seg"
touch -d "@$((btime - 10))" "$seg"
start_daemon ""
sleep 0.5
stop_daemon
grep -q "$(basename "$seg"): unreadable after a power loss: repairing it" "$T/daemon.log" ||
	{ cat "$T/daemon.log"; fail "the segment with no records was not noticed at start"; }
grep -q "$(basename "$seg").partial: not one whole record to keep: removed" "$T/daemon.log" ||
	{ cat "$T/daemon.log"; fail "the segment with no records was not removed"; }
ls "$seg" "$seg.partial" 2>/dev/null && fail "the segment with no records is still there"
for s in $(segments); do
	perf_reads "$s" || fail "$s does not read after the restarts: $(echo "$out" | head -3)"
done
echo "PASS: $ROUNDS crashes ($torn mid-segment), $repaired segments repaired and readable, $with_samples with pm-spin samples; a segment cut by a power loss repaired at start, one with no record removed"
