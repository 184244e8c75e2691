#!/bin/sh
# Adversarial: a user's FUSE server that answers the build-id read and then
# never answers the copy.  The capture worker reads binaries with no
# deadline: stuck in such a read, it would capture nothing more for anyone,
# and store and export would queue behind it.  The daemon must leave a
# file that a user's process serves alone (reported: "a FUSE file system of
# uid N"), go on capturing other binaries, and answer store and ping.
#
# The server runs with the user's uid as its real uid (setpriv --ruid): the
# mount then carries user_id=UID as one made with fusermount3 does.  A user
# can mount it alone where /dev/fuse is open to all and fuse.conf has
# user_allow_other (without allow_other even root cannot read the mount);
# this test does not change those files of the host.
. tests/lib.sh
. tests/hostile/lib.sh
hostile_start
need_perf
# Past the first MiB: the server answers the first pages (the build-id read), not the rest.
stallfs_mount
uid=$(id -u "$A")
awk -v m="$H/mnt" '$5 == m' /proc/self/mountinfo | grep -q "user_id=$uid[,]" ||
	fail "the mount is not the user's: $(awk -v m="$H/mnt" '$5 == m' /proc/self/mountinfo)"

start_daemon "[record]
frequency = 499
drain_interval = 100ms"
echo "$DAEMON_PID" > "$T/target.pid"
start_pinger
as_user "$A" "$H/mnt/prog" 0.5 || fail "the user's program on the FUSE mount failed"
sleep 1
capture_goes_on "the user's FUSE binary"
grep -q "^FAIL $FID .*a FUSE file system of uid $uid" "$T/store.out" ||
	fail "store gives no FUSE reason for $FID: $(cat "$T/store.out")"
fs_abort
stop_daemon
echo "PASS: a user's FUSE server holds up no capture, store or ping"
