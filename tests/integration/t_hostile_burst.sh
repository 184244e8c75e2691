#!/bin/sh
# Adversarial: calls sent in bursts on the control socket.  With
# public_queries on, two users each keep 16 connections full of Status
# calls (a few thousand per write, the replies read).  Other users'
# clients run at a lower priority of the loop, which looks for root's
# events and the rings' after each callback: before, one callback took
# every whole call in a connection's input (until 256 KiB of replies
# waited), so root's ping and the rings' drain waited for a hundred
# Status calls at a time.  Now another user's client gets one call per
# callback.  Root's ping is answered within 100 ms throughout and its p99
# within 4 ms (it was 6-10 ms), nothing is lost, and the users' calls are
# still answered.
. tests/lib.sh
. tests/hostile/lib.sh
hostile_start
build_hostile flood
new_user B b

start_daemon "[daemon]
public_queries = yes
[record]
frequency = 499
drain_interval = 50ms
[segments]
rotate_age = 1s"
S=$T/control.sock
"$T/spin" 0.3
# Segments (every second): something for Status to count.  Not every
# 200 ms: each rotation closes a segment and writes the host's start state
# into the next from the loop (the open alone 0.5-1.3 ms here, with ~100
# processes; the CI's host had 480 and 1,800 maps with the other lane's
# tests), time in which a ping waits too, and not what is judged below:
# served p99 4.63 ms once in CI, with rotations five times a second.
sleep 2
start_pinger
pids=""
for u in "$A" "$B"; do
	as_user "$u" "$T/flood" "$S" burst 6 16 > "$T/burst-$u.out" 2>&1 &
	pids="$pids $!"
done
wait $pids
cat "$T"/burst-*.out | sed 's/^/   /'
for u in "$A" "$B"; do
	read -r _ sent _ _ replies _ < "$T/burst-$u.out" || fail "the bursts of $u did not run"
	[ "$replies" -ge 1000 ] || fail "$u: $replies replies to $sent calls: the attack did not run"
done
hostile_judge
line=$(cat "$T/pinger.out")
# A batch of a hundred Status calls between two looks for root's events
# put root's p99 at 6-10 ms on the machine this was written on; one call
# per callback, at 0.4-0.9 ms.  The time the pinger and the daemon's loop
# waited for a CPU during a ping (another program's doing, on a busy
# machine of two CPUs: the flood's 32 connections, the CI's builds beside
# the tests) is not the daemon's: the p99 of what is left of each ping
# (the pinger's served_p99_ms) must be within 4 ms.  (Before, the p99 less
# the loop's longest wait: the pinger's own wait of 6.7 ms put it at
# 10.2 - 1.6 ms once on the CI.)  Not judged under the sanitizers.
p99=$(echo "$line" | sed -n 's/.* p99_ms \([0-9.]*\) .*/\1/p')
sp99=$(echo "$line" | sed -n 's/.* served_p99_ms \([0-9.]*\) .*/\1/p')
[ -n "$p99" ] && [ -n "$sp99" ] || fail "no p99 or served_p99_ms in the pinger's line: $line"
sanitized || awk -v p="$sp99" 'BEGIN { exit !(p <= 4) }' ||
	fail "root's ping p99 $p99 ms, $sp99 ms less the CPU waits, under the bursts: other users' calls taken in batches?"
stop_daemon
echo "PASS: root's ping within 100 ms (p99 $p99 ms) while two users burst Status calls on 32 connections"
