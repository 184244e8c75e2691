#!/bin/sh
# A good neighbour (issue 17): with perfmapd recording in its default
# configuration, the host's other perf users keep working, and they do
# not break perfmapd.
# - stock perf record -- CMD, perf record -a -g, perf record --buildid-mmap
#   and perf top --stdio (bounded) each exit 0, and what they wrote reads
#   back with perf report (perf top: its screen shows samples);
# - a program started while perf record --buildid-mmap -a runs beside
#   perfmapd is resolved in perfmapd's segment, with 0 bad records;
# - the probes' answers are in status (JSON and text), and the mode follows
#   the policy: no attr.build_id events on a kernel that leaks the flag;
# - buildid_mode = mmap2 on such a kernel refuses to start without
#   mmap2_on_leaky_kernel, and with it perf record -- /bin/true aborts
#   (what perfmapd.conf(5) says breaks, and what the old default did).
# Other helpers' tools may record with attr.build_id on this host at the
# same time; on a leaky kernel that alone makes stock perf abort.  The
# probe sees it (foreign_buildid_events): such a step is retried, and
# skipped if it never clears, never passed.
# test-lane: alone (tests/run-tests.sh: it runs perf record --buildid-mmap and buildid_mode = mmap2, whose build-id events reach every perf user)
. tests/lib.sh
need_events
need_perf
command -v jq >/dev/null || skip "jq is not installed"

build_prog spin
cp "$T/spin" "$T/co-spin"

# foreign: another tool's attr.build_id event is active and leaks into ours.
foreign() {
	"$PERFMAPD" --probe -c "$T/perfmapd.conf" 2>/dev/null | grep -q '^foreign_buildid_events: yes'
}

status_json() { "$PERFMAPCTL" -s "$T/control.sock" --json status > "$T/st.json" || fail "status"; }

# wait_clean: up to 15 s for no foreign build-id events (other helpers' daemons).
wait_clean() {
	for _ in $(seq 1 30); do foreign || return 0; sleep 0.5; done
	return 1
}

# stock NAME CMD...: run a perf command beside perfmapd; it must exit 0.
# When it does not: perfmapd itself recording with attr.build_id on a leaky
# kernel is a failure.  Otherwise, with perfmapd recording no build-id
# event, perf 6.1's build-id assertion can only come from another tool's
# (as can a failure while the probe sees one): that is retried, then skipped.
stock() {
	name=$1; shift
	for try in 1 2 3 4 5; do
		wait_clean || note "$name: another tool records with attr.build_id; trying anyway"
		"$@" > "$T/$name.out" 2>&1 && { note "$name: exit 0"; return 0; }
		rc=$?
		status_json
		mode=$(jq -r .buildid_mode "$T/st.json")
		if [ "$mode" = mmap2 ] && ! grep -q 'mmap2_on_leaky_kernel *= *yes' "$T/perfmapd.conf" &&
		    ! perfmapd_kernel_fixed; then
			tail -5 "$T/$name.out"
			fail "$name exited $rc beside perfmapd, which records with attr.build_id" \
			    "(mode mmap2) on a kernel that leaks the build-id flag"
		fi
		if ! foreign && ! grep -aq 'assertion failed at util/build-id.c' "$T/$name.out"; then
			tail -5 "$T/$name.out"
			fail "$name exited $rc beside perfmapd ($mode)"
		fi
		note "$name exited $rc: another tool's attr.build_id event leaked into it; again"
	done
	skip "another tool on this host kept recording with attr.build_id on a leaky kernel;" \
	    "stock perf aborts beside it whatever perfmapd does"
}

# The kernel does not leak (probe: no, or n/a) - from the daemon's status.
perfmapd_kernel_fixed() {
	case $(jq -r '.probes.leak // "unknown"' "$T/st.json") in
	no|n/a) return 0;;
	*) return 1;;
	esac
}

report() {
	perf report -i "$1" --stdio --no-children > "$T/report.out" 2>&1 ||
		{ tail -5 "$T/report.out"; fail "perf report -i $1 failed"; }
}

start_daemon ""
status_json
leak=$(jq -r '.probes.leak // empty' "$T/st.json")
mode=$(jq -r .buildid_mode "$T/st.json")
note "default configuration: build-id mode $mode, leak probe '$leak'"

# --- the stock tools, each beside perfmapd ------------------------------------------
stock record-true perf record -o "$T/true.data" -- /bin/true
report "$T/true.data"
stock record-cmd perf record -o "$T/cmd.data" -- "$T/spin" 1
report "$T/cmd.data"
grep -q pm_spin_inner "$T/report.out" || fail "perf record -- CMD: no pm_spin_inner in perf report"
stock record-ag perf record -a -g -o "$T/ag.data" -- sleep 1
report "$T/ag.data"
stock record-bid perf record --buildid-mmap -o "$T/bid.data" -- "$T/spin" 1
report "$T/bid.data"
grep -q pm_spin_inner "$T/report.out" || fail "perf record --buildid-mmap: no pm_spin_inner"
# perf top reads keys from stdin: give it a pipe that stays silent.
stock top sh -c 'sleep 6 | timeout --preserve-status -s INT 4 perf top --stdio -d 1 -F 99'
grep -aq 'PerfTop:.*irqs/sec' "$T/top.out" || fail "perf top showed no refresh"
grep -aE '^ +[0-9]+\.[0-9]+% ' "$T/top.out" | grep -q . || fail "perf top showed no samples"

# --- the probes in status; the policy followed --------------------------------------
[ -n "$leak" ] || fail "status --json has no probes.leak"
jq -e '(.probes.leak_detail | length) > 0 and (.probes.mmap3 | type) == "string" and
    (.probes.mmap3_detail | length) > 0 and (.buildid_mode_reason | length) > 0 and
    (.perf_limits.max_sample_rate > 0) and (.perf_limits.rings_kb > 0)' "$T/st.json" > /dev/null ||
	fail "status --json: probes or perf_limits incomplete: $(jq -c '{probes, perf_limits}' "$T/st.json")"
case $leak in
yes|unknown)
	[ "$mode" = userspace ] || [ "$mode" = mmap3 ] ||
		fail "the kernel leaks (probe: $leak) but the default mode is $mode";;
no)	[ "$mode" = mmap2 ] || [ "$mode" = mmap3 ] ||
		fail "a fixed kernel should keep kernel build-ids, mode is $mode";;
esac
[ "$mode" = mmap3 ] && { jq -r .probes.mmap3 "$T/st.json" | grep -qx proven ||
	fail "mode mmap3 without the mmap3 proof"; }
"$PERFMAPCTL" -s "$T/control.sock" status > "$T/st.txt" || fail "status (text)"
grep -q '^leak probe  *'"$leak"': ' "$T/st.txt" || { cat "$T/st.txt"; fail "status text: no leak probe line"; }
grep -q '^mmap3 probe ' "$T/st.txt" || fail "status text: no mmap3 probe line"
grep -q '^sample rate cap ' "$T/st.txt" || fail "status text: no sample rate cap line"
grep -q 'probe (.* us): build-id flag leak: '"$leak" "$T/daemon.log" || fail "the log has no probe line"

# --- the sample-rate cap is watched: lowered by one, it shows ------------------------
RATE=/proc/sys/kernel/perf_event_max_sample_rate
rate0=$(cat "$RATE")
trap 'TEST_RC=$?; echo "$rate0" > "$RATE"; cleanup' EXIT
echo $((rate0 - 1)) > "$RATE" || fail "cannot write $RATE"
status_json
echo "$rate0" > "$RATE"
jq -e ".perf_limits.max_sample_rate == $((rate0 - 1)) and .perf_limits.max_sample_rate_drops == 1 and
    .perf_limits.max_sample_rate_at_start == $rate0" "$T/st.json" > /dev/null ||
	fail "a lower perf_event_max_sample_rate not in status: $(jq -c .perf_limits "$T/st.json")"
grep -q "perf_event_max_sample_rate dropped from $rate0 to $((rate0 - 1))" "$T/daemon.log" ||
	fail "the drop is not in the log"
note "perf_event_max_sample_rate $rate0 -> $((rate0 - 1)): in status and the log"
stop_daemon

# --- buildid_mode = mmap2 on a leaky kernel: refused, or accepted with the key --------
case $leak in
yes)
	printf '[record]\nbuildid_mode = mmap2\n' > "$T/m2.conf"
	"$PERFMAPD" -f -c "$T/m2.conf" --state-dir "$T/state2" --socket "$T/c2.sock" \
		> "$T/m2.log" 2>&1 && fail "buildid_mode = mmap2 started on a leaky kernel"
	grep -q 'mmap2_on_leaky_kernel = yes' "$T/m2.log" || { cat "$T/m2.log";
		fail "the refusal does not name mmap2_on_leaky_kernel"; }
	start_daemon "[record]
buildid_mode = mmap2
mmap2_on_leaky_kernel = yes"
	status_json
	[ "$(jq -r .buildid_mode "$T/st.json")" = mmap2 ] || fail "the opt-in did not give mmap2"
	jq -r .buildid_mode_reason "$T/st.json" | grep -q 'accepted' || fail "reason: $(jq .buildid_mode_reason "$T/st.json")"
	# What the man page says breaks, and what the old default did.
	perf record -o "$T/broken.data" -- /bin/true > "$T/broken.out" 2>&1; rc=$?
	note "with kernel build-ids on a leaky kernel: perf record -- /bin/true exited $rc"
	[ "$rc" -ne 0 ] || fail "perf record -- /bin/true exited 0 beside attr.build_id events on a kernel the probe calls leaky"
	stop_daemon;;
*)	note "the kernel does not leak ($leak): the opt-in has nothing to show";;
esac

# --- perf record --buildid-mmap -a beside perfmapd: a new program resolves -----------
# (last: it needs perfmapd to decode its records by its own attributes, whatever
# misc flag another tool's attr.build_id event leaks into them)
rm -rf "$T/state"
start_daemon ""
status_json
bad0=$(jq .counters.bad_records "$T/st.json")
"$PERFMAPCTL" -s "$T/control.sock" snapshot > /dev/null || fail "snapshot"
perf record --buildid-mmap -a -o "$T/bida.data" -- sleep 5 > "$T/bida.out" 2>&1 &
BID_PID=$!
BG_PIDS="$BID_PID"
sleep 1.5
"$T/co-spin" 2
wait "$BID_PID" || { tail -5 "$T/bida.out"; fail "perf record --buildid-mmap -a exited non-zero"; }
BG_PIDS=""
report "$T/bida.data"
seg=$("$PERFMAPCTL" -s "$T/control.sock" snapshot) || fail "snapshot"
status_json
bad=$(( $(jq .counters.bad_records "$T/st.json") - bad0 ))
perf report -i "$seg" --stdio --no-children --comm co-spin --sort dso,sym > "$T/seg.out" 2>&1 ||
	{ tail -5 "$T/seg.out"; fail "perf report on perfmapd's segment"; }
want=$(readelf_buildid "$T/co-spin")
perf buildid-list -i "$seg" 2>/dev/null | grep -q "^$want $T/co-spin\$" ||
	fail "perfmapd's segment lacks co-spin's build-id $want (perf record --buildid-mmap -a beside it)"
grep -q pm_spin_inner "$T/seg.out" || { head -20 "$T/seg.out";
	fail "co-spin, started beside perf record --buildid-mmap -a, is not resolved in perfmapd's segment"; }
[ "$bad" -eq 0 ] || fail "$bad bad records while perf record --buildid-mmap -a ran"
note "co-spin resolved in $seg, 0 bad records"
stop_daemon
exit 0
