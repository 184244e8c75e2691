#!/bin/sh
# Adversarial: a FIFO renamed onto a mapped path (issue 16, "Stall").  A
# user maps a file and exits, then renames a FIFO onto its path before the
# daemon reads the mapping's build-id (buildid_mode = userspace: the
# daemon reads every build-id itself).  A daemon that opens the path by
# name on its event loop blocks there: root's ping times out, records are
# lost.  Root's ping must be answered within 100 ms throughout, nothing
# lost, and the mapping left unresolved (counted), never read from the
# FIFO.
. tests/lib.sh
. tests/hostile/lib.sh
need_events
need_useradd
command -v jq >/dev/null 2>&1 || skip "jq is not installed"

A=$(new_user a)
H=$(user_home "$A")
build_hostile mapexec
build_prog spin
chmod 0755 "$T/spin"

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
line=$(stop_pinger)
note "ping under attack: $line"
figure ping "$line"
ping_ok "$line"
no_loss
stop_daemon
echo "PASS: a FIFO on a mapped path stalls nothing"
