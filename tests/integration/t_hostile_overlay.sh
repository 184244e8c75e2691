#!/bin/sh
# Adversarial: a user's FUSE server behind an overlay.  In a user namespace
# of their own a user mounts an overlay whose lower layer is their FUSE
# mount, and runs a program from the overlay.  The file the daemon reaches
# is the overlay's: its device is no FUSE connection, yet every read of it
# is a read of the FUSE file, and the server answers the build-id read and
# then never answers the copy.  The capture worker reads with no deadline:
# stuck there it would capture nothing more for anyone, and store would
# queue behind it (before: so it did).  The daemon must leave a file on
# such a mount alone (reported: "on a mount of type overlay of a namespace
# a user made"), go on capturing other binaries, and answer store and ping.
. tests/lib.sh
. tests/hostile/lib.sh
hostile_start
need_perf
as_user "$A" unshare -Urm true 2>/dev/null || skip "this user cannot unshare -Urm"
stallfs_setup
FID=$(readelf_buildid "$T/big")
cc -O0 -g -Wl,--build-id -DVERSION=2 $(unique_buildid) -o "$T/plain" tests/progs/capver.c ||
	fail "cannot build capver"
PID_=$(readelf_buildid "$T/plain")
mkdir "$H/mnt" "$H/ovl" "$H/empty" && chown "$A" "$H/mnt" "$H/ovl" "$H/empty"
setpriv --ruid="$A" -- "$T/stallfs" "$T/big" "$H/mnt" "$T/target.pid" late > "$T/fs.log" 2>&1 &
FS=$!
fs_abort() { fuse_abort "$H/mnt" "$FS"; }
trap 'TEST_RC=$?; fs_abort; hostile_cleanup' EXIT
for _ in $(seq 1 50); do [ -x "$H/mnt/prog" ] && break; sleep 0.1; done
[ -x "$H/mnt/prog" ] || { cat "$T/fs.log"; fail "the FUSE file system did not come up"; }
# the overlay can be made at all here (kernel 5.11+ in a user namespace)
as_user "$A" unshare -Urm sh -c "mount -t overlay overlay -o lowerdir='$H/mnt':'$H/empty' '$H/ovl' &&
	[ -x '$H/ovl/prog' ]" 2> "$T/ovl.err" ||
	skip "a user cannot mount an overlay over its FUSE mount here: $(cat "$T/ovl.err")"

start_daemon "[record]
frequency = 499
drain_interval = 100ms"
echo "$DAEMON_PID" > "$T/target.pid"
start_pinger
as_user "$A" unshare -Urm sh -c "mount -t overlay overlay -o lowerdir='$H/mnt':'$H/empty' '$H/ovl' &&
	exec '$H/ovl/prog' 2" || fail "the user's program on the overlay failed"
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
[ -n "$cached" ] || fail "a plain binary was not captured after the user's program on the overlay"
[ "$rc" = 124 ] && fail "store did not answer within 20 s"
perf buildid-list -i "$seg" 2>/dev/null | grep -q "^$FID " ||
	fail "the overlay program's build-id was not read: the copy was never tried"
grep -q "mount of type overlay of a namespace a user made" "$T/daemon.log" "$T/store.out" ||
	fail "no reason names the overlay: $(grep "$FID" "$T/store.out")"
fs_abort
stop_daemon
echo "PASS: a user's FUSE server behind an overlay holds up no capture, store or ping"
