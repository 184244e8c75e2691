#!/bin/sh
# Run every unit test ($BUILD/tests/check_*) and integration test
# (tests/integration/t_*.sh) and print "N passed, N failed, N skipped".
# An integration test exits 0 (pass), 77 (skip, after printing why) or
# anything else (fail).  Set TESTS="name ..." to run a subset; BUILD names
# the build directory (default build; make check-asan uses build-asan).
#
# Only a run where every selected test passed is a pass: a name in TESTS
# that matches no test, a run that selected nothing, and a skipped test all
# make it fail (ALLOW_SKIP=1 accepts skips, for a developer's machine that
# cannot run some tests; CI never sets it).
#
# The integration tests, which record the whole host, run one at a time,
# but for the light ones, which run beside them in a second lane, and the
# unit tests (they use no perf event, no account and no other test's
# files; under the sanitizers they are minutes of CPU), which the second
# lane runs first and the first lane takes what is left of when its own
# are done (LANES, below).
#
# Interrupted (^C, a TERM): the tests running are stopped with TERM, each
# cleaning up after itself (its daemon, its users), and the run ends 130.
# A non-interactive shell starts its background jobs with SIGINT ignored,
# so a ^C alone reached none of them: the test and its daemon went on
# recording the host (t_runner_interrupt).
#
# A test that leaves an account (user or group) behind fails: the password
# files are the machine's, and a leftover named for a pid meets the next
# test that runs under that pid.  A test's accounts are named for its pid
# (tests/lib.sh): those of other runs on the machine are not its.
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
export BUILD
pass=0 fail=0 skip=0 failed="" skipped=""
logdir=${TEST_LOGDIR:-$(mktemp -d /tmp/perfmapd-tests.XXXXXX)}

accounts() { { getent passwd; getent group | sed 's/^/group /'; } | cut -d: -f1 | sort; }

# The machine's busy CPU time so far, in hundredths of a CPU-second: what
# an integration test used (its daemon, its workload, its perf, and, in
# two lanes, its neighbour's) goes with its wall time into $logdir/times
# ("NAME WALL_S BUSY_CPU_S").
busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }

# run_test NAME CMD...: run a test; "RC SECONDS" into
# $logdir/NAME.rc.  The test's pid goes to $logdir/NAME.pid at its start
# (tpid while it runs: what an interrupt stops).
run_test() {
	name=$1; shift
	start=$(date +%s)
	busy0=$(busy)
	accounts >"$logdir/$name.accounts"
	"$@" >"$logdir/$name.log" 2>&1 &
	tpid=$!
	echo "$tpid" >"$logdir/$name.pid"
	wait $tpid
	rc=$?
	# the test's own: named for its pid (tests/lib.sh), not another run's
	# nor the other lane's
	left=$(accounts | comm -13 "$logdir/$name.accounts" - | grep "$tpid\$" | paste -sd' ' -)
	tpid=""
	if [ -n "$left" ]; then
		echo "FAIL: the test left these accounts behind: $left" >>"$logdir/$name.log"
		case $rc in 0|77) rc=1;; esac
	fi
	secs=$(( $(date +%s) - start ))
	echo "$rc $secs" >"$logdir/$name.rc"
	echo "$name $secs $(( ($(busy) - busy0) / 100 ))" >>"$logdir/times"
}

run() {
	run_test "$@"
	read -r rc secs <"$logdir/$1.rc"
	report "$1" "$rc" "$secs"
}

# The tests running (a unit test's binary and its forked cases, an
# integration test's shell) stopped with TERM, waited for; then exit 130.
stop_test() {
	[ -n "${tpid:-}" ] || return 0
	[ -z "${tunit:-}" ] || pkill -TERM -P "$tpid" 2>/dev/null	# its forked case
	kill -TERM "$tpid" 2>/dev/null
}
interrupted() {
	trap '' INT TERM HUP
	stop_test
	[ -n "${lane2:-}" ] && kill -TERM "$lane2" 2>/dev/null
	wait
	echo "interrupted: logs in $logdir"
	exit 130
}
trap interrupted INT TERM HUP

report() {
	name=$1 rc=$2 secs=$3
	case $rc in
	0)  pass=$((pass + 1)); echo "PASS $name (${secs}s)";;
	77) skip=$((skip + 1)); skipped="$skipped $name"
	    echo "SKIP $name: $(grep -m1 '^SKIP' "$logdir/$name.log" | sed 's/^SKIP:* *//')";;
	*)  fail=$((fail + 1)); failed="$failed $name"; echo "FAIL $name (exit $rc, ${secs}s)"
	    sed 's/^/    | /' "$logdir/$name.log" | tail -40
	    # the daemon's last words end a failing test's log: its reason last
	    grep -E '^FAIL|:[0-9]+:[EF]:' "$logdir/$name.log" | head -5 | sed 's/^/    why: /';;
	esac
}

want() {
	[ -z "${TESTS:-}" ] && return 0
	for w in $TESTS; do [ "$w" = "$1" ] && return 0; done
	return 1
}

# a log directory given again (TEST_LOGDIR): no claim or result of the last run stands
rm -rf "$logdir"/*.taken "$logdir"/*.rc
all="" units=""
for t in tests/check_*.c; do
	n=${t##*/}; n=${n%.c}
	all="$all $n"
	want "$n" || continue
	if [ ! -x "$BUILD/tests/$n" ]; then
		fail=$((fail + 1)); failed="$failed $n"
		echo "FAIL $n: $BUILD/tests/$n is not built (make all)"
		continue
	fi
	units="$units $n"
done
# The tests in two lanes (INTEGRATION_LANES=2, the default; 1: one at a
# time, in order, the unit tests after): a test whose header says "# test-lane:
# beside" (light: a fraction of a CPU, judged in seconds, not in samples
# per CPU or in milliseconds) runs in the second lane, beside the tests of
# the first; one that says "# test-lane: alone" (it changes what the
# host's other perf users see, or judges them: a sysctl, build-id events,
# every test daemon of the machine) runs after both lanes are done.  The
# second lane begins with the unit tests (below): before, they ran one per
# CPU ahead of the integration tests, while the second lane's light tests
# ended minutes before the first's (CI: 687 s of tests in the first lane,
# 272 in the second, then 80 s of unit tests ahead of them).  The unit
# tests' and the second lane's results are reported after the first's.  Every daemon
# records the whole host: a test whose processes are hostile to perf
# (t_hostile_elf's lying ELF, t_hostile_names' and t_hostile_export's
# files) stays out of lane 2, or the first lane's perf runs over their
# daemons' segments see them (perf script -s stackcollapse.py segfaulted
# in t_compress so, in CI: perf 6.1's Python scripting dies on a name
# that is not UTF-8; t_perftools' run of it now takes only its own
# process, but no other perf run is proven safe from such names).
lane_of() { sed -n 's/^# test-lane: *\([a-z]*\).*/\1/p' "$1" | head -n 1; }
lanes=${INTEGRATION_LANES:-2}
beside="" alone="" first=""
for t in tests/integration/t_*.sh; do
	n=${t##*/}; n=${n%.sh}
	all="$all $n"
	want "$n" || continue
	case $(lane_of "$t") in
	beside) [ "$lanes" -ge 2 ] && beside="$beside $n" || first="$first $n";;
	alone) alone="$alone $n";;
	*) first="$first $n";;
	esac
done
# The unit tests and the light ones: each run by the lane that takes it
# first (mkdir is the claim).  The second lane takes the unit tests, then
# the light tests; the first, when its own are done, what is left of
# both (with one lane, the first lane takes them all after its own).  A
# unit test's cases run one at a time, each in a process of its own
# (CK_FORK).
take_rest() {
	for n in $units; do
		mkdir "$logdir/$n.taken" 2>/dev/null || continue
		tunit=1
		run_test "$n" env CK_FORK=yes "$BUILD/tests/$n"
		tunit=""
	done
	for n in $beside; do
		mkdir "$logdir/$n.taken" 2>/dev/null || continue
		run_test "$n" sh "tests/integration/$n.sh"
	done
}
lane2=""
if [ "$lanes" -ge 2 ] && [ -n "$units$beside" ]; then
	(
		trap 'stop_test; wait; exit 130' TERM
		take_rest
	) &
	lane2=$!
fi
for n in $first; do run "$n" sh "tests/integration/$n.sh"; done
take_rest
[ -z "$lane2" ] || wait "$lane2"
lane2=""
for n in $units $beside; do
	read -r rc secs <"$logdir/$n.rc" 2>/dev/null || { rc=1; secs=0; }
	report "$n" "$rc" "$secs"
done
for n in $alone; do run "$n" sh "tests/integration/$n.sh"; done
for w in ${TESTS:-}; do
	case " $all " in
	*" $w "*) ;;
	*) fail=$((fail + 1)); failed="$failed $w"; echo "FAIL $w: no such test";;
	esac
done
echo "logs in $logdir"
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
if [ $((pass + fail + skip)) -eq 0 ]; then
	echo "nothing ran: not a pass"
	exit 1
fi
if [ "$skip" -gt 0 ] && [ "${ALLOW_SKIP:-0}" != 1 ]; then
	echo "skipped:$skipped — a run with skipped tests is not a pass (ALLOW_SKIP=1 accepts them)"
	exit 1
fi
[ "$fail" -eq 0 ]
