#!/bin/sh
# Adversarial: a message sent a byte at a time.  With public_queries on, a
# user holds 16 connections, each sending one long message a byte per
# write and never ending it.  Before, the loop read every byte as it came
# and gathered and searched the whole message so far at each: a core of
# CPU for one user (7.8 s in 8 s).  Now another user's unfinished message
# is read again 50 ms later, all that came at once (the kernel's socket
# buffer holds back the sender meanwhile), and only the bytes not yet
# searched are searched.  The daemon's CPU over the attack stays low,
# root's ping is answered within 100 ms, nothing is lost, and an honest
# slow client (a call in two halves, 50 ms apart) is answered.
. tests/lib.sh
. tests/hostile/lib.sh
hostile_start
build_hostile flood

start_daemon "[daemon]
public_queries = yes
[record]
frequency = 499
drain_interval = 50ms"
S=$T/control.sock
sleep 0.5
start_pinger
cpu0=$(awk '{ print $14 + $15 }' "/proc/$DAEMON_PID/stat")
as_user "$A" "$T/flood" "$S" trickle 8 16 > "$T/trickle.out" 2>&1 || fail "the trickle did not run"
cpu1=$(awk '{ print $14 + $15 }' "/proc/$DAEMON_PID/stat")
cat "$T/trickle.out" | sed 's/^/   /'
read -r _ bytes _ < "$T/trickle.out" && [ "$bytes" -gt 0 ] || fail "the trickle did not run"
tck=$(getconf CLK_TCK)
ms=$(( (cpu1 - cpu0) * 1000 / tck ))
note "the daemon's CPU over the 8 s of the trickle: $ms ms ($bytes bytes)"
figure daemon_cpu_ms "$ms"
sleep 0.5	# the trickle's connections closed: room for A's next ones
as_user "$A" "$T/flood" "$S" halves 10 5 > "$T/halves.out" 2>&1
cat "$T/halves.out" | sed 's/^/   /'
grep -q "^halves: 5 of 5 answered" "$T/halves.out" || fail "a call sent in two halves went unanswered"
hostile_judge
sanitized || [ "$ms" -lt 3000 ] || fail "the daemon spent $ms ms of CPU on 8 s of trickled bytes"
stop_daemon
echo "PASS: $bytes bytes trickled on 16 connections cost the daemon $ms ms of CPU in 8 s; root's ping within 100 ms"
