#!/bin/sh
# Adversarial: a FIFO renamed onto a mapped path (issue 16, "Stall").  A
# user maps a file and exits, then renames a FIFO onto its path before the
# daemon reads the mapping's build-id (buildid_mode = userspace: the
# daemon reads every build-id itself).  A daemon that opens the path by
# name on its event loop blocks there: root's ping times out, records are
# lost.  Root's ping must be answered within 100 ms throughout, nothing
# lost, and the mapping left unresolved (counted), never read from the
# FIFO.
# test-lane: beside (tests/run-tests.sh: light; root's ping within 100 ms, at most 10 ms seen beside others)
. tests/lib.sh
. tests/hostile/lib.sh
hostile_start

build_hostile mapexec

start_daemon "[record]
buildid_mode = userspace
frequency = 499
drain_interval = 1s"
sleep 1.2
start_pinger
for i in 1 2 3 4 5; do
	as_user "$A" sh -c "cp '$T/spin' '$H/f$i' && '$T/mapexec' 0 '$H/f$i' &&
		mkfifo '$H/fifo$i' && mv -f '$H/fifo$i' '$H/f$i'" || fail "the attack did not run"
	sleep 0.3
done
sleep 2
hostile_judge
stop_daemon
echo "PASS: a FIFO on a mapped path stalls nothing"
