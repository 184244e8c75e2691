#!/bin/sh
# store streams one reply per build-id, and a client reads them as it
# prints them.  The loop sent every reply it had at once: replies made
# faster than the client read passed CONTROL_MAX_OUTPUT (16 MiB) and the
# client was dropped in the middle of the store (a store of some 55,000
# build-ids; or a user's few hundred binaries under long paths of control
# characters, each reply 47 KB: the snapshot --store of the shipped timer
# failed; found by a review).  Now a client's replies wait while it has
# 256 KiB unread, and the worker waits for them.  Here 600 binaries, each
# with a build-id of its own, under a 3,856-byte path of \001 bytes, in
# one segment: perfmapctl store lists them all.
. tests/lib.sh
need_events
command -v jq >/dev/null 2>&1 || skip "jq is not installed"
build_prog spin
cc -O1 -o "$T/mkelf" "$TOP/tests/hostile/mkelf.c" || fail "cannot build tests/hostile/mkelf.c"
n=$(printf '%240s' '' | tr ' ' '\001')
D=$T
for _ in $(seq 1 16); do D=$D/$n; done
mkdir -p "$D" || fail "cannot make the long directory"
N=600
for i in $(seq 1 $N); do
	"$T/mkelf" forge "$T/spin" "$D/b$i" "$(printf '%040x' $((i + 0x5100)))" || fail "mkelf forge $i"
done
sync	# their writeback (page locks) is not in the reads' way
start_daemon "[record]
frequency = 99"
S=$T/control.sock
ctl() { "$PERFMAPCTL" -s "$S" "$@"; }
for b in $(seq 1 50 $N); do
	pids=""
	for i in $(seq $b $((b + 49))); do nice -n 19 "$D/b$i" 0.2 & pids="$pids $!"; done
	wait $pids
done
sleep 1
seg=$(ctl snapshot) || fail "snapshot"
# A read a busy host holds past its deadline leaves its mapping unknown
# (and out of the segment's build-ids): right, and rare.  Nine in ten
# still stream some 9 MB of replies, each held while 256 KiB wait unread.
ref=$(perf buildid-list -i "$seg" 2>/dev/null | grep -c '^0\{36\}5[123]')
[ "$ref" -ge $((N * 9 / 10)) ] ||
	fail "the segment references $ref of the $N binaries: the test proves nothing"
ctl store "$seg" > "$T/store.out" 2> "$T/store.err"; rc=$?
ok=$(grep -c '^OK 0\{36\}5[123]' "$T/store.out")
note "store: exit $rc, $ok OK of the $ref binaries the segment references ($N run), $(wc -c < "$T/store.out") bytes read"
grep -q 'does not read its replies' "$T/daemon.log" && fail "the daemon dropped the store's client"
[ $rc = 0 ] || fail "store failed ($rc): $(head -c 300 "$T/store.err")"
[ "$ok" -ge "$ref" ] || fail "store listed $ok of the $ref binaries"
stop_daemon
echo "PASS: a store of $ok replies of ~47 KB each reached its client whole"
