#!/bin/sh
# Adversarial: a JIT map in a user's own namespace.  The daemon reads a
# JIT process's /tmp/perf-PID.map from that process's /tmp, which a user
# who owns the namespace can rearrange: here the name becomes a mount
# point (a FIFO bind-mounted on it, as a FUSE file system or a device
# could be), with a process of the user's waiting to open the FIFO for
# writing.  A daemon that crosses the mount opens the FIFO (the writer
# goes on; a FUSE server would hold the capture worker, a device would
# be opened by root).  The map must be left alone, the FIFO never opened,
# and a plain map of the user's next process still kept.
. tests/lib.sh
. tests/hostile/lib.sh
hostile_start
[ "$(uname -m)" = x86_64 ] || skip "the JIT test program is x86-64 code"
build_prog jit
chmod 0755 "$T/jit"
as_user "$A" unshare -Urm true 2>/dev/null || skip "this user cannot unshare -Urm"

start_daemon "[record]
frequency = 499
drain_interval = 50ms"
start_pinger
# In the user's namespace, a /tmp of its own: jit writes its map, then
# the FIFO goes on top of it and the user's writer waits for a reader.
# ($T and $H are under the host's /tmp, hidden by the new one: the shell
# works from $H, the directory it started in.)
as_user "$A" unshare -Urm sh -c "
	cd '$H' || exit 1
	mount -t tmpfs pm-jit-tmp /tmp || exit 1
	../jit 1.5 & J=\$!
	sleep 0.5
	[ -s /tmp/perf-\$J.map ] || exit 1
	echo \$J > jit.pid
	mkfifo /tmp/fifo && mount --bind /tmp/fifo /tmp/perf-\$J.map || exit 1
	(exec 3> /tmp/perf-\$J.map; echo opened > opened) &
	wait \$J
	sleep 1.5
	kill \$! 2>/dev/null
	exit 0" || fail "the attack did not run"
J=$(cat "$H/jit.pid")
[ -e "$H/opened" ] && fail "the daemon opened the FIFO mounted on /tmp/perf-$J.map"
ls "$T/state/segments/"*.jit/perf-$J.map > /dev/null 2>&1 &&
	fail "a map that is a mount point was kept"
# The same user's next JIT process, a plain map in a /tmp of its own: kept.
as_user "$A" unshare -Urm sh -c "
	cd '$H' || exit 1
	mount -t tmpfs pm-jit-tmp /tmp || exit 1
	../jit 1.0 & echo \$! > jit2.pid
	wait" || fail "the plain JIT process did not run"
J2=$(cat "$H/jit2.pid")
kept_map "$J2" > /dev/null || fail "the plain map of pid $J2 in the user's own /tmp was not kept"
hostile_judge
stop_daemon
echo "PASS: a mount on a JIT map's name is not crossed; plain maps are kept"
