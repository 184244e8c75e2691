# tests/hostile/lib.sh - what the adversarial tests (tests/integration/
# t_hostile_*.sh) share; sourced after tests/lib.sh.  The attacks run as
# real unprivileged users the test creates (useradd) and removes at the
# end, with their processes: each user is named pmh<tag>PID, so runs of
# several checkouts on one machine do not meet.
#
#	new_user VAR TAG       create a user (group nogroup, shell /bin/sh);
#	                       VAR is set to its name
#	user_home USER         a directory of USER's under $T (which becomes 0711)
#	build_hostile NAME     tests/hostile/NAME.c into $T/NAME, for anyone to run
#	new_group VAR TAG USER...  create a group with these members; VAR is
#	                       set to its name
#	as_user USER CMD...    run CMD as USER (its own uid, gid, no other groups
#	                       unless given to new_group)
#	start_pinger [MS]      root pings the daemon every MS ms (default 20)
#	stop_pinger            stops it: its line (pings, p50, p99, ...) is in
#	                       $T/pinger.out
#	ping_ok LINE           fails unless no ping failed or took over 100 ms
#	                       (under the sanitizers: unless none failed); the
#	                       time the pinger itself waited for a CPU is the
#	                       scheduler's, taken out (tests/progs/pinger.c);
#	                       pings over 50 ms are listed, with the pinger's
#	                       and the daemon loop's runqueue waits
#	daemon_rss_kb          VmRSS of the daemon; daemon_hwm_kb its peak
#	counter KEY            a field of "status --json" (counters.lost, ...)
#	no_loss                fails if a record or a sample was lost (not
#	                       judged under the sanitizers: their daemon is slow)
#	figure NAME VALUE      a figure for RESULTS.md ("FIGURE test name value")
#	sanitized              (tests/lib.sh) true under ASan or TSan
#	hostile_start          the checks every test needs; user A (home H);
#	                       $T/spin, for anyone to run
#	secret_binary          root's private binary $T/secret/bin (0700, in a
#	                       0700 directory) printing the marker $MARK after
#	                       0.3 s on the CPU (samples in the segment); its
#	                       build-id in $K
#	hostile_judge          stop the pinger: figures; fail on a ping that
#	                       failed or took 100 ms, or a record lost

PINGER_PID=""

hostile_cleanup() {
	[ -n "$PINGER_PID" ] && kill "$PINGER_PID" 2>/dev/null
	cleanup
}
trap 'TEST_RC=$?; hostile_cleanup' EXIT

need_useradd() {
	command -v useradd >/dev/null 2>&1 && command -v setpriv >/dev/null 2>&1 ||
		skip "useradd and setpriv are needed to attack as other users"
}

new_user() { test_user "$1" "pmh$2" nogroup /bin/sh; }

user_home() {
	chmod 0711 "$T"
	mkdir -p "$T/home-$1" && chown "$1" "$T/home-$1" && chmod 0755 "$T/home-$1" ||
		fail "home of $1"
	echo "$T/home-$1"
}

build_hostile() {
	chmod 0711 "$T"
	cc -O1 -o "$T/$1" "$TOP/tests/hostile/$1.c" || fail "cannot build tests/hostile/$1.c"
	chmod 0755 "$T/$1"
}

new_group() { _ngv=$1 _ngt=$2; shift 2; test_group "$_ngv" "pmh$_ngt" "$@"; }

as_user() {
	_u=$1
	shift
	setpriv --reuid="$_u" --regid="$(id -g "$_u")" --init-groups -- "$@"
}

start_pinger() {
	[ -x "$T/pinger" ] || build_prog pinger
	"$T/pinger" "$T/control.sock" "${1:-20}" 3600 "$DAEMON_PID" > "$T/pinger.out" \
		2> "$T/pinger.slow" &
	PINGER_PID=$!
}

# Not in a subshell ($(stop_pinger) could not wait for it): the line is in
# $T/pinger.out once this returns.
stop_pinger() {
	kill -TERM "$PINGER_PID" 2>/dev/null
	wait "$PINGER_PID" 2>/dev/null
	PINGER_PID=""
}

# Under the sanitizers the daemon runs several times slower: every ping must
# still be answered, but 100 ms is a figure of the real build.
ping_ok() {
	if sanitized; then
		echo "$1" | grep -q ' failed 0$' || fail "root's ping under attack: $1"
	else
		echo "$1" | grep -q ' over_100ms 0 failed 0$' || fail "root's ping under attack: $1"
	fi
}

daemon_rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$DAEMON_PID/status"; }
daemon_hwm_kb() { awk '/^VmHWM/ {print $2}' "/proc/$DAEMON_PID/status"; }

counter() {
	"$PERFMAPCTL" -s "$T/control.sock" --json status | jq -r ".$1"
}

# no_loss: no record or sample lost since the start.  Under ThreadSanitizer
# the loop runs 5-15 times slower and an exec storm can outrun the rings:
# there a loss is reported, not judged (make check judges it on the real
# build; the sanitizers' job is memory and races).
no_loss() {
	# (a ring read given up loses what the kernel wrote there, unlike a
	# LOST record without a word: never, whatever the load)
	_t=$(counter counters.ring_torn) _o=$(counter counters.ring_overruns)
	[ "$_t" = 0 ] && [ "$_o" = 0 ] || fail "ring reads given up under attack: $_t torn, $_o overruns"
	_l=$(counter counters.lost) _s=$(counter counters.lost_samples)
	[ "$_l" = 0 ] && [ "$_s" = 0 ] && return 0
	# A sanitizer's daemon runs several times slower than the real one:
	# what it loses says nothing of the daemon's (make check judges that).
	sanitized && { note "records lost under attack ($BUILD, not judged): $_l records, $_s samples"; return 0; }
	fail "records lost under attack: $_l records, $_s samples"
}

# figure NAME VALUE: a figure for tests/bench/RESULTS.md, in the log
figure() { echo "FIGURE $TEST_NAME $1 $2"; }
TEST_NAME=$(basename "$0" .sh)

hostile_start() {
	need_events
	need_useradd
	command -v jq >/dev/null 2>&1 || skip "jq is not installed"
	new_user A a
	H=$(user_home "$A")
	build_prog spin
	chmod 0755 "$T/spin"
}

secret_binary() {
	MARK=pm-secret-$$-$(date +%s)
	mkdir -m 0700 "$T/secret"
	# (0.3 s on the CPU in its own loop before it prints, clock() being a
	# system call: samples, so that an export of the segment's hits holds it)
	printf '#include <stdio.h>\n#include <time.h>\nint main(void) { volatile unsigned long i; while (clock() < CLOCKS_PER_SEC * 3 / 10) for (i = 0; i < 1000000; i++) ; puts("%s"); return 0; }\n' "$MARK" > "$T/secret/s.c"
	cc -O0 -o "$T/secret/bin" "$T/secret/s.c" $(unique_buildid) || fail "cannot build the secret binary"
	chmod 0700 "$T/secret/bin"
	K=$(readelf_buildid "$T/secret/bin")
}

hostile_judge() {
	stop_pinger
	_line=$(cat "$T/pinger.out")
	note "ping under attack: $_line"
	[ -s "$T/pinger.slow" ] && sed 's/^/   slow /' "$T/pinger.slow" | tail -n 20
	figure ping "$_line"
	ping_ok "$_line"
	no_loss
}

# stallfs_mount: the user's stalling FUSE file system (tests/progs/stallfs.c,
# "late": the build-id read answered, a copy not) on $H/mnt serving $T/big
# (build-id $FID) as prog, and $T/plain (build-id $PID_), a binary of
# root's to see captured after it; the connection aborted at exit.
stallfs_mount() {
	stallfs_setup
	FID=$(readelf_buildid "$T/big")
	cc -O0 -g -Wl,--build-id -DVERSION=2 $(unique_buildid) -o "$T/plain" tests/progs/capver.c ||
		fail "cannot build capver"
	PID_=$(readelf_buildid "$T/plain")
	mkdir "$H/mnt" && chown "$A" "$H/mnt"
	setpriv --ruid="$A" -- "$T/stallfs" "$T/big" "$H/mnt" "$T/target.pid" late > "$T/fs.log" 2>&1 &
	FS=$!
	trap 'TEST_RC=$?; fs_abort; hostile_cleanup' EXIT
	for _ in $(seq 1 50); do [ -x "$H/mnt/prog" ] && break; sleep 0.1; done
	[ -x "$H/mnt/prog" ] || { cat "$T/fs.log"; fail "the FUSE file system did not come up"; }
}
fs_abort() { fuse_abort "$H/mnt" "$FS"; }

# capture_goes_on WHAT: after the user's program (WHAT) was read, root's
# plain program is captured, a snapshot's store answers within 20 s (its
# output in $T/store.out, the segment $seg), ping stayed quick, and the
# user's program's build-id was read (its copy tried).
capture_goes_on() {
	"$T/plain" 0.3 || fail "the plain program failed"
	_cached=""
	in_cache "$PID_" && _cached=1
	seg=$(timeout 10 "$PERFMAPCTL" -s "$T/control.sock" snapshot) || fail "snapshot"
	timeout 20 "$PERFMAPCTL" -s "$T/control.sock" store "$seg" > "$T/store.out" 2>&1
	_rc=$?
	note "store (rc $_rc): $(grep -E "$FID|$PID_" "$T/store.out" | tr '\n' ' ')"
	hostile_judge
	[ -n "$_cached" ] || fail "a plain binary was not captured after $1"
	[ "$_rc" = 124 ] && fail "store did not answer within 20 s"
	perf buildid-list -i "$seg" 2>/dev/null | grep -q "^$FID " ||
		fail "the build-id of $1 was not read: the copy was never tried"
}

# refused_for PATTERN WHAT: the daemon's log or store's output gives the
# user's program (build-id $FID) a reason matching PATTERN.
refused_for() {
	grep -h "$FID" "$T/daemon.log" "$T/store.out" | grep -q "$1" ||
		fail "no reason $2: $(grep -h "$FID" "$T/daemon.log" "$T/store.out")"
}
