#!/bin/sh
# The open-files limit.  The daemon holds two files per CPU for its rings,
# and its clients, pins, held /tmp directories and readers beside them: a
# host of 512 CPUs needs more than the soft limit of 1,024 that systemd
# gives a service, and a daemon at its limit failed its reads silently
# (EMFILE: mappings unknown, copies failed; here, with a soft limit of 40,
# 44 mappings unknown and 13 copies failed in 3 s).  It now raises its soft
# limit to the hard one at start, and warns when the hard one is below
# what the host may need.
. tests/lib.sh
need_events
command -v prlimit >/dev/null 2>&1 || skip "prlimit (util-linux) is not installed"
soft() { awk '/^Max open files/ { print $4 }' "/proc/$DAEMON_PID/limits"; }

DAEMON_WRAP="prlimit --nofile=40:4096" start_daemon "[record]
frequency = 99"
[ "$(soft)" = 4096 ] || fail "the soft open-files limit is $(soft), not the hard 4096"
grep -q "open-files limit raised from 40 to 4096" "$T/daemon.log" || fail "no word of the raise"
fds=$(ls "/proc/$DAEMON_PID/fd" | wc -l)
note "soft limit $(soft); the daemon holds $fds files"
[ "$fds" -gt 40 ] || fail "the daemon holds $fds files: a soft limit of 40 was no test"
"$PERFMAPCTL" -s "$T/control.sock" status > /dev/null || fail "status"
stop_daemon

# A hard limit below what the host may need: recorded, with a warning.
DAEMON_WRAP="prlimit --nofile=40:100" start_daemon "[record]
frequency = 99"
[ "$(soft)" = 100 ] || fail "the soft limit is $(soft), not the hard 100"
grep "open-files limit (100) is below" "$T/daemon.log" || fail "no warning of a hard limit of 100"
"$PERFMAPCTL" -s "$T/control.sock" status > /dev/null || fail "status"
stop_daemon
echo "PASS: the soft open-files limit raised to the hard one; a low hard one warned of"
