#!/bin/sh
# Adversarial: the build-id reads (issue 16, "Exhaust").  The loop holds
# up to 4,096 requests (files) waiting for reads; a mapping that would need
# one more is answered "busy".  A user who maps 8,000 new files of their
# own in a burst (made beforehand, then opened and mapped in a loop: tens
# of milliseconds) took all of them, and a new program another user mapped
# meanwhile was "busy" (unknown).  Now, past an eighth of the bound, a
# mapping is charged to its process's user, and a user other than root
# holds at most a quarter: the attacker's mappings beyond it are cut
# (user_full), and the other user's program, a binary new to the daemon
# mapped three quarters through the burst on the same CPU (so that its
# record is among the burst's in one side-band ring), is read and known:
# the user's requests past RESOLVER_USER_BACK wait at the back of the
# reads' queue.  (Under the sanitizers a read may still time out behind
# the first ones; never "busy".)
# (buildid_mode = userspace: on a kernel that gives build-ids in its
# records nothing is read, and nothing waits.)
. tests/lib.sh
. tests/hostile/lib.sh
hostile_start
command -v taskset >/dev/null 2>&1 || skip "taskset is not installed (util-linux)"
new_user B b
HB=$(user_home "$B")
build_hostile mapmany
ROUNDS=3
cc -O0 -o "$T/victim" tests/progs/spin.c $(unique_buildid) || fail "cannot build the victim"
chmod 0755 "$T/victim"
VID=$(readelf_buildid "$T/victim")

start_daemon "[record]
buildid_mode = userspace
frequency = 99
ring_size = 2M"
sleep 1
S=$T/control.sock
full0=$(counter buildid_reads.user_full)
for i in $(seq 1 $ROUNDS); do
	# fresh files each round (new inodes: read again), and a fresh copy of
	# the victim's binary
	as_user "$A" mkdir "$H/f$i" || fail "A's directory"
	as_user "$B" cp "$T/victim" "$HB/victim$i" || fail "B's copy of the victim"
	as_user "$A" taskset -c 0 "$T/mapmany" "$H/f$i" 8000 "$T/go$i" "$H/done$i" 1 &
	a=$!
	as_user "$B" taskset -c 0 "$T/mapmany" -w "$H/done$i" "$HB/victim$i" 0.5 &
	b=$!
	BG_PIDS="$a $b"		# killed if the test fails before the waits
	for _ in $(seq 1 100); do
		[ -e "$H/f$i/7999" ] && break
		sleep 0.1
	done
	sleep 0.2
	touch "$T/go$i"
	wait "$a" || fail "A's burst did not run"
	wait "$b" || fail "B's program did not run"
	BG_PIDS=""
	rm -rf "$H/f$i"
done
# victim$i known: its row in the index (an unknown mapping leaves none: "not
# in the index"); looked for up to 5 s (the index commits a second apart,
# later under the sanitizers beside the other lane)
victim_known() {
	for _ in $(seq 1 50); do
		h=$("$PERFMAPCTL" -s "$S" --json history "$HB/victim$1" 2>&1) || h='{"objects":[]}'"; $h"
		echo "${h%%; *}" | jq -e --arg id "$VID" '[.objects[] | select(.build_id == $id)] | length > 0' \
			> /dev/null && return 0
		sleep 0.1
	done
	return 1
}
known=0
for i in $(seq 1 $ROUNDS); do
	if victim_known "$i"; then
		known=$((known + 1))
	else
		why=$(grep "build-id of $HB/victim$i (pid" "$T/daemon.log" | sed -n 's/.* unknown: //p' | head -n 1)
		note "B's victim$i during A's burst: not known (${why:-?}): $(echo "${h%%; *}" | jq -c '[.objects[] | [.build_id, .first_seen_ns]]' 2>/dev/null | cut -c1-200) $(echo "$h" | sed -n 's/^[^{]*; //p' | cut -c1-160)"
		[ "$why" != busy ] || fail "B's new program, mapped during A's burst, is \"busy\": A took every read"
		sanitized && [ "$why" = timeout ] && known=$((known + 1))
		:
	fi
done
note "B's program mapped during A's burst: known $known of $ROUNDS times"
[ "$known" = "$ROUNDS" ] || fail "B's new program, mapped during A's burst, is unknown $((ROUNDS - known)) of $ROUNDS times"
full=$(( $(counter buildid_reads.user_full) - full0 ))
busy=$(counter counters.buildid_unknown.busy)
note "$ROUNDS bursts of 8,000 new files by A: $full mappings over A's share (user_full), $busy busy in all"
figure user_full "$full"
[ "$full" -gt 0 ] || fail "no mapping of A's was over A's share: the burst never filled it, the test proves nothing"
"$PERFMAPCTL" -s "$S" ping > /dev/null || fail "root's ping"
stop_daemon
echo "PASS: a user's burst of new files takes their share of the reads, not everyone's"
