#!/bin/sh
# Run every unit test (tests/check_*) and integration test
# (tests/integration/t_*.sh) and print "N passed, N failed, N skipped".
# An integration test exits 0 (pass), 77 (skip, after printing why) or
# anything else (fail).  Set TESTS="name ..." to run a subset.
cd "$(dirname "$0")/.." || exit 1
pass=0 fail=0 skip=0 failed=""
logdir=${TEST_LOGDIR:-$(mktemp -d /tmp/perfmapd-tests.XXXXXX)}

run() {
	name=$1; shift
	start=$(date +%s)
	"$@" >"$logdir/$name.log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	case $rc in
	0)  pass=$((pass + 1)); echo "PASS $name (${secs}s)";;
	77) skip=$((skip + 1)); echo "SKIP $name: $(grep -m1 '^SKIP' "$logdir/$name.log" | sed 's/^SKIP:* *//')";;
	*)  fail=$((fail + 1)); failed="$failed $name"; echo "FAIL $name (exit $rc, ${secs}s)"
	    sed 's/^/    | /' "$logdir/$name.log" | tail -40;;
	esac
}

want() {
	[ -z "${TESTS:-}" ] && return 0
	for w in $TESTS; do [ "$w" = "$1" ] && return 0; done
	return 1
}

for t in tests/check_*; do
	case $t in *.c|*.o|*.h) continue;; esac
	[ -x "$t" ] || continue
	n=$(basename "$t")
	want "$n" && run "$n" env CK_FORK=yes "$t"
done
for t in tests/integration/t_*.sh; do
	n=$(basename "$t" .sh)
	want "$n" && run "$n" sh "$t"
done
echo "logs in $logdir"
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
