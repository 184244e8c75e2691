#!/bin/sh
# perfmapctl against a daemon that does not answer (stopped, stuck): each
# wait is bounded (-t SECONDS; 30 s by default but for store, export and
# profile), and one that runs out exits 4 with a message.  Before, it
# waited for ever, and so did every script or timer that called it.
#   1. the daemon stopped (SIGSTOP): the call is taken into the socket's
#      backlog and never answered: the read times out;
#   2. the backlog full as well (64 connections no one accepts): the
#      connect itself times out;
#   3. the daemon continued: it answers, and the calls left behind did it
#      no harm.
. tests/lib.sh
need_events
command -v python3 > /dev/null || skip "python3 is not installed"
start_daemon "[record]
frequency = 99"
S=$T/control.sock
at_exit "kill -CONT $DAEMON_PID 2>/dev/null"
"$PERFMAPCTL" -s "$S" -t 5 ping > /dev/null || fail "ping before"

kill -STOP "$DAEMON_PID"
t0=$(date +%s%N)
"$PERFMAPCTL" -s "$S" -t 1 status > /dev/null 2> "$T/err1"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
note "status against a stopped daemon: rc $rc after $ms ms: $(cat "$T/err1")"
[ "$rc" = 4 ] || fail "status against a stopped daemon exited $rc, not 4 (timed out)"
[ "$ms" -lt 5000 ] || fail "status with -t 1 took $ms ms"
grep -q "no answer from the daemon within 1 s" "$T/err1" || fail "no word of the timeout: $(cat "$T/err1")"

# the backlog filled: connects no one accepts, until one would wait
python3 - "$S" "$T/filled" <<'PY' &
import os, socket, sys, time
socks = []
for _ in range(1000):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.setblocking(False)
    try:
        s.connect(sys.argv[1])
    except BlockingIOError:
        break
    socks.append(s)
open(sys.argv[2], "w").write("%d\n" % len(socks))
time.sleep(60)
PY
FILLER=$!
at_exit "kill $FILLER 2>/dev/null"
for _ in $(seq 1 50); do [ -s "$T/filled" ] && break; sleep 0.1; done
[ -s "$T/filled" ] || fail "the backlog was not filled"
note "connections in the backlog: $(cat "$T/filled")"
t0=$(date +%s%N)
"$PERFMAPCTL" -s "$S" -t 1 ping > /dev/null 2> "$T/err2"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
note "ping with the backlog full: rc $rc after $ms ms: $(cat "$T/err2")"
[ "$rc" = 4 ] || fail "ping with the backlog full exited $rc, not 4 (timed out)"
[ "$ms" -lt 5000 ] || fail "ping with -t 1 took $ms ms"
grep -q "took no connection within 1 s" "$T/err2" || fail "no word of the connect's timeout: $(cat "$T/err2")"
kill "$FILLER"
wait "$FILLER" 2>/dev/null

kill -CONT "$DAEMON_PID"
"$PERFMAPCTL" -s "$S" -t 10 ping > /dev/null || fail "the daemon does not answer once continued"
"$PERFMAPCTL" -s "$S" -t 10 --json status | jq -e '.segment.path' > /dev/null ||
	fail "status once continued"
stop_daemon
echo "PASS: perfmapctl gave up on a stopped daemon after -t 1 (exit 4), and on its full backlog ($ms ms)"
