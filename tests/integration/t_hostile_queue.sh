#!/bin/sh
# Adversarial: the query queue.  With public_queries on, a user connects,
# asks for a history and leaves 2 ms later without the reply, in a loop,
# from twelve processes.  A query outlives the client that left it, and the
# queue held 64 for everyone, so where queries are slow (a large index)
# such a user kept root's and everyone else's out ("64 queries waiting").
# Now root and the control group have a queue of their own, and each other
# user at most QUERIER_MAX_USER_JOBS (8) waiting.  On a test host's small
# index the query thread keeps up with the attack (the old queue passed
# this too); what the test holds is that root's history and a second
# user's are answered throughout, and the daemon records on.
. tests/lib.sh
. tests/hostile/lib.sh
hostile_start
build_hostile flood
new_user B b

start_daemon "[daemon]
public_queries = yes
[record]
frequency = 99
drain_interval = 50ms"
S=$T/control.sock
ctl() { "$PERFMAPCTL" -s "$S" "$@"; }
"$T/spin" 0.3
sleep 1
ctl history "$T/spin" > /dev/null || fail "root's history before the attack"
pids=""
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
	as_user "$A" "$T/flood" "$S" leave 6 "$T/spin" > "$T/leave-$i.out" 2>&1 &
	pids="$pids $!"
done
sleep 1
n=0 refused=0 brefused=0
end=$(( $(date +%s) + 4 ))
while [ "$(date +%s)" -lt "$end" ]; do
	n=$((n + 1))
	ctl history "$T/spin" > "$T/root.out" 2>&1 ||
		{ refused=$((refused + 1)); cp "$T/root.out" "$T/root.refused"; }
	as_user "$B" "$PERFMAPCTL" -s "$S" history "$T/spin" > "$T/b.out" 2>&1 ||
		{ brefused=$((brefused + 1)); cp "$T/b.out" "$T/b.refused"; }
done
wait $pids
cat "$T"/leave-*.out | sed 's/^/   /'
sent=$(cat "$T"/leave-*.out | awk '{ s += $2 } END { print s + 0 }')
note "$sent calls left behind by $A; root: $n histories, $refused refused; $B: $brefused refused"
[ "$sent" -ge 10000 ] || fail "the attack sent $sent calls: too few to fill any queue, the test proves nothing"
[ "$refused" -eq 0 ] || fail "root's history refused while another user left queries behind: $(cat "$T/root.refused")"
[ "$brefused" -eq 0 ] || fail "$B's history refused while $A left queries behind: $(cat "$T/b.refused")"
ctl history "$T/spin" > /dev/null || fail "root's history after the attack"
no_loss
stop_daemon
echo "PASS: root's and another user's queries answered while a user left queries behind"
