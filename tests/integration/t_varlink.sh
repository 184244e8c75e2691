#!/bin/sh
# The control socket judged by the reference Varlink implementation: a
# client built from Debian's varlink Go sources (golang-github-varlink-go-dev,
# offline, GOPATH=/usr/share/gocode) parses daemon/control/*.varlink with the
# reference IDL parser, checks that the daemon serves them verbatim, calls
# every method and checks every reply and error against them, and checks
# "parameters": null, the standard errors, oneway, pipelining and
# more/continues (tests/varlink/varlinkcheck.go says what exactly).
# test-lane: beside (tests/run-tests.sh: light, judged in seconds)
. tests/lib.sh
need_events
command -v go >/dev/null 2>&1 || skip "go is not installed (golang-go, tests/deps.sh)"
[ -d /usr/share/gocode/src/github.com/varlink/go/varlink ] ||
	skip "the varlink Go sources are not installed (golang-github-varlink-go-dev)"

mkdir -p "$T/gocache"
GOPATH=/usr/share/gocode GO111MODULE=off GOCACHE="$T/gocache" GOFLAGS= \
	go build -o "$T/varlinkcheck" tests/varlink/varlinkcheck.go ||
	fail "cannot build tests/varlink/varlinkcheck.go"

build_prog spin
cp "$T/spin" "$T/pm-spin"
"$T/pm-spin" 30 & BG_PIDS="$!"
sleep 0.3
start_daemon "[segments]
rotate_age = 1h"
sleep 1.5
timeout 180 "$T/varlinkcheck" -socket "$T/control.sock" -idl daemon/control -path "$T/pm-spin" ||
	{ tail -20 "$T/daemon.log"; fail "the Varlink checks failed"; }
# varlinkcheck ends with Stop: the daemon finishes and exits 0
for _ in $(seq 1 100); do
	kill -0 "$DAEMON_PID" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$DAEMON_PID" 2>/dev/null && fail "the daemon did not stop after io.perfmap.Stop"
wait "$DAEMON_PID"; rc=$?
DAEMON_PID=""
[ "$rc" -eq 0 ] || { tail -20 "$T/daemon.log"; fail "the daemon exited with $rc after Stop"; }
echo "PASS: the reference Varlink client and IDL parser agree with the daemon"
