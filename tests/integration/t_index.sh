#!/bin/sh
# The (path, build-id, time) index with a real daemon:
# - a program at a fixed path, replaced by a rebuilt one (new build-id), then
#   deleted: history shows both build-ids in order with ranges that do not
#   overlap, lookup at a time in each range gives the right one, buildid of
#   the old one names the segments where it ran (and perf agrees);
# - the same with two programs sharing one path in two mount namespaces;
# - queries work read-only, daemon running or not, on a copied state dir;
# - kill -9 between commits, restart: the index agrees with the segments;
# - index.db truncated or overwritten: moved aside, rebuilt from the
#   segments with the same objects.
# Queries go through perfmapctl --state-dir (common/index_reader, what perfmapctl
# uses without a daemon); sqlite3 only cross-checks.
. tests/lib.sh
need_events
need_perf
command -v jq >/dev/null 2>&1 || skip "jq is not installed"
command -v sqlite3 >/dev/null 2>&1 || skip "sqlite3 is not installed"
command -v unshare >/dev/null 2>&1 || skip "unshare is not installed"

# Queries through the real client, on the index opened read-only (no daemon
# needed): Q history PATH | lookup PATH [TIME] | buildid ID | segments | segment SEG
Q() {
	q=$1; shift
	case $q in
	lookup)	if [ $# -gt 1 ]; then
			"$PERFMAPCTL" --state-dir "$T/state" --json lookup "$1" --at "$2"
		else
			"$PERFMAPCTL" --state-dir "$T/state" --json lookup "$1"
		fi;;
	segment) "$PERFMAPCTL" --state-dir "$T/state" --json segments "$1";;
	*)	"$PERFMAPCTL" --state-dir "$T/state" --json "$q" "$@";;
	esac
}
SQL() { sqlite3 -readonly "$T/state/index.db" "$@"; }

# Two builds of one program with different build-ids (same code, forced ids).
ID1=1111111111111111111111111111111111111111
ID2=2222222222222222222222222222222222222222
build_prog spin "-Wl,--build-id=0x$ID1"; mv "$T/spin" "$T/spin-v1"
build_prog spin "-Wl,--build-id=0x$ID2"; mv "$T/spin" "$T/spin-v2"
build_prog spin "-Wl,--build-id=0x3333333333333333333333333333333333333333"; mv "$T/spin" "$T/spin-a"
build_prog spin "-Wl,--build-id=0x4444444444444444444444444444444444444444"; mv "$T/spin" "$T/spin-b"
ID5=5555555555555555555555555555555555555555
build_prog spin "-Wl,--build-id=0x$ID5"; mv "$T/spin" "$T/spin-c"
[ "$(readelf_buildid "$T/spin-v1")" = "$ID1" ] || fail "the linker did not take --build-id=0x$ID1"

CONF="[segments]
rotate_age = 1s
[index]
commit_interval = 200ms"
start_daemon "$CONF"
sleep 1.2

# taskset moves the process to CPU 0 just before the exec, so its records
# are in two rings: the index (and the model) must see them in time order.
ON1() { taskset -c 0 "$@"; }
APP=$T/bin/pm-app
mkdir -p "$T/bin"
cp "$T/spin-v1" "$APP"
ON1 "$APP" 0.8
sleep 1.5
cp "$T/spin-v2" "$APP.new" && mv "$APP.new" "$APP"	# replaced: a new inode, as upgrades do
ON1 "$APP" 0.8
rm -f "$APP"

# Two programs at one path, each in its own mount namespace.
NS=$T/ns/app
mkdir -p "$T/ns" "$T/nsA" "$T/nsB"
cp "$T/spin-a" "$T/nsA/app"; cp "$T/spin-b" "$T/nsB/app"
: > "$NS"
sleep 1.5
ON1 unshare -m sh -c "mount --bind '$T/nsA/app' '$NS' && exec '$NS' 0.8" || fail "unshare (namespace A) failed"
sleep 1.5
ON1 unshare -m sh -c "mount --bind '$T/nsB/app' '$NS' && exec '$NS' 0.8" || fail "unshare (namespace B) failed"
sleep 1.5

# While the daemon runs: the rows are there within the commit interval, read-only.
Q history "$APP" > "$T/h.live" || fail "history while the daemon runs failed"
[ "$(jq '.objects | length' "$T/h.live")" = 2 ] || { cat "$T/h.live"; fail "live history: not 2 objects"; }
stop_daemon

check_replaced() {	# PATH OLD NEW: history, lookups, buildid of OLD
	path=$1 old=$2 new=$3
	Q history "$path" > "$T/h" || fail "history $path failed"
	note "history $path: $(jq -c '[.objects[] | [.build_id[0:8], .first_seen, .last_seen]]' "$T/h")"
	[ "$(jq '.objects | length' "$T/h")" = 2 ] || { cat "$T/h"; fail "$path: expected 2 build-ids"; }
	[ "$(jq -r '.objects[0].build_id' "$T/h")" = "$old" ] || fail "$path: first build-id is not $old"
	[ "$(jq -r '.objects[1].build_id' "$T/h")" = "$new" ] || fail "$path: second build-id is not $new"
	jq -e '.objects[0].first_seen_ns <= .objects[0].last_seen_ns and
	    .objects[0].last_seen_ns < .objects[1].first_seen_ns and
	    .objects[1].first_seen_ns <= .objects[1].last_seen_ns' "$T/h" >/dev/null ||
		fail "$path: ranges overlap or are out of order"
	jq -e '.objects[0].nr_procs >= 1 and .objects[0].nr_maps >= 1' "$T/h" >/dev/null ||
		fail "$path: no process or map counted"
	# lookup at a time in each range, and between them (jq reads numbers as
	# doubles: ns are off by up to 256, so 1 us past the first sighting)
	for which in 0 1; do
		ns=$(( $(jq ".objects[$which].first_seen_ns" "$T/h") + 1000 ))
		want=$(jq -r ".objects[$which].build_id" "$T/h")
		at="@$((ns / 1000000000)).$(printf %09d $((ns % 1000000000)))"
		got=$(Q lookup "$path" "$at" | jq -r .current.build_id)
		[ "$got" = "$want" ] || fail "lookup $path at $at: $got, expected $want"
	done
	# The old one ran ~0.8 s, until its exit: mapped in the middle of that.
	mid=$(( ($(jq '.objects[0].first_seen_ns' "$T/h") + $(jq '.objects[0].last_seen_ns' "$T/h")) / 2 ))
	Q lookup "$path" "@$((mid / 1000000000)).$(printf %09d $((mid % 1000000000)))" > "$T/l"
	jq -e --arg id "$old" '.current.build_id == $id and .current.mapped and
	    ([.mapped[].build_id] == [$id])' "$T/l" >/dev/null ||
		{ cat "$T/l"; fail "lookup $path while the old one ran: not mapped"; }
	jq -e '.objects[0].last_seen_ns - .objects[0].first_seen_ns > 500000000' "$T/h" >/dev/null ||
		fail "$path: the old one's range does not cover its run (exit not seen?)"
	gap=$(( ($(jq '.objects[0].last_seen_ns' "$T/h") + $(jq '.objects[1].first_seen_ns' "$T/h")) / 2 ))
	got=$(Q lookup "$path" "@$((gap / 1000000000)).$(printf %09d $((gap % 1000000000)))" |
		jq -r .current.build_id)
	[ "$got" = "$old" ] || fail "lookup $path between the versions: $got, expected $old"
	got=$(Q lookup "$path" now | jq -r .current.build_id)
	[ "$got" = "$new" ] || fail "lookup $path now: $got, expected $new"
	# An ISO date as users type it (UTC, seconds: rounded up past the first sighting).
	iso=$(date -u -d "@$(( $(jq '.objects[1].first_seen_ns' "$T/h") / 1000000000 + 1 ))" +%Y-%m-%dT%H:%M:%SZ)
	got=$(Q lookup "$path" "$iso" | jq -r .current.build_id)
	[ "$got" = "$new" ] || fail "lookup $path at $iso: $got, expected $new"
	# buildid OLD: the segments where it ran, each on disk with OLD in perf's table.
	# (Only those where it ran at PATH: the same test run by someone else on
	# this host maps the same forced build-id at another path.)
	Q buildid "$old" > "$T/b" || fail "buildid $old failed"
	n=$(jq --arg p "$path" '[.segments[] | select(.path_seen == $p)] | length' "$T/b")
	[ "$n" -ge 1 ] || { cat "$T/b"; fail "buildid $old: no segment"; }
	for seg in $(jq -r --arg p "$path" '.segments[] | select(.path_seen == $p) | .path' "$T/b"); do
		[ -f "$seg" ] || fail "buildid $old names $seg, which does not exist"
		perf buildid-list -i "$seg" 2>/dev/null | grep -q "^$old $path\$" ||
			fail "perf buildid-list $seg does not list $old $path"
	done
	jq -e --arg p "$path" '[.objects[].path] | index($p) != null' "$T/b" >/dev/null ||
		fail "buildid $old: not seen at $path"
	# ... and it ran only inside those segments' time ranges.
	jq -e '.segments | all(.start_ns <= .end_ns)' "$T/b" >/dev/null || fail "buildid $old: bad segment range"
	note "buildid ${old%${old#????????}}: $n segments"
}

check_replaced "$APP" "$ID1" "$ID2"
check_replaced "$NS" 3333333333333333333333333333333333333333 4444444444444444444444444444444444444444

# Segments: every file has its row, with the right sizes; ranges contiguous.
Q segments > "$T/s"
nfiles=$(segments | wc -l)
[ "$(jq '.segments | length' "$T/s")" = "$nfiles" ] || fail "segments: $(jq '.segments | length' "$T/s") rows for $nfiles files"
for seg in $(segments); do
	size=$(stat -c %s "$seg")
	jq -e --arg p "$seg" --argjson sz "$size" \
	    '[.segments[] | select(.path == $p and .state == "closed" and .size == $sz)] | length == 1' \
	    "$T/s" >/dev/null || fail "segments: no closed row of size $size for $seg"
done
jq -e '[.segments[] | .end_ns - .start_ns] | all(. > 0)' "$T/s" >/dev/null || fail "segments: empty range"
# Per-segment list: the last segment lists the kernel.
last=$(segments | tail -1)
Q segment "$last" | jq -e '[.objects[] | select(.kind == "kernel")] | length == 1' >/dev/null ||
	fail "segment $(basename "$last"): no kernel object"
# Cross-check with sqlite3: no dangling references.
[ "$(SQL 'SELECT count(*) FROM object_segments WHERE seq NOT IN (SELECT seq FROM segments) OR object_id NOT IN (SELECT id FROM objects)')" = 0 ] ||
	fail "object_segments rows reference missing segments or objects"
note "index: $(SQL 'SELECT count(*) FROM objects') objects, $(SQL 'SELECT count(*) FROM segments') segments"

# A copy of the state directory, no daemon: the same answers.
cp -a "$T/state" "$T/copy"
"$PERFMAPCTL" --state-dir "$T/copy" --json history "$APP" | jq -c .objects > "$T/h.copy"
jq -c .objects "$T/h" > /dev/null
Q history "$APP" | jq -c .objects | cmp -s - "$T/h.copy" || fail "a copied state dir answers differently"

# --- kill -9 between commits ---------------------------------------------
start_daemon "[segments]
rotate_age = 1s
[index]
commit_interval = 1h
commit_rows = 1000000"
cp "$T/spin-c" "$T/bin/pm-crash"
"$T/bin/pm-crash" 0.5
sleep 1.7
"$T/bin/pm-crash" 0.3
kill -9 "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=""
start_daemon "$CONF"
sleep 0.5
stop_daemon
grep -q 'index: reconciled' "$T/daemon.log" || { cat "$T/daemon.log"; fail "no reconciliation after kill -9"; }
note "$(grep 'index: reconciled' "$T/daemon.log" | sed 's/.*index: //')"
ls "$T/state/segments/" | grep -q '\.partial$' && fail "a .partial segment is left"
# Consistent: every file has a live row, every live row its file, no dangling rows.
for seg in $(segments); do
	st=$(SQL "SELECT state FROM segments WHERE name = '$(basename "$seg")'")
	case $st in closed|repaired) ;; *) fail "after kill -9: $(basename "$seg") is '$st' in the index";; esac
done
for name in $(SQL "SELECT name FROM segments WHERE state != 'deleted'"); do
	[ -f "$T/state/segments/$name" ] || fail "after kill -9: $name is in the index but not on disk"
done
[ "$(SQL "SELECT count(*) FROM segments WHERE state = 'repaired'")" -ge 1 ] || fail "no segment marked repaired"
[ "$(SQL 'SELECT count(*) FROM object_segments WHERE seq NOT IN (SELECT seq FROM segments) OR object_id NOT IN (SELECT id FROM objects)')" = 0 ] ||
	fail "after kill -9: dangling object_segments rows"
# What ran before the crash, uncommitted then, is in the index now (from the segments).
Q history "$T/bin/pm-crash" | jq -e --arg id "$ID5" '.objects[0].build_id == $id' >/dev/null ||
	fail "after kill -9: pm-crash's build-id is not in the index"
n=$(Q buildid "$ID5" | jq --arg p "$T/bin/pm-crash" '[.segments[] | select(.path_seen == $p)] | length')
[ "$n" -ge 1 ] || fail "after kill -9: no segment for pm-crash"

# --- corrupt index.db -----------------------------------------------------
objects() { SQL "SELECT path || ' ' || lower(hex(build_id)) FROM objects WHERE kind = 'user' ORDER BY 1"; }
objects > "$T/objs.before"
[ -s "$T/objs.before" ] || fail "no objects before corruption"
for how in truncate overwrite; do
	sz=$(stat -c %s "$T/state/index.db")
	case $how in
	truncate) truncate -s $((sz / 2)) "$T/state/index.db";;
	overwrite) dd if=/dev/urandom of="$T/state/index.db" bs=4096 seek=3 count=8 conv=notrunc 2>/dev/null;;
	esac
	rm -f "$T/state"/index.db.corrupt-*
	start_daemon "$CONF"
	sleep 0.5
	stop_daemon
	grep -q "index: .*index.db is damaged.*moved aside as .*index.db.corrupt-[0-9]*, rebuilding" "$T/daemon.log" ||
		{ grep index "$T/daemon.log"; fail "$how: no 'moved aside' line"; }
	ls "$T/state"/index.db.corrupt-* >/dev/null 2>&1 || fail "$how: damaged index not kept aside"
	objects > "$T/objs.after"
	missing=$(comm -23 "$T/objs.before" "$T/objs.after")
	[ -z "$missing" ] || fail "$how: objects lost in the rebuild: $missing"
	check_replaced "$APP" "$ID1" "$ID2"
	note "$how: $(wc -l < "$T/objs.after") objects after the rebuild, none lost"
done
echo "PASS: replaced and namespaced paths resolve by time, crash and corruption recovered"
