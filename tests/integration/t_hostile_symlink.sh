#!/bin/sh
# Adversarial: a symlink to a file the user cannot read (issue 16, "Read").
# Root has a private binary (0700, in a 0700 directory) with a marker
# string; a user who knows its build-id (build-ids are not secrets) writes
# it into a binary of their own, maps that and exits, then replaces their
# path with a symlink to root's binary - before the daemon copies or reads
# it (eager capture, buildid_mode userspace: the daemon reads and copies
# from the path when the process is gone).  A daemon that follows the
# symlink copies root's binary into the cache.  Not one byte of it may
# land under the state directory; root's ping is answered within 100 ms.
. tests/lib.sh
. tests/hostile/lib.sh
hostile_start

build_hostile mapexec
build_hostile mkelf
secret_binary

start_daemon "[record]
buildid_mode = userspace
frequency = 499
drain_interval = 1s
[cache]
capture = eager"
sleep 1.2
start_pinger
for i in 1 2 3 4 5; do
	as_user "$A" sh -c "'$T/mkelf' forge '$T/spin' '$H/f$i' $K && '$T/mapexec' 0 '$H/f$i' &&
		ln -sf '$T/secret/bin' '$H/f$i'" || fail "the attack did not run"
	sleep 0.3
done
sleep 3
hostile_judge
stop_daemon
if grep -rl "$MARK" "$T/state" > "$T/found" 2>/dev/null; then
	fail "root's private binary was copied under the state directory: $(head -3 "$T/found")"
fi
echo "PASS: no byte of a file the user cannot read under the state directory"
