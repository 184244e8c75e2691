#!/bin/sh
# The documentation is there and well-formed: man pages lint clean
# (mandoc -T lint, warnings and up), README opens with the run and test
# commands, every daemon option is in perfmapd(8), and the design document
# perfmapd(7) names every source file of the tree.
# test-lane: beside (tests/run-tests.sh: light, judged in seconds)
. tests/lib.sh
command -v mandoc >/dev/null || skip "mandoc is not installed"
for m in man/*.[0-9]; do
	out=$(mandoc -T lint -W warning "$m" 2>&1)
	[ -z "$out" ] || fail "mandoc -T lint $m: $out"
done
head -5 README.md | grep -q '^make run' || fail "README does not open with make run"
head -5 README.md | grep -q '^make check' || fail "README does not open with make check"
grep -q 'make check' .ci/run || fail ".ci/run does not run README's test command"
for opt in foreground config check-config debug state-dir socket probe; do
	grep -q "Fl -$opt" man/perfmapd.8 || fail "perfmapd(8) lacks --$opt"
	"$PERFMAPD" --help 2>&1 | grep -q -- "--$opt" || fail "perfmapd usage lacks --$opt"
done
for sig in SIGTERM SIGUSR2 SIGHUP SIGUSR1; do
	grep -q "$sig" man/perfmapd.8 || fail "perfmapd(8) does not document $sig"
done
# The design document, perfmapd(7), names every source file (a header
# through its .c file, if it has one): a new file needs a place in it, a
# removed one must leave it.
grep -q 'man/perfmapd.7' README.md || fail "README does not link the design document"
for f in $(cd "$TOP" && ls common/*.[ch] common/*/*.[ch] daemon/*.[ch] daemon/*/*.[ch] \
    client/*.[ch] 2>/dev/null); do
	case $f in *.h) [ -f "${f%.h}.c" ] && continue;; esac
	base=$(basename "$f")
	grep -q "$base" man/perfmapd.7 || fail "perfmapd(7) does not mention $f"
done
for d in $(sed -n 's/^\.It Pa \([a-z_-]*\.[ch]\).*/\1/p' man/perfmapd.7); do
	found=$(find common daemon client -name "$d" | head -1)
	[ -n "$found" ] || fail "perfmapd(7) names $d, which is not in the tree"
done
echo "PASS"
