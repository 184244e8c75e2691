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
# Part 2: the same overlay, its program run from outside the namespace
# through /proc/P/root of a process inside it: the process mapping it is
# then in the host's namespaces, and the mount in none of its own.
. tests/lib.sh
. tests/hostile/lib.sh
hostile_start
need_perf
as_user "$A" unshare -Urm true 2>/dev/null || skip "this user cannot unshare -Urm"
stallfs_mount
mkdir "$H/ovl" "$H/empty" && chown "$A" "$H/ovl" "$H/empty"
# the overlay can be made at all here (kernel 5.11+ in a user namespace)
as_user "$A" unshare -Urm sh -c "mount -t overlay overlay -o lowerdir='$H/mnt':'$H/empty' '$H/ovl' &&
	[ -x '$H/ovl/prog' ]" 2> "$T/ovl.err" ||
	skip "a user cannot mount an overlay over its FUSE mount here: $(cat "$T/ovl.err")"

# fresh: a daemon with a state of its own (the build-id a copy was tried of is not tried again)
fresh_daemon() {
	rm -rf "$T/state"
	start_daemon "[record]
frequency = 499
drain_interval = 100ms"
	echo "$DAEMON_PID" > "$T/target.pid"
	start_pinger
}
fresh_daemon
as_user "$A" unshare -Urm sh -c "mount -t overlay overlay -o lowerdir='$H/mnt':'$H/empty' '$H/ovl' &&
	exec '$H/ovl/prog' 2" || fail "the user's program on the overlay failed"
capture_goes_on "the user's program on the overlay"
grep -q "mount of type overlay of a namespace a user made" "$T/daemon.log" "$T/store.out" ||
	fail "no reason names the overlay: $(grep "$FID" "$T/store.out")"
stop_daemon

# --- 2. through /proc/P/root, from the host's namespaces ---------------------
fresh_daemon
as_user "$A" unshare -Urm sh -c "mount -t overlay overlay -o lowerdir='$H/mnt':'$H/empty' '$H/ovl' &&
	echo \$\$ > '$H/p1.pid' && exec sleep 30" &
for _ in $(seq 1 50); do [ -s "$H/p1.pid" ] && break; sleep 0.1; done
P1=$(cat "$H/p1.pid") || fail "the process holding the overlay did not start"
as_user "$A" "/proc/$P1/root$H/ovl/prog" 2 ||
	fail "the user's program on the overlay, run through /proc/$P1/root, failed"
capture_goes_on "the user's program on the overlay, run from the host's namespaces"
grep -h "$FID" "$T/daemon.log" "$T/store.out" | grep -q "mount.*not read" ||
	fail "no reason names the mount: $(grep -h "$FID" "$T/daemon.log" "$T/store.out")"
kill "$P1" 2>/dev/null
fs_abort
stop_daemon
echo "PASS: a user's FUSE server behind an overlay, in the user's namespace or reached from outside it, holds up no capture, store or ping"
