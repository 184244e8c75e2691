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
stallfs_setup
FID=$(readelf_buildid "$T/big")
cc -O0 -g -Wl,--build-id -DVERSION=2 $(unique_buildid) -o "$T/plain" tests/progs/capver.c ||
	fail "cannot build capver"
PID_=$(readelf_buildid "$T/plain")
mkdir "$H/mnt" && chown "$A" "$H/mnt"
setpriv --ruid="$A" -- "$T/stallfs" "$T/big" "$H/mnt" "$T/target.pid" late > "$T/fs.log" 2>&1 &
FS=$!
fs_abort() { fuse_abort "$H/mnt" "$FS"; }
trap 'TEST_RC=$?; fs_abort; hostile_cleanup' EXIT
for _ in $(seq 1 50); do [ -x "$H/mnt/prog" ] && break; sleep 0.1; done
[ -x "$H/mnt/prog" ] || { cat "$T/fs.log"; fail "the FUSE file system did not come up"; }
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
"$T/plain" 0.3 || fail "the plain program failed"
cached=""
for _ in $(seq 1 100); do
	[ -e "$T/state/debug/.build-id/$(echo "$PID_" | cut -c1-2)/$(echo "$PID_" | cut -c3-)" ] &&
		{ cached=1; break; }
	sleep 0.1
done
seg=$(timeout 10 "$PERFMAPCTL" -s "$T/control.sock" snapshot) || fail "snapshot"
timeout 20 "$PERFMAPCTL" -s "$T/control.sock" store "$seg" > "$T/store.out" 2>&1
rc=$?
note "store (rc $rc): $(grep -E "$FID|$PID_" "$T/store.out" | tr '\n' ' ')"
hostile_judge
[ -n "$cached" ] || fail "a plain binary was not captured after the user's FUSE binary"
[ "$rc" = 124 ] && fail "store did not answer within 20 s"
perf buildid-list -i "$seg" 2>/dev/null | grep -q "^$FID " ||
	fail "the FUSE program's build-id was not read: the copy was never tried"
grep -q "^FAIL $FID .*a FUSE file system of uid $uid" "$T/store.out" ||
	fail "store gives no FUSE reason for $FID: $(cat "$T/store.out")"
fs_abort
stop_daemon
echo "PASS: a user's FUSE server holds up no capture, store or ping"
