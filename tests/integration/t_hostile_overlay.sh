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
# Part 3: the root of a container that root made with a user namespace
# (LXD, Kubernetes user namespaces: its owner is uid 0) mounts a FUSE file
# system and an overlay over it inside: the tenant is no more trusted
# than a user.
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
# The user's programs sleep (capver -s) until stop_user_progs: their mappings
# are judged while they live, however long the worker takes to come to them.
stop_user_progs() { pkill -9 -u "$A" -f 'ovl/prog' 2>/dev/null; pkill -9 -u "$A" sleep 2>/dev/null; }
at_exit stop_user_progs
fresh_daemon
as_user "$A" unshare -Urm sh -c "mount -t overlay overlay -o lowerdir='$H/mnt':'$H/empty' '$H/ovl' &&
	exec '$H/ovl/prog' -s 120000" &
BG_PIDS="${BG_PIDS:-} $!"
sleep 1
capture_goes_on "the user's program on the overlay"
refused_for "mount of type overlay of a namespace a user or a container's root made" \
	"names the overlay"
stop_user_progs
stop_daemon

# --- 2. through /proc/P/root, from the host's namespaces ---------------------
fresh_daemon
as_user "$A" unshare -Urm sh -c "mount -t overlay overlay -o lowerdir='$H/mnt':'$H/empty' '$H/ovl' &&
	echo \$\$ > '$H/p1.pid' && exec sleep 120" &
BG_PIDS="${BG_PIDS:-} $!"
for _ in $(seq 1 50); do [ -s "$H/p1.pid" ] && break; sleep 0.1; done
P1=$(cat "$H/p1.pid") || fail "the process holding the overlay did not start"
as_user "$A" "/proc/$P1/root$H/ovl/prog" -s 120000 &
BG_PIDS="$BG_PIDS $!"
sleep 1
capture_goes_on "the user's program on the overlay, run from the host's namespaces"
refused_for "neither the daemon's namespace nor that of process" \
	"says the mount is not the process's"
stop_user_progs
fs_abort
stop_daemon

# --- 3. a container tenant's FUSE and overlay ---------------------------------
C=$T/container
mkdir -p "$C/mnt" "$C/ovl" "$C/empty"
ctr_abort() {
	[ -s "$C/conn" ] && echo 1 > "/sys/fs/fuse/connections/$(cat "$C/conn")/abort" 2>/dev/null
	pkill -9 -f "$C/" 2>/dev/null
}
# the tenant's connection aborted before the daemon is waited for (a worker
# stuck in it would keep even a killed daemon)
trap 'TEST_RC=$?; ctr_abort; fs_abort; hostile_cleanup' EXIT
fresh_daemon
unshare -U -m --map-root-user sh -c "'$T/stallfs' '$T/big' '$C/mnt' '$T/target.pid' late > '$C/fs.log' 2>&1 &
	for i in \$(seq 1 50); do [ -x '$C/mnt/prog' ] && break; sleep 0.1; done
	awk '\$5 == \"$C/mnt\" { split(\$3, d, \":\"); print d[2] }' /proc/self/mountinfo > '$C/conn'
	mount -t overlay overlay -o lowerdir='$C/mnt':'$C/empty' '$C/ovl' || exit 1
	exec '$C/ovl/prog' -s 120000" 2> "$C/err" &
CT=$!
BG_PIDS="${BG_PIDS:-} $CT"
for _ in $(seq 1 100); do [ -s "$C/conn" ] && break; kill -0 $CT 2>/dev/null || break; sleep 0.1; done
[ -s "$C/conn" ] || skip "root cannot mount FUSE in a user namespace here: $(cat "$C/err" "$C/fs.log")"
sleep 0.5
capture_goes_on "the container tenant's program on its overlay"
refused_for "mount of type overlay of a namespace a user or a container's root made" \
	"names the overlay"
ctr_abort
stop_daemon
echo "PASS: a FUSE server behind an overlay, a user's (in the user's namespace or reached from outside it) or a container tenant's, holds up no capture, store or ping"
