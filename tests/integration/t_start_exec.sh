#!/bin/sh
# A process that execs after the daemon's events began but before the
# start-up /proc scan reads it (a scan of seconds on a big host): the
# scan sees the new image, and the first segment's start state, dated
# when the events began, said the new image was mapped then, so the old
# image's samples of that time were read against it: another program's
# functions, where the two share addresses (non-PIE).  Such a process's
# start state is dated when the scan read it; its old image's samples
# before then have no map (unknown, not wrong).
# Here: a big host in miniature (300 x 200 maps: a scan of a second or
# more), then pm-swap1, spinning in pm_swap_one, made to exec pm-swap2
# (pm_swap_two at the same address) as soon as the daemon says its events
# are on.  Judged with perf script on the first segment: no sample of
# pm-swap1's time (its own clock, CLOCK_MONOTONIC, as the segments')
# named pm_swap_two, and pm-swap2's samples resolved; a child forked just
# before the exec is not given the new image's maps.
. tests/lib.sh
need_events
need_perf
start_manymaps 300 200
for i in 1 2; do
	cc -O0 -g -fno-omit-frame-pointer -fno-pie -no-pie -DIMAGE=$i -o "$T/pm-swap$i" \
		"$TOP/tests/progs/swapexec.c" || fail "cannot build tests/progs/swapexec.c"
done
a1=$(nm "$T/pm-swap1" | sed -n 's/ T pm_swap_one$//p')
a2=$(nm "$T/pm-swap2" | sed -n 's/ T pm_swap_two$//p')
[ -n "$a1" ] && [ "$a1" = "$a2" ] || fail "pm_swap_one ($a1) and pm_swap_two ($a2) are not at one address"
"$T/pm-swap1" "$T/pm-swap2" fork > "$T/swap.out" &
SW=$!
BG_PIDS="$BG_PIDS $SW"
for _ in $(seq 1 100); do grep -q '^ready' "$T/swap.out" && break; sleep 0.05; done
grep -q '^ready' "$T/swap.out" || fail "pm-swap1 did not start"
# the exec: 0.2 s after the events are on, while the scan reads manymaps' processes (older pids)
(
	for _ in $(seq 1 1000); do
		grep -q "events on; reading the processes' state" "$T/daemon.log" 2>/dev/null && break
		sleep 0.01
	done
	sleep 0.2	# samples of the old image after the events began
	kill -USR1 $SW
) &
W=$!
start_daemon "[record]
frequency = 999
[segments]
rotate_age = 10m"
wait $W
sleep 0.5	# pm-swap2's samples, with the daemon's loop running
kill -USR1 $SW
wait $SW || fail "pm-swap failed: $(cat "$T/swap.out")"
# the child spins until killed: the scan of a slow host took 8 s (a child
# of 8 s had ended before the next segment began)
CH=$(sed -n 's/^child //p' "$T/swap.out")
BG_PIDS="$BG_PIDS $CH"
"$PERFMAPCTL" -s "$T/control.sock" snapshot > /dev/null || fail "snapshot"
# the forked child spins on in the next segment, once it is open (its
# start state of 60k maps takes seconds under a sanitizer)
for _ in $(seq 1 300); do grep -q 'opened .*perf-000002' "$T/daemon.log" && break; sleep 0.1; done
sleep 1
BG_PIDS="$MM $CH"
stop_daemon
[ -n "$CH" ] && kill "$CH" 2>/dev/null
kill $MM; wait $MM
BG_PIDS=""
grep 'executable maps at start\|changed during the /proc scan' "$T/daemon.log" | sed 's/^/  /'
xns=$(sed -n 's/^exec //p' "$T/swap.out")
[ -n "$xns" ] || fail "pm-swap1 did not exec: $(cat "$T/swap.out")"
seg=$(segments | head -n 1)
[ -n "$seg" ] || fail "no segment"
# The test proves something only if the scan read the process after its
# exec: the start state (the records before FINISHED_INIT in the file)
# maps pm-swap2.  perf report -D: "TIME OFFSET [SIZE]: TYPE ...".
perf report -D -i "$seg" 2>/dev/null > "$T/dump"
init=$(sed -n 's/^[0-9]* [0-9]* \(0x[0-9a-f]*\) .*PERF_RECORD_FINISHED_INIT.*/\1/p' "$T/dump" | head -n 1)
[ -n "$init" ] || fail "no FINISHED_INIT in $(basename "$seg")"
start=$(sed -n "s/^[0-9]* [0-9]* \(0x[0-9a-f]*\) .*PERF_RECORD_MMAP2 $SW\/$SW:.*pm-swap\([12]\)\$/\1 \2/p" "$T/dump" |
	while read -r off img; do [ $((off)) -lt $((init)) ] && echo "$img"; done | head -n 1)
[ "$start" = 2 ] || fail "the start state does not map pm-swap2 (${start:-nothing} of pm-swap): the scan did not read it after its exec"
# one "NS SYMBOL" line per sample of pm-swap (its sampled frame)
perf --buildid-dir "$T/state/debug" script --ns -i "$seg" --pid $SW -F time,ip,sym \
	> "$T/script.out" 2>/dev/null || fail "perf script failed on $seg"
awk '/^ *[0-9]+\.[0-9]+: *$/ { t = $1; sub(/:$/, "", t); sub(/\./, "", t); next }
	t != "" && NF >= 2 { print t, $2; t = "" }' "$T/script.out" > "$T/samples"
before=$(awk -v x="$xns" '$1 < x' "$T/samples" | wc -l)
wrong=$(awk -v x="$xns" '$1 < x && $2 == "pm_swap_two"' "$T/samples" | wc -l)
after=$(awk -v x="$xns" '$1 > x && $2 == "pm_swap_two"' "$T/samples" | wc -l)
note "pm-swap1's samples in the segment: $before ($wrong named pm_swap_two); pm-swap2's named: $after"
[ "$before" -ge 10 ] || fail "only $before samples of pm-swap1 after the events began: the test proves nothing"
[ "$wrong" = 0 ] || fail "$wrong of pm-swap1's samples were read against pm-swap2 (pm_swap_two)"
[ "$after" -ge 200 ] || fail "only $after of pm-swap2's samples resolved to pm_swap_two"
# The child pm-swap1 forked just before its exec spins on in pm_swap_one,
# a process the scan did not read (it began after the scan's listing of
# /proc): the model made it from its parent as the scan had read it, the
# new image, and the next segment's start state said the child mapped
# pm-swap2 (its samples named pm_swap_two).  Its maps are not known now.
[ -n "$CH" ] || fail "pm-swap1 did not fork"
seg2=$(segments | sed -n 2p)
[ -n "$seg2" ] || fail "no second segment"
n2=$(perf report -D -i "$seg2" 2>/dev/null | grep -c "PERF_RECORD_SAMPLE.*: $CH/$CH:")
cwrong=$(for s in "$seg" "$seg2"; do
	perf --buildid-dir "$T/state/debug" script -i "$s" --pid "$CH" -F ip,sym 2>/dev/null
done | grep -c pm_swap_two)
note "the forked child: $n2 samples in the next segment, $cwrong named pm_swap_two"
[ "$n2" -ge 200 ] || fail "only $n2 samples of the forked child in the next segment: the test proves nothing"
[ "$cwrong" = 0 ] || fail "$cwrong of the forked child's samples were read against pm-swap2"
echo "PASS: a process changed before the scan read it: none of its old image's samples read against the new"
