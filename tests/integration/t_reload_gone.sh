#!/bin/sh
# A reload finds the configuration file gone (perfmapd.conf(5)): the
# daemon was started without -c, as the shipped unit starts it, and read
# /etc/perfmapd/perfmapd.conf; the file is then moved away (an editor's
# save, a package upgrade) and a reload comes.  The reload is refused and
# the running values stay.  Before, the daemon took the missing file for
# "no file" and applied the defaults: keep_size back to 1G, keep_age to
# 7d, and the next rotation's retention deleted what the operator's values
# kept.  Seen here through rotate_age: 1s in the file, 10m by default, so
# segments keep closing every second only if the running value stayed.
# An empty file is the way back to the defaults, and is taken.
# The host's /etc is not touched: the test runs in a mount namespace of its
# own, over whose /etc a copy is bound (with the test's perfmapd.conf).
if [ -z "${T_RELOAD_GONE_NS:-}" ]; then
	command -v unshare >/dev/null 2>&1 || { echo "SKIP: no unshare (util-linux)"; exit 77; }
	T_RELOAD_GONE_NS=1 exec unshare -m --propagation private sh "$0" "$@"
fi
# test-lane: beside (tests/run-tests.sh: light, judged in seconds)
. tests/lib.sh
need_events
cp -a /etc "$T/etc" || fail "cannot copy /etc"
mount --bind "$T/etc" /etc || skip "cannot bind a copy of /etc in a mount namespace"
CONF=/etc/perfmapd/perfmapd.conf
mkdir -p /etc/perfmapd
rm -f "$CONF"
printf '[record]\nfrequency = 99\n[segments]\nrotate_age = 1s\n' > "$CONF"

ctl() { "$PERFMAPCTL" -s "$T/control.sock" "$@"; }
closed() { segments | wc -l; }

# as start_daemon, but without -c: the default file
"$PERFMAPD" -f -d --state-dir "$T/state" --socket "$T/control.sock" > "$T/daemon.log" 2>&1 &
DAEMON_PID=$!
for _ in $(seq 1 100); do
	grep -q "recording into" "$T/daemon.log" 2>/dev/null && break
	kill -0 "$DAEMON_PID" 2>/dev/null || fail "daemon died at start"
	sleep 0.1
done
grep -q "recording into" "$T/daemon.log" || fail "daemon did not start"
sleep 2.5
n1=$(closed)
[ "$n1" -ge 1 ] || fail "rotate_age 1s from $CONF: no segment closed in 2.5 s (the test's premise)"

rm -f "$CONF"
if ctl reload > "$T/reload" 2>&1; then
	fail "reload with $CONF gone succeeded: $(cat "$T/reload")"
fi
grep -q "is gone" "$T/reload" || fail "the refusal does not say the file is gone: $(cat "$T/reload")"
grep -q "reload refused" "$T/daemon.log" || fail "the log does not say the reload was refused"
sleep 3
n2=$(closed)
[ "$n2" -ge $((n1 + 2)) ] ||
	fail "after the refused reload: $n1 then $n2 segments in 3 s (rotate_age went back to its default)"
note "file gone: reload refused, rotate_age 1s kept ($n1 -> $n2 segments)"

# An empty file: the defaults, taken (rotate_age 10m: no more rotations).
: > "$CONF"
ctl reload > "$T/reload" 2>&1 || fail "reload of an empty file refused: $(cat "$T/reload")"
sleep 1.2
n3=$(closed)
sleep 2.5
n4=$(closed)
[ "$n4" -eq "$n3" ] || fail "an empty file's reload: rotations went on ($n3 -> $n4 in 2.5 s)"
note "empty file: the defaults taken ($n3 -> $n4 segments in 2.5 s)"
stop_daemon
exit 0
