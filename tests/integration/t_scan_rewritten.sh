#!/bin/sh
# The start-up scan and a file rewritten in place after a running process
# mapped it (cp over a loaded library keeps its inode): map_files reaches
# the new bytes, whose build-id is not the mapping's.  The scan knows no
# mapping's time, but its process's start: a file written clearly after
# that is not read as the mapped one, and the mapping is unknown
# ("changed"), not given the new build-id (before: it was, and perf showed
# the new version's functions for the old one's samples).  A file older
# than the process is read as always, also when linked since.
# test-lane: beside (tests/run-tests.sh: light, judged in seconds)
. tests/lib.sh
need_events
need_perf
command -v jq >/dev/null 2>&1 || fail "jq is not installed (tests/deps.sh)"
cc -O1 -o "$T/mapexec" tests/hostile/mapexec.c || fail "cannot build mapexec"
build_prog spin "$(unique_buildid)"
cp "$T/spin" "$T/lib-rewritten" && cp "$T/spin" "$T/lib-kept" || fail "cp"
OLD=$(readelf_buildid "$T/lib-rewritten")
NEW=$(readelf_buildid /usr/bin/true)
sleep 0.1
"$T/mapexec" 60 "$T/lib-rewritten" "$T/lib-kept" & BG_PIDS=$!
sleep 0.5	# mapped; the rewrite comes clearly after the process's start
cat /usr/bin/true > "$T/lib-rewritten" || fail "rewrite"
# linked after the start (perf record's build-id cache hard-links what it
# saw): the bytes are the same, and it is read (its ctime moved, not its
# mtime; the first version of this change took it for a rewrite)
ln "$T/lib-kept" "$T/lib-kept.link" || fail "ln"
[ "$(readelf_buildid "$T/lib-rewritten")" = "$NEW" ] || fail "the rewrite did not take"
start_daemon "[record]
frequency = 99"
seg=$("$PERFMAPCTL" -s "$T/control.sock" snapshot) || fail "snapshot"
perf buildid-list -i "$seg" 2>/dev/null > "$T/bids"
grep -q "^$NEW $T/lib-rewritten\$" "$T/bids" &&
	fail "the scan gave the rewritten file's build-id ($NEW) to the mapping of its old bytes"
"$PERFMAPCTL" -s "$T/control.sock" --json status > "$T/st.json" || fail "status"
jq -e '.counters.buildid_unknown.changed >= 1' "$T/st.json" > /dev/null ||
	{ jq -c .counters.buildid_unknown "$T/st.json"; fail "the rewritten file's mapping was not counted unknown (changed)"; }
grep -q "^$OLD $T/lib-kept\$" "$T/bids" ||
	{ cat "$T/bids"; fail "the scan did not read the unchanged file's build-id"; }
stop_daemon
echo "PASS: a file rewritten after its process started is unknown at the start-up scan, an unchanged one read"
