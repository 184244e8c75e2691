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
# test-lane: beside (tests/run-tests.sh: light, judged in seconds)
. tests/lib.sh
need_events
command -v python3 > /dev/null || skip "python3 is not installed"
start_daemon "[record]
frequency = 99"
S=$T/control.sock
at_exit "kill -CONT $DAEMON_PID 2>/dev/null"
"$PERFMAPCTL" -s "$S" -t 5 ping > /dev/null || fail "ping before"

# times_out WHAT COMMAND MESSAGE: perfmapctl -t 1 COMMAND exits 4 within 5 s, saying MESSAGE.
times_out() {
	t0=$(date +%s%N)
	"$PERFMAPCTL" -s "$S" -t 1 "$2" > /dev/null 2> "$T/err"
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	note "$2 $1: rc $rc after $ms ms: $(cat "$T/err")"
	[ "$rc" = 4 ] || fail "$2 $1 exited $rc, not 4 (timed out)"
	[ "$ms" -lt 5000 ] || fail "$2 $1 with -t 1 took $ms ms"
	grep -q "$3" "$T/err" || fail "$2 $1: no word of the timeout: $(cat "$T/err")"
}

kill -STOP "$DAEMON_PID"
times_out "against a stopped daemon" status "no answer from the daemon within 1 s"

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
times_out "with the backlog full" ping "took no connection within 1 s"
kill "$FILLER"
wait "$FILLER" 2>/dev/null

kill -CONT "$DAEMON_PID"
"$PERFMAPCTL" -s "$S" -t 10 ping > /dev/null || fail "the daemon does not answer once continued"
"$PERFMAPCTL" -s "$S" -t 10 --json status | jq -e '.segment.path' > /dev/null ||
	fail "status once continued"
stop_daemon
echo "PASS: perfmapctl gave up on a stopped daemon after -t 1 (exit 4), and on its full backlog"
