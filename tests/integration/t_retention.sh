#!/bin/sh
# Retention by size and by age (by count: t_capture_evict and the soak):
# the oldest closed segments are deleted, the index marks them deleted, the
# newest stay, and what is left reads in perf.
# test-lane: beside (tests/run-tests.sh: light, judged in seconds)
. tests/lib.sh
need_events
need_perf
S=$T/control.sock
ctl() { "$PERFMAPCTL" -s "$S" "$@"; }
deleted() { ctl --json segments --all | jq '[.segments[] | select(.state == "deleted")] | length'; }
all_read() {
	for seg in $(segments); do
		perf report -i "$seg" --stdio > /dev/null 2>&1 || fail "perf cannot read $seg"
	done
}

# keep_size: a snapshot every 0.3 s (~100 kB each at 999 Hz; segments end
# only there) until several times keep_size was written
start_daemon "[record]
frequency = 999
[segments]
rotate_size = 0
keep_size = 256K"
i=0 last=""
while [ $i -lt 15 ]; do
	last=$(ctl snapshot) || fail "snapshot"
	sleep 0.3
	i=$((i + 1))
done
total=$(segments | xargs cat | wc -c)
n=$(segments | wc -l)
gone=$(deleted)
note "keep_size 256K: $n closed segments, $total bytes, $gone deleted"
# the newest one stays even if it alone is larger than keep_size
[ "$total" -le 262144 ] || [ "$n" -eq 1 ] ||
	fail "$n closed segments hold $total bytes; keep_size is 256K"
[ "$gone" -ge 1 ] || fail "nothing was deleted: the test proves nothing"
[ -f "$last" ] || fail "the newest segment $last, which snapshot just printed, was deleted"
# no more deleted than needed: without the oldest one kept, the total would be under
kept_oldest=$(segments | head -n 1)
[ "$n" -eq 1 ] || [ $((total - $(stat -c %s "$kept_oldest"))) -le 262144 ] ||
	fail "the oldest kept segment could have gone"
all_read
stop_daemon
rm -rf "$T/state"

# keep_age: rotation every second, segments older than 2 s go (checked at
# each rotation, so none is older than 2 s + a rotation + mtime's second)
start_daemon "[segments]
rotate_age = 1s
keep_age = 2s"
sleep 7
now=$(date +%s)
oldest=$(stat -c %Y $(segments) | sort -n | head -n 1)
n=$(segments | wc -l)
gone=$(deleted)
note "keep_age 2s: $n closed segments, the oldest $((now - oldest)) s old, $gone deleted"
[ "$gone" -ge 2 ] || fail "only $gone deleted in 7 s of 1 s segments"
[ $((now - oldest)) -le 4 ] || fail "a segment $((now - oldest)) s old is kept; keep_age is 2s"
[ "$n" -ge 1 ] || fail "every segment was deleted"
# stopped first: a running daemon deletes a segment every second here, and
# one went between the listing and perf's open (under TSan in CI)
stop_daemon
all_read
echo "PASS: retention by size and by age"
