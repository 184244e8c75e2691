# tests/lib.sh - shared helpers for the integration tests (sourced).
# Each test runs from the repo top, makes a scratch directory, and exits
# 0 (pass), 77 (skip: prints "SKIP: why" first) or 1 (fail).

set -u
TOP=$(pwd)
BUILD=${BUILD:-build}
PERFMAPD=$TOP/$BUILD/perfmapd
PERFMAPCTL=$TOP/$BUILD/perfmapctl
T=$(mktemp -d /tmp/perfmapd-t.XXXXXX)
DAEMON_PID=""
AT_EXIT=""

# Processes still running a program from $T: the test's own, which its end
# must take with it (a copy of a test program left running shares its
# build-id with every other test's copy: tests/progs/ builds the same bytes).
left_running() {
	# one find, not a readlink per process (a fork each: a third of a second a test)
	find /proc -mindepth 2 -maxdepth 2 -name exe -lname "$T/*" 2>/dev/null | cut -d/ -f3
}
# TEST_RC: the test's exit status, taken first thing by the EXIT trap (a
# test with a trap of its own starts it with TEST_RC=$? too).
cleanup() {
	_test_rc=${TEST_RC:-$?}
	[ -n "$DAEMON_PID" ] && kill -9 "$DAEMON_PID" 2>/dev/null
	[ -n "${BG_PIDS:-}" ] && kill $BG_PIDS 2>/dev/null
	wait 2>/dev/null
	eval "$AT_EXIT"
	_left=$(left_running)
	if [ -n "$_left" ]; then
		sleep 0.2
		_left=$(left_running)
	fi
	if [ -n "$_left" ]; then
		for _p in $_left; do
			echo "-- left running: $_p $(tr '\0' ' ' < "/proc/$_p/cmdline" 2>/dev/null)"
		done
		kill -9 $_left 2>/dev/null
		[ $_test_rc -ne 0 ] || { echo "FAIL: the test left processes running from $T"; _test_rc=1; }
	fi
	# a failure keeps the daemon's last words in the test's log
	if [ $_test_rc -ne 0 ] && [ $_test_rc -ne 77 ] && [ -s "$T/daemon.log" ]; then
		echo "-- the daemon's log (last 40 lines):"
		tail -n 40 "$T/daemon.log" | sed 's/^/   | /'
	fi
	[ -n "${KEEP:-}" ] || rm -rf "$T"
	exit $_test_rc
}
trap 'TEST_RC=$?; cleanup' EXIT
# Stopped (the runner's TERM, a ^C): the test's children killed first.  A
# trap runs between any two commands, so between a daemon's `&` and
# start_daemon's DAEMON_PID=$!: cleanup then had no daemon to kill and its
# wait waited for it forever (t_runner_interrupt, once in four runs).
trap 'pkill -KILL -P $$ 2>/dev/null; exit 130' INT
trap 'pkill -KILL -P $$ 2>/dev/null; exit 143' TERM
# at_exit CMD: run CMD at exit (the last one given first).
at_exit() { AT_EXIT="$1; $AT_EXIT"; }

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
note() { echo "-- $*"; }
# True under ASan or TSan (build-asan, build-tsan): their daemon is several
# times slower (losses under load are noted, not judged) and their shadow
# memory and quarantine make RSS no measure of the daemon's.
sanitized() {
	case $BUILD in *asan*|*tsan*) return 0;; esac
	return 1
}

need_root() { [ "$(id -u)" = 0 ] || skip "needs root (perf_event_open system-wide)"; }
need_perf() { command -v perf >/dev/null 2>&1 || skip "perf is not installed"; }

# Can this machine open a system-wide cpu-clock event?  (perf stat is the witness.)
need_events() {
	need_root
	perf stat -a -e cpu-clock -- true >/dev/null 2>&1 ||
		skip "perf_event_open system-wide is not permitted here"
}

# Accounts.  The password and group files are the machine's, shared by
# every test and every checkout: what a test adds it removes at its exit,
# and tests/run-tests.sh fails a test that leaves an account behind.
#
# test_group VAR NAME [MEMBER...] / test_user VAR NAME GROUP [SHELL]: a real
# group (with these members), and a real unprivileged user whose primary
# group is GROUP (no home, no login unless SHELL, no other group), made for
# this test and removed at its exit; VAR is set to the name made: NAME and
# the test's pid.  They set VAR in the caller's shell, never in a $(...)
# subshell, where a failure would only end the subshell and the account
# would never be removed.  A leftover of the same name (a run killed before
# its exit, under a pid since reused) is removed first.
# useradd and groupadd come with Debian's passwd package (tests/deps.sh).
pw_run() {
	# the command, retried while another process holds the files' lock
	_try=0
	until "$@" 2>"$T/pw.err"; do
		_pw_rc=$?
		_try=$((_try + 1))
		[ $_try -lt 10 ] || { cat "$T/pw.err"; return $_pw_rc; }
		sleep 1
	done
}
test_group() {
	_v=$1 _n=$2$$
	shift 2
	getent group "$_n" >/dev/null && pw_run groupdel "$_n"
	pw_run groupadd "$_n" || fail "groupadd $_n"
	at_exit "pw_run groupdel '$_n'"
	for _m in "$@"; do pw_run usermod -a -G "$_n" "$_m" || fail "usermod -a -G $_n $_m"; done
	eval "$_v=\$_n"
}
test_user() {
	_n=$2$$
	getent passwd "$_n" >/dev/null && pw_run userdel "$_n"
	pw_run useradd --no-create-home --no-user-group --gid "$3" --home-dir /nonexistent \
		--shell "${4:-/usr/sbin/nologin}" "$_n" || fail "useradd $_n"
	# what the test started as this user goes first (userdel refuses a
	# user with processes), then the JIT maps it left in /tmp: a later
	# process of the same pid would find a map that is not its own
	at_exit "pkill -9 -u '$_n' 2>/dev/null; sleep 0.1
		find /tmp -maxdepth 1 -user '$_n' -name 'perf-*.map' -delete 2>/dev/null
		pw_run userdel '$_n'"
	eval "$1=\$_n"
}

# unique_buildid: linker flags giving a binary a build-id of its own (20
# random bytes).
unique_buildid() { echo "-Wl,--build-id=0x$(od -An -tx1 -N20 /dev/urandom | tr -d ' \n')"; }

# build_prog NAME [CFLAGS]: tests/progs/NAME.c into $T/NAME (frame pointers
# on), with a build-id of its own (CFLAGS may give another: the last
# --build-id wins).  Every build of one program would otherwise have the
# same build-id (the same source path, the same bytes), and every
# test's daemon records the whole host, and a light test runs beside
# another (tests/run-tests.sh): two builds of one program with one
# build-id are one binary to a daemon and its profiles, named by the path
# it saw first (t_profile found its Mapping under the other test's spin).
build_prog() {
	cc -O0 -g -fno-omit-frame-pointer -o "$T/$1" "$TOP/tests/progs/$1.c" $(unique_buildid) ${2:-} ||
		fail "cannot build tests/progs/$1.c"
}

# start_manymaps NPROCS NFILES: a big host in miniature (tests/progs/manymaps):
# NPROCS sleeping processes each mapping NFILES copies of /usr/bin/true
# executable, ready when this returns; MM is its pid (killed at exit).
start_manymaps() {
	build_prog manymaps
	mkdir -p "$T/mm"
	"$T/manymaps" "$T/mm" "$1" "$2" /usr/bin/true > "$T/mm.out" 2>&1 &
	MM=$!
	BG_PIDS="${BG_PIDS:-} $MM"
	for _ in $(seq 1 300); do
		grep -q '^ready' "$T/mm.out" && break
		kill -0 $MM 2>/dev/null || { cat "$T/mm.out"; fail "manymaps died"; }
		sleep 0.1
	done
	grep -q "^ready $1" "$T/mm.out" || fail "manymaps did not get ready: $(cat "$T/mm.out")"
}

# start_daemon CONFIG_TEXT: run perfmapd in the foreground with state in $T/state
# (through $DAEMON_WRAP, a command that execs it, if set).
start_daemon() {
	printf '%s\n' "$1" > "$T/perfmapd.conf"
	# emptied here, not only by the daemon's redirection, which its shell
	# makes after the fork: the wait below read an earlier daemon's
	# "recording into" of the same test before it (t_socket_taken, CI)
	: > "$T/daemon.log"
	${DAEMON_WRAP:-} "$PERFMAPD" -f -d -c "$T/perfmapd.conf" --state-dir "$T/state" \
		--socket "${SOCK:-$T/control.sock}" > "$T/daemon.log" 2>&1 &
	DAEMON_PID=$!
	for _ in $(seq 1 100); do
		grep -q "recording into" "$T/daemon.log" 2>/dev/null && return 0
		kill -0 "$DAEMON_PID" 2>/dev/null || { cat "$T/daemon.log"; fail "daemon died at start"; }
		sleep 0.1
	done
	cat "$T/daemon.log"; fail "daemon did not start"
}

stop_daemon() {
	kill -TERM "$DAEMON_PID"
	wait "$DAEMON_PID"; rc=$?
	DAEMON_PID=""
	[ $rc -eq 0 ] || { cat "$T/daemon.log"; fail "daemon exited with $rc"; }
}

# daemon_gone TENTHS: wait up to TENTHS tenths of a second for the daemon
# to exit; 0 if it did (DAEMON_PID is then waited for, its status in
# DAEMON_RC, and cleared), 1 if it still runs.
daemon_gone() {
	for _ in $(seq 1 "$1"); do
		kill -0 "$DAEMON_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$DAEMON_PID" 2>/dev/null && return 1
	wait "$DAEMON_PID"; DAEMON_RC=$?
	DAEMON_PID=""
	return 0
}

# stallfs_setup: skips without FUSE; builds $T/stallfs (tests/progs/stallfs.c)
# and $T/big, an ELF program (capver) padded past the first MiB, so that
# stallfs's "late" mode answers its build-id read and not a copy of it.
stallfs_setup() {
	command -v fusermount3 >/dev/null 2>&1 || skip "fusermount3 is not installed (fuse3)"
	[ -c /dev/fuse ] || skip "no /dev/fuse"
	pkg-config --exists fuse3 || skip "libfuse3-dev is not installed"
	cc -O2 -o "$T/stallfs" tests/progs/stallfs.c $(pkg-config --cflags --libs fuse3) ||
		fail "cannot build tests/progs/stallfs.c"
	cc -O0 -g -Wl,--build-id -DVERSION=1 -DKONST=$$ -o "$T/v1" tests/progs/capver.c ||
		fail "cannot build capver"
	{ cat "$T/v1"; head -c 4194304 /dev/zero; } > "$T/big"
}

# fuse_abort MOUNTPOINT PID: abort a FUSE connection (frees any request in
# it), kill its server, unmount.  The connection's number from mountinfo:
# a stat of the mount point could hang.
fuse_abort() {
	_fc=$(awk -v m="$1" '$5 == m { print $3 }' /proc/self/mountinfo | cut -d: -f2)
	[ -d /sys/fs/fuse/connections ] && ! mountpoint -q /sys/fs/fuse/connections &&
		mount -t fusectl none /sys/fs/fuse/connections 2>/dev/null
	[ -n "$_fc" ] && [ -w "/sys/fs/fuse/connections/$_fc/abort" ] &&
		echo 1 > "/sys/fs/fuse/connections/$_fc/abort"
	kill -9 "$2" 2>/dev/null
	fusermount3 -uz "$1" 2>/dev/null || umount -l "$1" 2>/dev/null
}

# in_cache ID: the binary of build-id ID is in the daemon's cache, waited
# for up to 10 s; fails if it is not.
in_cache() {
	for _ in $(seq 1 100); do
		[ -e "$T/state/debug/.build-id/$(echo "$1" | cut -c1-2)/$(echo "$1" | cut -c3-)" ] &&
			return 0
		sleep 0.1
	done
	return 1
}

# kept_map PID: the JIT map of PID kept with a segment, waited for up to 5 s
# (the worker keeps it after the process exits); fails if there is none.
kept_map() {
	for _ in $(seq 1 50); do
		ls "$T/state/segments/"*.jit/perf-$1.map 2>/dev/null | head -1 | grep . && return 0
		sleep 0.1
	done
	return 1
}

# The GNU build-id of a file, as readelf -n prints it.
readelf_buildid() {
	LC_ALL=C readelf -n "$1" 2>/dev/null | sed -n 's/^ *Build ID: *\([0-9a-f]*\).*/\1/p' | head -1
}
# buildids FILE...: "FILE BUILD-ID" for each file that has one, from one
# readelf for all (a process per file is seconds a thousand on a host
# whose fork is slow).  Paths without blanks.
buildids() {
	LC_ALL=C readelf -n "$@" 2>/dev/null | awk -v one="${1-}" -v n=$# '
		n == 1 && f == "" { f = one }
		/^File: / { f = $2 }
		/^ *Build ID: / && f != "" { print f, $3; f = "" }'
}

# bundle_files BUNDLE: the members of an export's perf.symbols.tar.bz2.
bundle_files() { tar -xOf "$1" perf.symbols.tar.bz2 | tar -tjf -; }

segments() { ls "$T/state/segments/"perf-*.data 2>/dev/null | sort; }

# $T/v1 and $T/v2: two versions of tests/progs/capver.c (v1 runs
# pm_capv1_hot, v2 pm_capv2_hot) whose build-ids the kernel cannot read
# (tests/progs/hidenote.c); ID1 and ID2 their build-ids, distinct.
build_versions() {
	cc -O2 -o "$T/hidenote" tests/progs/hidenote.c || fail "cannot build tests/progs/hidenote.c"
	for v in 1 2; do
		cc -O0 -g -fno-omit-frame-pointer $(unique_buildid) -DVERSION=$v -o "$T/v$v" \
			tests/progs/capver.c || fail "cannot build tests/progs/capver.c"
		"$T/hidenote" "$T/v$v" || fail "hidenote v$v"
	done
	ID1=$(readelf_buildid "$T/v1"); ID2=$(readelf_buildid "$T/v2")
	[ -n "$ID1" ] && [ -n "$ID2" ] && [ "$ID1" != "$ID2" ] || fail "v1 and v2 need distinct build-ids"
}

# SEG's samples as perf script shows them with the cache STATE/debug: one
# "PID SYMBOL" line per sample (the sampled frame only), appended to OUT.
pid_symbols() {
	perf --buildid-dir "$T/state/debug" script -i "$1" -F pid,ip,sym --max-stack=1 \
		> "$T/pid_symbols.out" 2>/dev/null || fail "perf script failed on $1"
	awk '/^ *[0-9]+ *$/ { pid = $1; next } pid != "" && NF >= 2 { print pid, $2; pid = "" }' \
		"$T/pid_symbols.out" >> "$2"
}

# Header values of a segment, in perf's microsecond format.
seg_first() { perf report --header-only -i "$1" 2>/dev/null | sed -n 's/^# time of first sample : //p'; }
seg_last()  { perf report --header-only -i "$1" 2>/dev/null | sed -n 's/^# time of last sample : //p'; }
# Where the segment's cut began (CLOCK_DATA's monotonic reference, in seconds, ns digits).
seg_cut() { perf report --header-only -i "$1" 2>/dev/null | sed -n 's/^# reference time: .* = \([0-9.]*\) (monotonic)$/\1/p'; }
seg_samples() { perf report -D -i "$1" 2>/dev/null | grep -c 'PERF_RECORD_SAMPLE('; }

# The pprof tool, built offline from Debian's sources into $PPROF (go's
# build cache is shared between tests).
need_pprof() {
	command -v go >/dev/null 2>&1 || skip "go is not installed (golang-go)"
	[ -d /usr/share/gocode/src/github.com/google/pprof ] ||
		skip "pprof's sources are not installed (golang-github-google-pprof-dev)"
	PPROF=$T/pprof
	GOPATH=/usr/share/gocode GO111MODULE=off GOCACHE=${GOCACHE:-/tmp/perfmapd-gocache} \
		HOME=$T go build -o "$PPROF" github.com/google/pprof || fail "cannot build pprof"
}

# Sum of the samples/count values of a pprof profile, as pprof -raw prints them.
pprof_samples() {
	"$PPROF" -symbolize=none -raw "$1" 2>/dev/null |
		awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
		     s && /^ *[0-9]+ +[0-9]+: / { n += $1 } END { print n + 0 }'
}
