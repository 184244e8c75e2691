#!/bin/sh
# The documentation is there and well-formed: man pages lint clean
# (mandoc -T lint, warnings and up), README opens with the run and test
# commands, and every daemon option is in perfmapd(8).
. tests/lib.sh
command -v mandoc >/dev/null || skip "mandoc is not installed"
for m in man/*.[0-9]; do
	out=$(mandoc -T lint -W warning "$m" 2>&1)
	[ -z "$out" ] || fail "mandoc -T lint $m: $out"
done
head -5 README.md | grep -q '^make run' || fail "README does not open with make run"
head -5 README.md | grep -q '^make check' || fail "README does not open with make check"
grep -q 'make check' .ci/run || fail ".ci/run does not run README's test command"
for opt in foreground config check-config debug state-dir socket; do
	grep -q "Fl -$opt" man/perfmapd.8 || fail "perfmapd(8) lacks --$opt"
	"$PERFMAPD" --help 2>&1 | grep -q -- "--$opt" || fail "perfmapd usage lacks --$opt"
done
for sig in SIGTERM SIGUSR2 SIGHUP SIGUSR1; do
	grep -q "$sig" man/perfmapd.8 || fail "perfmapd(8) does not document $sig"
done
echo "PASS"
