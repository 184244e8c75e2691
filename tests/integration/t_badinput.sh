#!/bin/sh
# Bad input at start-up: each case gives exactly one clear error line on
# stderr and a non-zero exit, and leaves no daemon behind.  The cases of an
# unprivileged user run as a real one made for the test.
# test-lane: alone (tests/run-tests.sh: it lowers the host's perf_event_max_sample_rate)
. tests/lib.sh
need_events
test_group PMG pmbad
test_user PMU pmbad "$PMG"
# as_user CMD...: CMD as that user, in its group only
as_user() { setpriv --reuid="$PMU" --regid="$PMG" --clear-groups "$@"; }

# expect_error NAME PATTERN CMD...: CMD fails with one stderr line matching PATTERN.
expect_error() {
	name=$1 pattern=$2; shift 2
	"$@" > "$T/out" 2> "$T/err" && fail "$name: exit status 0"
	lines=$(wc -l < "$T/err")
	[ "$lines" -eq 1 ] || { cat "$T/err"; fail "$name: $lines stderr lines, want 1"; }
	grep -q -- "$pattern" "$T/err" || { cat "$T/err"; fail "$name: error does not match '$pattern'"; }
	note "$name: $(cat "$T/err")"
}

conf() { printf '%s\n' "$1" > "$T/c.conf"; }

expect_error "missing config" "$T/nope.conf: No such file or directory" \
	"$PERFMAPD" -n -c "$T/nope.conf"
mkdir "$T/dir.conf"
expect_error "config is a directory" "dir.conf" "$PERFMAPD" -n -c "$T/dir.conf"
conf "[record]"; chmod 600 "$T/c.conf"; chmod 755 "$T"
expect_error "unreadable config" "c.conf: Permission denied" as_user "$PERFMAPD" -n -c "$T/c.conf"
conf "[record]
frequency = 99
bogus = 1"
expect_error "unknown key" "c.conf:3: .*bogus" "$PERFMAPD" -n -c "$T/c.conf"
conf "[segments]
rotate_size = -1"
expect_error "negative size" "c.conf:2:.*rotate_size" "$PERFMAPD" -n -c "$T/c.conf"
conf "[segments]
compress = lz4"
expect_error "unknown compression" 'c.conf:2: \[segments\] compress: "lz4" is not one of none, zstd' \
	"$PERFMAPD" -n -c "$T/c.conf"
for lvl in 0 23; do
	conf "[segments]
compress = zstd
compress_level = $lvl"
	expect_error "compress_level $lvl" "c.conf:3: \[segments\] compress_level: $lvl is out of range (1..22)" \
		"$PERFMAPD" -n -c "$T/c.conf"
done
conf "[nosuchsection]"
expect_error "unknown section" "c.conf:1:" "$PERFMAPD" -n -c "$T/c.conf"
conf "[record]
ring_size = 12345"
expect_error "ring not a power of two" "ring_size" "$PERFMAPD" -n -c "$T/c.conf"
"$PERFMAPD" --no-such-option 2> "$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q '^usage: perfmapd' "$T/err" || fail "bad option: exit $rc, no usage"

conf "[record]"
"$PERFMAPD" -n -c "$T/c.conf" 2>/dev/null || fail "a good config is refused by -n"
# relative paths on the command line, as README's `make run` gives them
( cd "$T" && "$PERFMAPD" -n -c c.conf --state-dir ./state --socket ./state/control.sock \
	2>/dev/null ) || fail "relative --state-dir/--socket refused"

: > "$T/file"
expect_error "state dir under a file" "$T/file/state" \
	"$PERFMAPD" -f -c "$T/c.conf" --state-dir "$T/file/state"
mkdir -p "$T/ro/state"
mount -t tmpfs -o ro,size=1m,mode=0750 tmpfs "$T/ro/state" || skip "cannot mount a tmpfs"
at_exit "umount '$T/ro/state' 2>/dev/null"
expect_error "read-only state dir" "$T/ro/state" \
	"$PERFMAPD" -f -c "$T/c.conf" --state-dir "$T/ro/state"
umount "$T/ro/state"

# perf events not permitted: an unprivileged user with a writable state dir.
# perf_event_paranoid below 1 lets anyone open system-wide events: nothing
# to refuse then (a setting of the host, not the test's to change).
if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 1 ]; then
	mkdir -p "$T/user"; chown "$PMU" "$T/user"; chmod 644 "$T/c.conf"
	expect_error "perf events not permitted" "perf_event_open.*CAP_PERFMON" \
		as_user "$PERFMAPD" -f -c "$T/c.conf" --state-dir "$T/user/state"
else
	note "perf_event_paranoid is $(cat /proc/sys/kernel/perf_event_paranoid): refused perf events not tested"
fi

# A frequency above the kernel's limit (which the kernel itself lowers when
# sampling takes too long, as in many VMs): lowered to the limit and said,
# as perf record does.  Before, every perf_event_open failed with EINVAL,
# taken first for a kernel without namespace records ("every mapping is
# taken as the host's"), and the daemon did not start.
R=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
if echo 5000 > /proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null; then
	at_exit "echo $R > /proc/sys/kernel/perf_event_max_sample_rate"
	start_daemon "[record]
frequency = 9999"
	f=$("$PERFMAPCTL" -s "$T/control.sock" --json status | jq .frequency)
	echo "$R" > /proc/sys/kernel/perf_event_max_sample_rate
	grep -q "frequency 9999 is above kernel.perf_event_max_sample_rate (5000): sampling at 5000 Hz" \
		"$T/daemon.log" || fail "a frequency above the kernel's limit is not said"
	grep -q "no namespace records" "$T/daemon.log" && fail "the kernel's limit was taken for an old kernel"
	[ "$f" = 5000 ] || fail "status says frequency $f, not the 5000 Hz it samples at"
	stop_daemon
else
	note "cannot lower kernel.perf_event_max_sample_rate: a frequency above it not tested"
fi

# A second daemon on the same state directory is refused.
start_daemon "[record]"
expect_error "state dir in use" "in use by another perfmapd" \
	"$PERFMAPD" -f -c "$T/perfmapd.conf" --state-dir "$T/state"
stop_daemon
echo "PASS"
