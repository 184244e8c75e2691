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
# Then a symlink in the control socket's place, its directory writable by
# the user: a reload must not chmod the file it points to.
# test-lane: beside (tests/run-tests.sh: light; root's ping within 100 ms, at most 10 ms seen beside others)
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

# The socket's directory writable by the user (an operator's choice, not
# the default /run/perfmapd): they put a symlink to root's file in the
# socket's place, and a reload must not chmod (or chown) the file it
# points to.  Before, the reload's chmod by name made it 0660.
printf 'root only\n' > "$T/victim" && chmod 0600 "$T/victim"
chmod 0777 "$T"
as_user "$A" sh -c "mv '$T/control.sock' '$T/moved.sock' && ln -s '$T/victim' '$T/control.sock'" ||
	fail "the user's symlink in the socket's place"
kill -HUP "$DAEMON_PID"
for _ in $(seq 1 50); do grep -q "reload" "$T/daemon.log" && break; sleep 0.1; done
sleep 0.3
mode=$(stat -c %a "$T/victim")
rm -f "$T/control.sock" && mv "$T/moved.sock" "$T/control.sock" && chmod 0755 "$T"
[ "$mode" = 600 ] || fail "a reload changed the mode of the file a user's symlink in the socket's place names to $mode"
grep -q "control.sock: chmod (no longer the socket it bound" "$T/daemon.log" ||
	fail "the reload did not say it left the socket's place alone: $(grep -i "reload\|chmod" "$T/daemon.log" | tail -3)"
stop_daemon
if grep -rl "$MARK" "$T/state" > "$T/found" 2>/dev/null; then
	fail "root's private binary was copied under the state directory: $(head -3 "$T/found")"
fi
echo "PASS: no byte of a file the user cannot read under the state directory; a reload leaves a symlink in the socket's place alone"
