#!/bin/sh
# Adversarial: file names.  A path is bytes; JSON text is UTF-8.  A user
# runs a binary whose name is not UTF-8 (\377) and one whose name carries
# terminal escapes (ESC ] ... BEL, and a C1 CSI).  Before, the first made
# root's next "perfmapctl export" crash the daemon (jansson refused the
# name, and the export read the status of a reply that was not there), and
# the index's replies left its path out; the second's escapes went raw to
# root's terminal from "store" and "export".  Now a byte that is not UTF-8
# goes as U+FFFD, perfmapctl shows control characters as \xHH (in errors
# too, with U+202E and a backslash), and the daemon records on.
. tests/lib.sh
. tests/hostile/lib.sh
hostile_start
need_perf
start_daemon "[record]
frequency = 499
drain_interval = 50ms"
S=$T/control.sock
ctl() { "$PERFMAPCTL" -s "$S" "$@"; }
bad=$(printf 'pm-\377-bin')
esc=$(printf 'pm-\033]0;owned\007-\302\233-bin')
fffd=$(printf 'pm-\357\277\275-bin')
# two binaries (two build-ids: a segment names a build-id by one path)
cc -O0 -o "$H/$bad" "$TOP/tests/progs/spin.c" $(unique_buildid) &&
	cc -O0 -o "$H/$esc" "$TOP/tests/progs/spin.c" $(unique_buildid) &&
	chmod 0755 "$H/$bad" "$H/$esc" || fail "cannot build the two binaries"
chown "$A" "$H/$bad" "$H/$esc"
as_user "$A" "$H/$bad" 1 & p1=$!
as_user "$A" "$H/$esc" 1 & p2=$!
wait "$p1" "$p2"
sleep 0.5
seg=$(ctl snapshot) || fail "snapshot"

# export packs both (the daemon survives it), twice
ctl export "$seg" -o "$T/x.tar" > "$T/export.out" 2>&1 ||
	{ cat "$T/export.out"; fail "export"; }
kill -0 "$DAEMON_PID" 2>/dev/null || { tail "$T/daemon.log"; fail "the daemon died in an export"; }
n=$(bundle_files "$T/x.tar" | LC_ALL=C grep -c '/pm-.*-bin/[0-9a-f]*/elf$')
[ "$n" = 2 ] || fail "the export packs $n of the two binaries with these names"
ctl export --since -1m -o "$T/y.tar" > /dev/null 2>&1 || fail "a second export"
# store: one line per build-id, the names shown safely
ctl store "$seg" > "$T/store.out" 2>&1 || { cat "$T/store.out"; fail "store"; }
grep -q "$(printf '\033')" "$T/store.out" && fail "store printed an ESC to the terminal"
grep -q "$(printf '\302\233')" "$T/store.out" && fail "store printed a C1 CSI to the terminal"
grep -q "$fffd" "$T/store.out" || { cat "$T/store.out"; fail "store does not show $bad as $fffd"; }
grep -q 'pm-\\x1b\]0;owned\\x07-\\xc2\\x9b-bin' "$T/store.out" ||
	{ cat "$T/store.out"; fail "store does not show the escapes as \\xHH"; }
# the index: the segment's binaries and a path's history name them
ctl --json segments "$(basename "$seg")" > "$T/seg.json" || fail "segments SEGMENT"
jq -e --arg p "$H/$fffd" '[.. | objects | select(.path? == $p)] | length >= 1' "$T/seg.json" \
	> /dev/null || fail "the segment's binaries do not name $H/$fffd"
ctl history "$H/$esc" > "$T/hist.out" || fail "history of $H/<escapes>"
grep -q "$(printf '\033')" "$T/hist.out" && fail "history printed an ESC to the terminal"
ctl history "$H/$bad" > "$T/hist.out" 2>&1 && fail "history of a name that is not UTF-8 went through"
grep -q "not UTF-8" "$T/hist.out" || fail "history of a name that is not UTF-8: $(cat "$T/hist.out")"
# An error repeats the caller's path: on stderr one line, its escapes and
# a right-to-left override (U+202E) shown as \xHH, a backslash as \\
# (before: raw to the terminal, and a newline made two lines).
rlo=$(printf '\342\200\256')
nl='
'
ctl lookup "/nope/$esc$rlo-a\\x1b-$nl-b" > /dev/null 2> "$T/err.out" &&
	fail "lookup of a path never seen succeeded"
grep -q "$(printf '\033')" "$T/err.out" && fail "an error printed an ESC to the terminal"
grep -q "$rlo" "$T/err.out" && fail "an error printed U+202E to the terminal"
[ "$(wc -l < "$T/err.out")" = 1 ] || { cat "$T/err.out"; fail "an error is not one line"; }
grep -qF '\xe2\x80\xae-a\\x1b-\x0a-b' "$T/err.out" ||
	{ cat "$T/err.out"; fail "an error does not show U+202E, a backslash and a newline escaped"; }
ctl ping > /dev/null || fail "the daemon does not answer"
no_loss
stop_daemon
echo "PASS: names that are not UTF-8 or carry escapes: replies hold them, the terminal is safe"
