#!/bin/sh
# The control socket through the real socket: every command in both output
# forms, snapshot under load, privileges by SO_PEERCRED and SO_PEERGROUPS
# (as a real unprivileged user made for the test), and bad input —
# each answered with a typed error or a closed connection, with the daemon
# recording on and losing nothing meanwhile.
. tests/lib.sh
need_events
need_perf
cc -O1 -o "$T/ctlclient" tests/progs/ctlclient.c || fail "cannot build ctlclient"
build_prog spin
cp "$T/spin" "$T/pm-spin"
"$T/pm-spin" 40 & BG_PIDS="$!"

# Privileges are checked as a real unprivileged user made for the test:
# in group PMO (not the control group), then with the control group PMC as
# its primary group, then as a supplementary one.
test_group PMC pmc
test_group PMO pmo
test_user PMU pmu "$PMO"
# The socket in a directory the daemon makes: with public_queries it must
# be searchable by all (before, the daemon's umask made it 0750, and no
# one but root could reach the socket in it).
SOCK=$T/run/control.sock
start_daemon "[daemon]
public_queries = yes
control_group = $PMC"
S=$SOCK
ctl() { "$PERFMAPCTL" -s "$S" "$@"; }
raw() { printf "$1" | "$T/ctlclient" "$S" raw; }

# --- the daemon's threads carry their names (perfmapd(7) THREADS) ----------
names=$(cat /proc/$DAEMON_PID/task/*/comm | sort -u | paste -sd' ' -)
for t in perfmapd perfmapd-index perfmapd-query perfmapd-cap perfmapd-prof perfmapd-bid; do
	case " $names " in *" $t "*) ;; *) fail "no thread named $t (threads: $names)";; esac
done

# --- every command, human and --json ---------------------------------------
ctl ping | grep -q '^pong' || fail "ping"
ctl --json ping | grep -q '"pong": true' || fail "ping --json"
ctl status > "$T/st" || fail "status"
grep -q '^build-id mode *mmap2\|^build-id mode *mmap3\|^build-id mode *userspace' "$T/st" || { cat "$T/st"; fail "status: no mode"; }
ctl status --json > "$T/st.json" || fail "status --json"
grep -q '"samples"' "$T/st.json" && grep -q '"buildid_mode"' "$T/st.json" || fail "status --json fields"
# memory: heap in use, SQLite's part of it (the index writer is open: > 0), heap
# from the system (glibc's figures: 0 under AddressSanitizer, whose allocator
# glibc's mallinfo2 does not see)
jq -e '(.memory.heap_in_use | type) == "number" and .memory.sqlite > 0 and
	.memory.heap_from_system >= .memory.heap_in_use' "$T/st.json" > /dev/null ||
	fail "status --json: memory figures missing or inconsistent: $(jq -c .memory "$T/st.json")"
grep -q '^memory .* in use (SQLite ' "$T/st" || { cat "$T/st"; fail "status shows no memory line"; }
PERFMAPD_SOCKET=$S "$PERFMAPCTL" ping >/dev/null || fail "PERFMAPD_SOCKET is not used"

snap=$(ctl snapshot) || fail "snapshot"
[ -f "$snap" ] || fail "snapshot printed '$snap', not a file"
perf report -i "$snap" --stdio --comm pm-spin --sort sym 2>/dev/null | grep -q pm_spin_inner ||
	fail "the snapshot is not a complete segment with pm-spin samples"
ctl --json snapshot > "$T/snap.json" || fail "snapshot --json"
grep -q '"path"' "$T/snap.json" || fail "snapshot --json has no path"

ctl snapshot --store > "$T/snapstore" || { cat "$T/snapstore"; fail "snapshot --store"; }
[ -f "$(head -1 "$T/snapstore")" ] || fail "snapshot --store: first line is not the segment"
grep -q "^OK $(readelf_buildid "$T/pm-spin") " "$T/snapstore" ||
	{ cat "$T/snapstore"; fail "snapshot --store did not store pm-spin"; }
# Other processes on the host come and go (their FAIL lines are not ours to
# judge): the summary counts what the replies say, and pm-spin's is OK.
ctl --json snapshot --store > "$T/snapstore.json"
jq -s -e --arg id "$(readelf_buildid "$T/pm-spin")" --arg t "$T/" '
	last as $sum | $sum.ok >= 1 and
	$sum.ok == ([.[] | select(.status == "OK")] | length) and
	$sum.failed == ([.[] | select(.status == "FAIL")] | length) and
	([.[] | select(.status == "OK" and .buildid == $id)] | length) == 1 and
	([.[] | select(.status == "FAIL" and (.path | startswith($t)))] | length) == 0' \
	"$T/snapstore.json" > /dev/null || { tail -20 "$T/snapstore.json"; fail "snapshot --store --json"; }
printf '{"method":"io.perfmap.Snapshot","parameters":{"store":true}}\0' |
	"$T/ctlclient" "$S" raw | grep -q 'org.varlink.service.ExpectedMore' || fail "store without more accepted"
ctl status | grep -q '^cache .* captured' || fail "status shows no cache figures"

# the index queries, through the socket, both forms
pmid=$(readelf_buildid "$T/pm-spin")
ctl segments | grep -q "$(basename "$snap")" || fail "segments does not list the snapshot"
ctl --json segments | grep -q '"samples"' || fail "segments --json"
ctl segments "$(basename "$snap")" | grep -q "^$pmid  $T/pm-spin" || fail "segments SEG: no pm-spin"
ctl history "$T/pm-spin" | grep -q "^$pmid " || fail "history"
ctl --json history "$T/pm-spin" | grep -q "\"build_id\": \"$pmid\"" || fail "history --json"
ctl lookup "$T/pm-spin" | grep -q "^$pmid " || fail "lookup"
# at now, after the rotations above: pm-spin runs, so its version is the
# one mapped (a row's last sighting is the last segment start before now,
# and before, every running binary was "not mapped" at now)
ctl --json lookup "$T/pm-spin" > "$T/lookup.json" || fail "lookup --json"
jq -e --arg id "$pmid" '.current.build_id == $id and .current.mapped and
	([.mapped[] | select(.build_id == $id)] | length) == 1' "$T/lookup.json" > /dev/null ||
	{ cat "$T/lookup.json"; fail "lookup at now: the running pm-spin is not mapped"; }
# An upgrade within a second of a lookup: v1's process exits, its file is
# replaced, v2 runs; the next lookup does not answer v1, exited, as mapped
# (before: the walk of the live maps stood for a second whatever happened).
build_prog spin "$(unique_buildid)"; mv "$T/spin" "$T/pm-up"
build_prog spin "$(unique_buildid)"; mv "$T/spin" "$T/pm-up.v2"
up1=$(readelf_buildid "$T/pm-up")
sleep 0.1
"$T/pm-up" 30 & up=$!
sleep 1.1	# a second since the last walk of the live maps: this lookup walks them
ctl --json lookup "$T/pm-up" > "$T/up1.json" || fail "lookup of pm-up"
jq -e --arg id "$up1" '.current.build_id == $id and .current.mapped' "$T/up1.json" > /dev/null ||
	{ cat "$T/up1.json"; fail "lookup: the running pm-up v1 is not mapped"; }
kill "$up"; wait "$up" 2>/dev/null
mv "$T/pm-up.v2" "$T/pm-up"
"$T/pm-up" 30 & up=$!
sleep 0.2
ctl --json lookup "$T/pm-up" > "$T/up2.json" || fail "lookup of pm-up after the upgrade"
kill "$up"; wait "$up" 2>/dev/null
jq -e --arg id "$up1" '(.current.build_id != $id or (.current.mapped | not)) and
	([.mapped[] | select(.build_id == $id)] | length) == 0' "$T/up2.json" > /dev/null ||
	{ cat "$T/up2.json"; fail "lookup after an upgrade: v1, exited, answered mapped"; }
# Two lookups within a second while the host forks and exits (more maps
# let go than the model once remembered, 256): the second still answers
# the running pm-spin mapped (before, it had no walk of the live maps, and
# the index alone said "not mapped" of every running binary).  And libc,
# whose maps the churn lets go all the time while pm-spin keeps its own:
# mapped to both (before, within a second of a walk, a binary any of
# whose maps was let go since was "not mapped").
libc=$(awk '$6 ~ /\/libc\.so/ { print $6; exit }' "/proc/$BG_PIDS/maps")
[ -n "$libc" ] || fail "pm-spin maps no libc"
libcid=$(readelf_buildid "$libc")
( i=0; while [ $i -lt 300 ]; do /bin/true; i=$((i + 1)); done ) & churn=$!
sleep 0.3
ctl --json lookup "$T/pm-spin" > "$T/l1.json" || fail "lookup during the churn"
ctl --json lookup "$libc" > "$T/c1.json" || fail "lookup of libc during the churn"
sleep 0.3
ctl --json lookup "$T/pm-spin" > "$T/l2.json" || fail "lookup during the churn"
ctl --json lookup "$libc" > "$T/c2.json" || fail "lookup of libc during the churn"
wait "$churn"
for f in l1 l2; do
	jq -e --arg id "$pmid" '.current.build_id == $id and .current.mapped' "$T/$f.json" \
		> /dev/null || { cat "$T/$f.json"; fail "lookup during a fork churn ($f): the running pm-spin is not mapped"; }
done
for f in c1 c2; do
	jq -e --arg id "$libcid" '.current.build_id == $id and .current.mapped' "$T/$f.json" \
		> /dev/null || { cat "$T/$f.json"; fail "lookup during a fork churn ($f): $libc, mapped by pm-spin, is not mapped"; }
done
# (100 ms back: the daemon may have started less than a second ago on a fast machine,
# and nothing is known of a path before it)
ctl lookup "$T/pm-spin" --at -100ms --json | grep -q "$pmid" || fail "lookup --at --json"
ctl buildid "$pmid" | grep -q "$T/pm-spin" || fail "buildid"
ctl --json buildid "$pmid" | grep -q '"segments"' || fail "buildid --json"
# text for people: no tabs, columns aligned (the last one starts at one
# place in every row), the open segment named by its file: NAME.data.partial
for c in "segments" "segments $(basename "$snap")" "history $T/pm-spin" "lookup $T/pm-spin" \
    "buildid $pmid" "status"; do
	# shellcheck disable=SC2086
	ctl $c > "$T/out" || fail "$c"
	grep -q "$(printf '\t')" "$T/out" && { cat -A "$T/out"; fail "$c prints tabs"; }
done
for c in "segments" "history $T/pm-spin"; do
	# shellcheck disable=SC2086
	ctl $c | grep -v '^/' | awk '{ print index($0, $NF) }' | sort -u > "$T/cols"
	[ "$(wc -l < "$T/cols")" -eq 1 ] || { ctl $c; fail "$c: columns not aligned"; }
done
open=$(ctl --json segments | jq -r '.segments[] | select(.state == "open") | .path')
case $open in *.data.partial) ;; *) fail "the open segment is not named by its file: $open";; esac
[ -f "$open" ] || fail "$open: no such file"
ctl segments | grep -q " open  *$(basename "$open")\$" || fail "segments does not show $(basename "$open")"
ctl --json segments | jq -e '.segments[] | select(.state == "open") | .size > 0' >/dev/null ||
	fail "the open segment's size is not its file's"
# the open segment's counts so far are the recorder's (the index has them
# only once it closes): not null, and the samples of the test's spinners
# (once a drain took them: on a fast machine the steps above take less
# than drain_interval since the last snapshot's segment opened)
for _ in $(seq 1 30); do
	ctl --json segments | jq -e '.segments[] | select(.state == "open") | .samples > 0' \
		> /dev/null && break
	sleep 0.1
done
ctl --json segments | jq -e '.segments[] | select(.state == "open") |
    (.samples > 0) and (.records > 0) and (.lost | type == "number")' >/dev/null || {
	ctl --json segments | jq -c '.segments[] | select(.state == "open")'
	fail "the open segment's samples, records and lost are not filled in"
}
ctl lookup /no/such/path 2> "$T/err"; [ $? -eq 1 ] && grep -q NotFound "$T/err" ||
	fail "lookup of an unknown path: $(cat "$T/err")"
ctl lookup "$T/pm-spin" --at 'not a date' 2>/dev/null; [ $? -eq 2 ] || fail "bad date not a usage error"
out=$(raw '{"method":"io.perfmap.Lookup","parameters":{"path":7}}\0')
echo "$out" | grep -q 'InvalidParameter' || fail "lookup with a number for path: $out"
# a field the interface makes optional (?type) may be null: as if absent
out=$(raw '{"method":"io.perfmap.Lookup","parameters":{"path":"'"$T/pm-spin"'","at_ns":null,"all_namespaces":null}}\0')
echo "$out" | grep -q "\"build_id\": *\"$pmid\"" || fail "lookup with at_ns null: $out"
out=$(raw '{"method":"io.perfmap.Segments","parameters":{"segment":null}}\0')
echo "$out" | grep -q '"segments"' || fail "segments with segment null: $out"
out=$(raw '{"method":"io.perfmap.Lookup","parameters":{"path":null}}\0')
echo "$out" | grep -q 'InvalidParameter' || fail "lookup with path null (not optional): $out"

ctl reload | grep -q 'reloaded' || fail "reload"
cp "$T/perfmapd.conf" "$T/good.conf"
printf '[record]\nfrequency = banana\n' > "$T/perfmapd.conf"
ctl reload 2> "$T/err" && fail "a bad configuration was accepted"
grep -q 'perfmapd.conf:2' "$T/err" || { cat "$T/err"; fail "reload error does not name the line"; }
cp "$T/good.conf" "$T/perfmapd.conf"
ctl ping >/dev/null || fail "daemon gone after a refused reload"

ctl frobnicate 2>/dev/null; [ $? -eq 2 ] || fail "unknown command: exit status not 2"
ctl snapshot --help | grep -q 'usage: perfmapctl snapshot' || fail "snapshot --help"
"$PERFMAPCTL" --help | grep -q 'snapshot' || fail "--help lists no commands"
"$PERFMAPCTL" -s "$T/nosuch.sock" ping 2>/dev/null; [ $? -eq 3 ] || fail "no daemon: exit status not 3"

# --- snapshot under load: nothing lost or duplicated across snapshots -------
( end=$(( $(date +%s) + 4 )); while [ "$(date +%s)" -lt "$end" ]; do /bin/true; done ) &
storm=$!
for i in 1 2 3 4 5 6; do ctl snapshot > /dev/null || fail "snapshot $i under load"; sleep 0.5; done
wait $storm

# --- privileges ---------------------------------------------------------------
chmod 755 "$T"
# asuser GID SUPPLEMENTARY CMD: perfmapctl CMD as PMU in group GID, with the
# supplementary group SUPPLEMENTARY (a gid, or - for none)
asuser() {
	if [ "$2" = - ]; then g=--clear-groups; else g=--groups=$2; fi
	setpriv --reuid="$PMU" --regid="$1" "$g" "$PERFMAPCTL" -s "$S" "$3"
}
pmo=$(getent group "$PMO" | cut -d: -f3) pmc=$(getent group "$PMC" | cut -d: -f3)
[ -n "$pmo" ] && [ -n "$pmc" ] || fail "the test's groups have no gid"
[ "$(setpriv --reuid="$PMU" --regid="$pmo" --clear-groups id -u)" = "$(id -u "$PMU")" ] ||
	fail "setpriv cannot run as $PMU"
asuser "$pmo" - status >/dev/null || fail "public_queries = yes: status refused to $PMU"
asuser "$pmo" - snapshot 2> "$T/err" && fail "$PMU, not in $PMC, could take a snapshot"
grep -q 'PermissionDenied' "$T/err" || { cat "$T/err"; fail "no clear denial"; }
note "privileges: $(cat "$T/err")"
asuser "$pmo" - stop 2>/dev/null && fail "$PMU, not in $PMC, could stop the daemon"
asuser "$pmc" - snapshot >/dev/null || fail "$PMU with $PMC as its group was refused"
asuser "$pmo" "$pmc" snapshot >/dev/null || fail "$PMU with $PMC as a supplementary group was refused"
# A member of many groups (an admin's, a directory's): the control group the
# 300th of them.  The gids need no names; the kernel keeps up to 65536.
many=$(seq -s, 70000 70298),$pmc
asuser "$pmo" "$many" snapshot >/dev/null ||
	fail "$PMU with $PMC as the 300th supplementary group was refused"
asuser "$pmo" "$(seq -s, 70000 70299)" snapshot 2>/dev/null &&
	fail "$PMU in 300 groups, none of them $PMC, could take a snapshot"
ctl ping >/dev/null || fail "daemon gone after the privilege checks"

# --- bad input ------------------------------------------------------------------
out=$(raw '{"method": "io.perfmap.Ping"}\0')
echo "$out" | grep -q pong || fail "raw ping: $out"
out=$(raw '{"method":"org.varlink.service.GetInfo"}\0')
echo "$out" | grep -q '"interfaces"' || fail "GetInfo: $out"
out=$(raw 'this is not json\0')
echo "$out" | grep -q 'ProtocolError' && echo "$out" | grep -q '\[closed\]' || fail "invalid JSON: $out"
out=$(raw '[1,2,3]\0')
echo "$out" | grep -q 'ProtocolError' || fail "non-object: $out"
out=$(raw '{"method":"io.perfmap.Nope"}\0{"method":"io.perfmap.Ping"}\0')
echo "$out" | grep -q 'MethodNotFound' && echo "$out" | grep -q pong ||
	fail "unknown method should leave the connection usable: $out"
out=$(raw '{"method":"io.perfmap.Snapshot","parameters":"x"}\0')
echo "$out" | grep -q 'ProtocolError' || fail "parameters not an object: $out"
out=$(raw '{"method":"io.perfmap.Snapshot","parameters":{"frobnicate":1}}\0')
echo "$out" | grep -q 'InvalidParameter' || fail "unknown parameter: $out"
# \u0000 in a string is valid JSON: the parameter is refused (a C string
# ends there: "/a" would have been looked up), the connection stays (before:
# a ProtocolError, and the call behind it lost with the connection); in the
# method's name, that is no method.
out=$(raw '{"method":"io.perfmap.Lookup","parameters":{"path":"/a\\u0000b"}}\0{"method":"io.perfmap.Ping"}\0')
echo "$out" | grep -q 'InvalidParameter.*path' && echo "$out" | grep -q pong ||
	fail "a NUL in a parameter: $out"
out=$(raw '{"method":"io.perfmap.Ping\\u0000x"}\0{"method":"io.perfmap.Ping"}\0')
echo "$out" | grep -q 'MethodNotFound' && echo "$out" | grep -q pong ||
	fail "a NUL in the method's name: $out"
out=$(raw '{"method":42}\0')
echo "$out" | grep -q 'ProtocolError' || fail "method not a string: $out"
out=$(head -c 400000 /dev/zero | tr '\0' 'x' | "$T/ctlclient" "$S" raw)
echo "$out" | grep -q 'longer than' && echo "$out" | grep -q '\[closed\]' || fail "oversized: $out"
out=$("$T/ctlclient" "$S" many 200)
note "200 connections: $out"
echo "$out" | grep -q 'failed 0' || fail "200 connections: $out"
"$T/ctlclient" "$S" abandon 50 > /dev/null
"$T/ctlclient" "$S" drip 20 > "$T/drip" &
drip=$!
sleep 2
ctl ping > /dev/null || fail "a slow-drip client blocks others"
wait $drip
grep -q 'closed after' "$T/drip" || fail "slow drip: $(cat "$T/drip")"
note "slow drip: $(cat "$T/drip")"

ctl --json status > "$T/st.json" || fail "daemon gone after bad input"
grep -q '"lost": 0,' "$T/st.json" || { cat "$T/st.json"; fail "records were lost"; }

# --- stop -------------------------------------------------------------------------
ctl stop | grep -q stopping || fail "stop"
wait "$DAEMON_PID"; rc=$?; DAEMON_PID=""
[ $rc -eq 0 ] || fail "daemon exit status $rc after stop"
[ -e "$S" ] && fail "socket left behind"
ls "$T/state/segments/" | grep -q partial && fail "stop left a .partial segment"

# Samples add up over all segments, across the snapshots.
total=$(sed -n 's/.*stopped: samples=\([0-9]*\).*/\1/p' "$T/daemon.log")
sum=0
for seg in $(segments); do sum=$((sum + $(seg_samples "$seg"))); done
[ "$sum" = "$total" ] || fail "segments hold $sum samples, the daemon counted $total"

# A Stop whose client hangs up at once, before the reply is written: the
# call was accepted, and the daemon stops.
start_daemon "[daemon]
control_group = $PMC"
printf '{"method":"io.perfmap.Stop"}\0' | "$T/ctlclient" "$S" hangup || fail "hangup"
for _ in $(seq 1 50); do kill -0 "$DAEMON_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$DAEMON_PID" 2>/dev/null && { tail -5 "$T/daemon.log"; fail "a Stop whose client hung up did not stop the daemon"; }
wait "$DAEMON_PID"; rc=$?; DAEMON_PID=""
[ $rc -eq 0 ] || fail "daemon exit status $rc after a Stop whose client hung up"
echo "PASS"
