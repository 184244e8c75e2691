#!/bin/sh
# Adversarial: a file named "X (deleted)".  The kernel names a file that
# was unlinked when it was mapped "X (deleted)", and /proc/PID/maps does
# the same for a running binary deleted since; the daemon files such a
# mapping under X, what the history of X must show.  But anyone may name a
# live file "tool (deleted)" beside root's tool in a sticky directory such
# as /tmp: its build-id must not become root's tool's.  A user runs one
# there before the daemon starts (the start-up scan reads it) and after
# (a record), and maps another that they unlink 50 ms after the mapping,
# before the daemon reads it (no link left, but the name was read while it
# had one).  Root runs its tool.  The history of root's tool shows only
# root's build-id, and the user's files are in the history under their
# own names.  And what the name is there for still works: the user's
# binaries unlinked while they run (before the start: the scan; after:
# mapped once unlinked) are filed under their paths.  All of it also in an
# index rebuilt from the segments.
. tests/lib.sh
. tests/hostile/lib.sh
hostile_start
build_hostile mkelf
build_hostile mapexec

ROOTID=0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a
USERID=0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b
RACEID=0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c
GONEID=0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d
LATEID=0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e
PUB=$T/pub
mkdir -p "$PUB" && chmod 1777 "$PUB" || fail "mkdir $PUB"
"$T/mkelf" forge "$T/spin" "$PUB/tool" $ROOTID && chmod 0755 "$PUB/tool" || fail "root's tool"
as_user "$A" sh -c "'$T/mkelf' forge '$T/spin' '$PUB/tool (deleted)' $USERID &&
	'$T/mkelf' forge '$T/spin' '$PUB/tool2 (deleted)' $RACEID &&
	'$T/mkelf' forge '$T/spin' '$H/gone' $GONEID && '$T/mkelf' forge '$T/spin' '$H/late' $LATEID" ||
	fail "the user's files"

# Before the start: the scan reads "tool (deleted)" (live) and "gone (deleted)" (unlinked).
AS="setpriv --reuid=$A --regid=$(id -g "$A") --init-groups --"
$AS "$PUB/tool (deleted)" 8 &
BG_PIDS="${BG_PIDS:-} $!"
$AS "$H/gone" 8 &
GPID=$!
BG_PIDS="$BG_PIDS $GPID"
sleep 0.3
as_user "$A" rm -f "$H/gone" || fail "rm gone"
grep -q "$H/gone (deleted)" /proc/$GPID/maps || fail "the kernel does not name $H/gone deleted"
sleep 1.2		# its unlink well before the scan's read of its name

start_daemon "[record]
buildid_mode = userspace
frequency = 499
drain_interval = 1s"
sleep 1.5
start_pinger
# After: a record of "tool (deleted)" (live); "tool2 (deleted)" mapped,
# then unlinked before its record's drain tick; "late" opened, unlinked,
# then mapped (the kernel names it "late (deleted)").
as_user "$A" "$PUB/tool (deleted)" 0.3 || fail "the attack did not run"
as_user "$A" sh -c "'$T/mapexec' 3 '$PUB/tool2 (deleted)' & sleep 0.05; rm -f '$PUB/tool2 (deleted)'; wait" ||
	fail "the race did not run"
as_user "$A" sh -c "'$T/mapexec' -d 0.5 3 '$H/late' & sleep 0.1; rm -f '$H/late'; wait" ||
	fail "the late unlink did not run"
"$PUB/tool" 0.3 || fail "root's tool"
sleep 2.5
hostile_judge

# hist PATH ARGS...: the build-ids in the history of PATH (perfmapctl ARGS), [] if none
hist() {
	_p=$1
	shift
	if ! _o=$("$PERFMAPCTL" "$@" --json history "$_p" 2> "$T/hist.err"); then
		grep -q "io.perfmap.NotFound" "$T/hist.err" || { cat "$T/hist.err" >&2; return 1; }
		_o='{"objects": []}'
	fi
	echo "$_o" | jq -c '[.objects[].build_id] | unique'
}
check_histories() {
	_l=$1
	shift
	h=$(hist "$PUB/tool" "$@") || fail "history $PUB/tool"
	note "${_l}history of $PUB/tool: $h"
	[ "$h" = "[\"$ROOTID\"]" ] ||
		fail "${_l}the history of root's $PUB/tool shows a user's file named \"tool (deleted)\": $h"
	h=$(hist "$PUB/tool (deleted)" "$@") || fail "history \"$PUB/tool (deleted)\""
	[ "$h" = "[\"$USERID\"]" ] ||
		fail "${_l}the user's live \"tool (deleted)\" is not in the history under its own name: $h"
	h=$(hist "$PUB/tool2" "$@") || fail "history $PUB/tool2"
	[ "$h" = "[]" ] || fail "${_l}a file unlinked after its name was read is filed as $PUB/tool2: $h"
	h=$(hist "$PUB/tool2 (deleted)" "$@") || fail "history \"$PUB/tool2 (deleted)\""
	[ "$h" = "[\"$RACEID\"]" ] || fail "${_l}\"tool2 (deleted)\" is not in the history under its own name: $h"
}
check_histories "" -s "$T/control.sock"
# What " (deleted)" is there for: unlinked before its name was read.
h=$(hist "$H/gone" -s "$T/control.sock") || fail "history $H/gone"
[ "$h" = "[\"$GONEID\"]" ] || fail "a binary deleted before the start-up scan is not filed under its path: $h"
h=$(hist "$H/late" -s "$T/control.sock") || fail "history $H/late"
[ "$h" = "[\"$LATEID\"]" ] || fail "a file mapped once unlinked is not filed under its path: $h"
stop_daemon

# Stock perf reads the segments, the entries marked as paths proven
# unlinked too (a misc bit it does not read there): buildid-list lists
# the binary deleted before the start under its path.
found=0
for seg in $(segments); do
	perf --buildid-dir "$T/state/debug" buildid-list -i "$seg" > "$T/bl.out" 2> "$T/bl.err" ||
		{ cat "$T/bl.err"; fail "perf buildid-list $seg"; }
	[ -s "$T/bl.err" ] && { cat "$T/bl.err"; fail "perf buildid-list $seg wrote to stderr"; }
	grep -qx "$GONEID $H/gone" "$T/bl.out" && found=1
done
[ "$found" = 1 ] || fail "no segment's build-id table lists $H/gone with its build-id"

# An index rebuilt from the segments (a damaged index.db) files them as the
# live one did: a segment's build-id table lists X beside "X (deleted)"
# where the recorder proved the file unlinked (before, the rebuild kept
# every name whole, and a binary replaced under a running process - every
# package upgrade - left its path's history).
head -c 65536 /dev/urandom > "$T/state/index.db"
rm -f "$T/state/index.db-wal" "$T/state/index.db-shm"
start_daemon "[record]
frequency = 99"
grep -q "rebuilding it from the segments" "$T/daemon.log" || fail "index.db was not rebuilt"
stop_daemon
check_histories "after a rebuild: " --state-dir "$T/state"
h=$(hist "$H/gone" --state-dir "$T/state") || fail "history $H/gone"
[ "$h" = "[\"$GONEID\"]" ] || fail "after a rebuild: a binary deleted before the start-up scan is not filed under its path: $h"
h=$(hist "$H/late" --state-dir "$T/state") || fail "history $H/late"
[ "$h" = "[\"$LATEID\"]" ] || fail "after a rebuild: a file mapped once unlinked is not filed under its path: $h"
echo "PASS: a file named \"tool (deleted)\" is not root's tool; unlinked binaries keep their paths"
