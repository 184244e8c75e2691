#!/bin/sh
# A burst of mappings of new files: 60 programs start with 100 libraries
# each, made just before (tests/progs/manymaps: 6,000 mappings in some
# 40 ms, each proven by a read of its own: the files are too new to be
# proven by time).  Before, the daemon held at most 4,096 mappings waiting
# for reads and answered the rest "busy" (a third of such a burst was
# unknown), and its build-id readers, at the loop's priority, kept the
# loop from the side-band rings on two busy CPUs: the default 256 KiB rings
# lost records in five bursts of nine.  Three bursts here: no mapping
# unknown, and the daemon's workers run below the loop (daemon/priority.h).
# Records lost are reported, not judged: fewer since the workers yield,
# but not none (daemon/priority.h); the mappings recorded must then be
# the bursts' less what was lost.
# test-lane: alone (both CPUs in bursts, judged by records lost)
. tests/lib.sh
need_events
need_perf
S=$T/control.sock
ctl() { "$PERFMAPCTL" -s "$S" "$@"; }
start_daemon "[record]
frequency = 99
drain_interval = 100ms"
sleep 1

# The workers: WORKER_NICE (5) below the loop, the loop as it was.
loop_nice=$(awk '{ sub(/^.*\) /, ""); print $17 }' /proc/$DAEMON_PID/task/$DAEMON_PID/stat)
n=0
for t in /proc/$DAEMON_PID/task/*; do
	case $(cat "$t/comm") in
	perfmapd-bid|perfmapd-cap|perfmapd-prof|perfmapd-query)
		nice=$(awk '{ sub(/^.*\) /, ""); print $17 }' "$t/stat")
		[ "$nice" = $((loop_nice + 5)) ] || fail "$(cat "$t/comm") runs at nice $nice, the loop at $loop_nice"
		n=$((n + 1));;
	esac
done
[ "$n" -ge 3 ] || fail "only $n worker threads found"

for i in 1 2 3; do
	start_manymaps 60 100
	sleep 1
	kill "$MM"; wait "$MM" 2>/dev/null
done
sleep 1
ctl --json status > "$T/st.json" || fail "status"
lost=$(jq .counters.lost "$T/st.json")
unknown=$(jq '[.counters.buildid_unknown[]] | add' "$T/st.json")
mmaps=$(jq .counters.mmaps "$T/st.json")
note "3 bursts of 6,000 mappings: $mmaps mappings, $lost records lost, $unknown unknown ($(jq -c .counters.buildid_unknown "$T/st.json"))"
echo "FIGURE t_burst_maps burst_lost $lost"
[ $((mmaps + lost)) -ge 18000 ] || fail "$mmaps mappings recorded and $lost records lost of the bursts' 18,000"
[ "$unknown" = 0 ] || fail "$unknown mappings of the bursts unknown: $(jq -c .counters.buildid_unknown "$T/st.json")"
stop_daemon
echo PASS
