#!/bin/sh
# Adversarial: a user's mount namespace (issue 16, "Poison").  In
# `unshare -Urm`, a user bind-mounts a binary of theirs over
# /usr/bin/passwd and runs it - once with a build-id of its own, once with
# the build-id of the host's /usr/bin/passwd forged into its note (anyone
# can write any build-id); and once, with a build-id of its own, as
# DIR/usr/bin/passwd under `unshare -Ur chroot DIR` (a user namespace, no
# mount namespace: the kernel names the file /usr/bin/passwd), and once
# from the host's namespaces, through /proc/PID/root of a process in their
# namespace (the kernel names the file by its path there, /usr/bin/passwd),
# before the daemon starts and after.  Then the host runs its passwd.  The host's
# history of /usr/bin/passwd (history, lookup) shows only the host's
# build-id and sightings; --all-namespaces shows the user's, labelled with
# their namespace and uid; the cache's copy of the host's build-id is the
# host's file, byte for byte, and nothing the user made is filed under
# usr/bin/passwd.  Root's ping is answered within 100 ms, nothing is lost.
# An index rebuilt from the segments keeps the user's sightings apart too,
# also those of a process of the user's namespace that ran before the
# daemon started: its map is in the start state of the segments, not in a
# record of the kernel's.
. tests/lib.sh
. tests/hostile/lib.sh
hostile_start
need_perf
P=/usr/bin/passwd
[ -x "$P" ] || skip "no $P"
HOSTID=$(readelf_buildid "$P")
[ -n "$HOSTID" ] || skip "$P has no build-id"

build_hostile mkelf
as_user "$A" "$T/mkelf" forge "$T/spin" "$H/own" 0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f ||
	fail "mkelf forge own"
as_user "$A" "$T/mkelf" forge "$T/spin" "$H/forged" "$HOSTID" || fail "mkelf forge host id"
[ "$(readelf_buildid "$H/forged")" = "$HOSTID" ] || fail "the forged binary does not carry $HOSTID"
as_user "$A" unshare -Urm sh -c "mount --bind '$H/own' '$P'" 2>/dev/null ||
	skip "this user cannot unshare -Urm and bind-mount"
# A chroot in a user namespace of the user's own, no mount namespace: the
# kernel names the chroot's files by their paths inside it.
CHROOTED=0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c
R=$H/root
for f in $(ldd "$T/spin" | grep -o '/[^ ]*'); do
	mkdir -p "$R$(dirname "$f")" && cp -L "$f" "$R$f" || fail "cannot copy $f into $R"
done
mkdir -p "$R$(dirname "$P")"
chown -R "$A" "$R"
as_user "$A" "$T/mkelf" forge "$T/spin" "$R$P" $CHROOTED || fail "mkelf forge chrooted"
as_user "$A" unshare -Ur chroot "$R" "$P" 0 || skip "this user cannot unshare -Ur chroot"
EARLY=0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e
as_user "$A" "$T/mkelf" forge "$T/spin" "$H/early" $EARLY || fail "mkelf forge early"
setpriv --reuid="$A" --regid="$(id -g "$A")" --init-groups -- \
	unshare -Urm sh -c "mount --bind '$H/early' '$P' && exec '$P' 8" &
EPID=$!
BG_PIDS="${BG_PIDS:-} $EPID"
sleep 0.5
# ... and a process of the host's namespaces running it through its
# /proc/PID/root before the start (the scan reads it).
setpriv --reuid="$A" --regid="$(id -g "$A")" --init-groups -- "/proc/$EPID/root$P" 6 &
BG_PIDS="$BG_PIDS $!"
sleep 0.3

start_daemon "[record]
frequency = 499
drain_interval = 50ms
[segments]
rotate_age = 2s"
sleep 1
start_pinger
t0=$(date +%s%N)
for f in own forged; do
	as_user "$A" unshare -Urm sh -c "mount --bind '$H/$f' '$P' && exec '$P' 0.4" ||
		fail "the attack did not run ($f)"
done
as_user "$A" unshare -Ur chroot "$R" "$P" 0.4 || fail "the attack did not run (chroot)"
# From the host's namespace, the early process's bind mount reached
# through its /proc/PID/root: the kernel names the file by its path there.
grep -q " $P\$" "/proc/$EPID/maps" || fail "the early process does not map $P"
as_user "$A" "/proc/$EPID/root$P" 0.4 || fail "the attack did not run (/proc/PID/root)"
t1=$(date +%s%N)
sleep 1
"$P" --help >/dev/null 2>&1	# the host's passwd, mapped by the host
sleep 1.5
hostile_judge

Q() { "$PERFMAPCTL" -s "$T/control.sock" --json "$@"; }
Q history "$P" > "$T/h.json" || fail "history $P"
note "host history: $(jq -c '[.objects[] | [.build_id[0:8], .first_seen, .mnt_ns]]' "$T/h.json")"
jq -e --arg h "$HOSTID" '[.objects[].build_id] | all(. == $h)' "$T/h.json" >/dev/null ||
	fail "the host's history of $P holds a build-id the user made"
jq -e --argjson t0 "$t0" --argjson t1 "$t1" \
	'[.objects[] | select(.first_seen_ns >= $t0 and .first_seen_ns <= $t1)] | length == 0' \
	"$T/h.json" >/dev/null || fail "the host's history of $P shows a sighting from the user's namespace"
mid=$(( (t0 + t1) / 2 ))
Q lookup "$P" --at "@$((mid / 1000000000)).$(printf %09d $((mid % 1000000000)))" > "$T/l.json" 2>/dev/null
jq -e '.mapped | length == 0' "$T/l.json" >/dev/null 2>&1 ||
	fail "lookup $P during the attack says something was mapped: $(cat "$T/l.json")"
Q history "$P" --all-namespaces > "$T/ha.json" || fail "history --all-namespaces"
note "all namespaces: $(jq -c '[.objects[] | [.build_id[0:8], .mnt_ns]]' "$T/ha.json")"
uid=$(id -u "$A")
jq -e --arg u "of uid $uid" '[.objects[] | select(.build_id == "0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f")
	| .mnt_ns | endswith($u)] | length == 1 and all' "$T/ha.json" >/dev/null ||
	fail "--all-namespaces does not show the user's binary labelled with its namespace and uid $uid"
jq -e --arg c $CHROOTED --arg u "of uid $uid" '[.objects[] | select(.build_id == $c)
	| .mnt_ns | endswith($u)] | length == 1 and all' "$T/ha.json" >/dev/null ||
	fail "--all-namespaces does not show the chrooted binary labelled with its user namespace and uid $uid"
# buildid and segments SEG list every namespace's rows: the user's row of
# the host's path says whose it is, in JSON and in text (before, both
# showed the user's binary under /usr/bin/passwd as the host's)
Q buildid "$HOSTID" > "$T/b.json" || fail "buildid $HOSTID"
jq -e --arg p "$P" --arg u "of uid $uid" '[.objects[] | select(.path == $p)] | all(.mnt_ns != null)
	and (map(select(.mnt_ns | endswith($u))) | length) >= 1' "$T/b.json" > /dev/null ||
	fail "buildid $HOSTID: the user's row of $P and the host's are not told apart: $(jq -c '[.objects[] | [.path, .mnt_ns]]' "$T/b.json")"
"$PERFMAPCTL" -s "$T/control.sock" buildid "$HOSTID" > "$T/b.txt" || fail "buildid (text)"
grep " $P .*of uid $uid" "$T/b.txt" > /dev/null ||
	{ cat "$T/b.txt"; fail "buildid's text shows the user's row of $P as the host's"; }
seg=$(Q buildid 0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f | jq -r '.segments[0].name')
Q segments "$seg" | jq -e 'all(.objects[]; .mnt_ns != null)' > /dev/null ||
	fail "segments $seg: rows of the host and of the user's namespace are not told apart"
"$PERFMAPCTL" -s "$T/control.sock" segments "$seg" > "$T/s.txt" || fail "segments $seg (text)"
grep "^0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f .*of uid $uid" "$T/s.txt" > /dev/null ||
	{ cat "$T/s.txt"; fail "segments $seg's text shows the user's row of $P as the host's"; }
# The cache: the host's build-id is the host's file; the user's are under .ns/.
C=$T/state/debug
for _ in $(seq 1 20); do [ -f "$C$P/$HOSTID/elf" ] && break; sleep 0.25; done
[ -f "$C$P/$HOSTID/elf" ] || { find "$C" -path '*passwd*'; fail "the host's $P was not copied under its path"; }
cmp -s "$C$P/$HOSTID/elf" "$P" || fail "the cache's copy of $HOSTID is not the host's $P"
l=$C/.build-id/$(echo "$HOSTID" | cut -c1-2)/$(echo "$HOSTID" | cut -c3-)
cmp -s "$l/elf" "$P" || fail "perf's link for $HOSTID leads to something else than $P"
[ -e "$C$P/0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f" ] &&
	fail "the user's binary is filed under the host's path"
stop_daemon
# An index rebuilt from the segments (a damaged index.db) keeps them apart too.
head -c 65536 /dev/urandom > "$T/state/index.db"
rm -f "$T/state/index.db-wal" "$T/state/index.db-shm"
start_daemon "[record]
frequency = 99"
grep -q "rebuilding it from the segments" "$T/daemon.log" || fail "index.db was not rebuilt"
stop_daemon
# perf reads the start state's NAMESPACES record of the early process.
seg1=$(segments | head -1)
perf script -i "$seg1" --show-namespace-events 2>"$T/perf.err" |
	grep -q "PERF_RECORD_NAMESPACES $EPID/$EPID - nr_namespaces: 7" ||
	fail "perf script shows no NAMESPACES record of pid $EPID in $seg1: $(head -3 "$T/perf.err")"
"$PERFMAPCTL" --state-dir "$T/state" --json history "$P" > "$T/h2.json" || fail "history after the rebuild"
jq -e --arg h "$HOSTID" '[.objects[].build_id] | all(. == $h)' "$T/h2.json" >/dev/null ||
	fail "after a rebuild, the host's history of $P holds a build-id the user made: $(jq -c '[.objects[].build_id]' "$T/h2.json")"
"$PERFMAPCTL" --state-dir "$T/state" --json history "$P" --all-namespaces > "$T/ha2.json" ||
	fail "history --all-namespaces after the rebuild"
jq -e --arg e "$EARLY" '[.objects[] | select(.build_id == $e)] | length >= 1' "$T/ha2.json" \
	>/dev/null || fail "the early process's sighting is gone after the rebuild: the test proves nothing"
echo "PASS: a user's namespace writes neither the host's history nor its cache"
