#!/bin/sh
# JIT code: a process that writes /tmp/perf-PID.map has that file kept with
# its segments (when it exits, and when a segment closes while it runs), so
# a profile names its JIT frames after the process and the file are gone.
# A map that is a symlink, or belongs to another user than the process, is
# not kept (the daemon is root; /tmp is anybody's).  A process with its own
# /tmp and pid namespace has its map kept from there.  Retention deletes
# the kept maps with their segment.
# test-lane: beside (tests/run-tests.sh: light, judged in seconds)
. tests/lib.sh
need_events
need_pprof
need_perf
[ "$(uname -m)" = x86_64 ] || skip "the JIT test program is x86-64 code"

build_prog jit
start_daemon "[record]
frequency = 499
drain_interval = 50ms
[segments]
keep_count = 2"
S=$T/control.sock
ctl() { "$PERFMAPCTL" -s "$S" "$@"; }
off() { "$PERFMAPCTL" --state-dir "$T/state" "$@"; }

since=@$(date +%s.%N)
"$T/jit" 1.5 & J1=$!
"$T/jit" 1.5 symlink & J2=$!
"$T/jit" 1.5 chown & J3=$!
"$T/jit" 1.5 garbage & J5=$!
wait $J1 $J2 $J3 $J5
until=@$(date +%s.%N)
W="--since $since --until $until"
kept=$(kept_map "$J1") || { cat "$T/daemon.log"; fail "/tmp/perf-$J1.map was not kept"; }
kept_map "$J5" > /dev/null || fail "/tmp/perf-$J5.map (no valid line) was not kept"
rm -f /tmp/perf-$J1.map /tmp/perf-$J2.map /tmp/perf-$J3.map /tmp/pm-jit-real-$J2.map \
	/tmp/perf-$J5.map
# the index lists the open segment once its writer has committed (commit_interval)
for _ in $(seq 1 50); do
	off segments 2>/dev/null | grep -q 'perf-000001' && break
	sleep 0.1
done
ls "$T/state/segments/"*.jit/perf-$J2.map > /dev/null 2>&1 && fail "a symlinked map was kept"
ls "$T/state/segments/"*.jit/perf-$J3.map > /dev/null 2>&1 && fail "another user's map was kept"
note "kept: $kept"

off profile $W --pid $J1 -o "$T/j.folded" > /dev/null || fail "profile --pid $J1"
grep -q 'pm_jit_spin_\[j\]' "$T/j.folded" || fail "no JIT frame named: $(cat "$T/j.folded")"
ctl profile $W --pid $J1 -o "$T/j.pb.gz" > /dev/null || fail "profile -o j.pb.gz"
"$PPROF" -symbolize=none -top "$T/j.pb.gz" 2>/dev/null | grep -q pm_jit_spin ||
	fail "pprof does not name the JIT frame"
# perf report reads /tmp/perf-PID.map only: the perf output maps an ELF made from the kept map
off profile $W --pid $J1 -o "$T/j.data" > /dev/null || fail "profile -o j.data"
perf report -i "$T/j.data" --stdio --sort sym 2>/dev/null | grep -q pm_jit_spin ||
	fail "perf report on the profile does not name the JIT frame"
# A map of no valid line: no image is made of it (tried once, not at each
# of its process's 17 executable mappings), and the daemon, which makes a
# perf-format profile as root, keeps no descriptor of the attempt.
fds() { ls "/proc/$DAEMON_PID/fd" | wc -l; }
n0=$(fds)
ctl profile $W --pid $J5 -o "$T/g.data" > /dev/null || fail "profile --pid $J5 (a map of no valid line)"
n1=$(fds)
[ "$n1" -le $((n0 + 8)) ] ||	# (other threads may hold a few: the leak was 21)
	fail "a perf-format profile of a map of no valid line left $((n1 - n0)) descriptors open in the daemon"
ls "$T/state/segments/"*.jit/perf-$J5.so > /dev/null 2>&1 && fail "an image was made of a map of no valid line"
for p in $J2 $J3; do
	off profile $W --pid $p -o "$T/r$p.folded" > /dev/null || fail "profile --pid $p"
	grep -q pm_jit_spin "$T/r$p.folded" && fail "pid $p's refused map named a frame"
done

# A JIT process in a container's way: its own /tmp and pid namespace.  It
# writes /tmp/perf-1.map (pid 1 where it is) into a /tmp that is not the
# daemon's and is gone with it, as under the shipped unit's PrivateTmp=yes
# every process's /tmp is not the daemon's.  ($T is under the host's
# /tmp, hidden by the new one: jit runs from the directory it started in.)
if unshare -m -p -f --mount-proc true 2>/dev/null; then
	since=@$(date +%s.%N)
	(cd "$T" && exec unshare -m -p -f --mount-proc sh -c \
		"mount -t tmpfs pm-jit-tmp /tmp && exec ./jit 1.5") & U=$!
	J4=""
	for _ in $(seq 1 50); do
		J4=$(pgrep -P "$U" -x jit) && break
		sleep 0.05
	done
	[ -n "$J4" ] || fail "the namespaced jit process did not start"
	grep -q '^NSpid:.*[[:space:]]1$' "/proc/$J4/status" || fail "jit is not pid 1 in its namespace"
	wait "$U"
	until=@$(date +%s.%N)
	[ -e "/tmp/perf-$J4.map" ] && fail "the namespaced jit wrote into the host's /tmp"
	kept_map "$J4" > /dev/null || fail "the map of pid $J4 (perf-1.map in its own /tmp) was not kept"
	off profile --since "$since" --until "$until" --pid "$J4" -o "$T/ns.folded" > /dev/null ||
		fail "profile --pid $J4"
	grep -q 'pm_jit_spin_\[j\]' "$T/ns.folded" ||
		fail "no JIT frame named for the namespaced process: $(cat "$T/ns.folded")"
	note "a JIT map in a process's own /tmp and pid namespace: kept, frames named"
else
	echo "SKIP (part): unshare -m -p cannot make namespaces here; a JIT map in another /tmp not tested"
fi

# retention: three more segments; the one with the map goes, and its .jit with it
seg=$(basename "$(dirname "$kept")" .jit)
for _ in 1 2 3; do ctl snapshot > /dev/null || fail "snapshot"; done
[ -e "$T/state/segments/$seg" ] && fail "retention kept $seg"
[ -e "$T/state/segments/$seg.jit" ] && fail "$seg went, its .jit stayed"
stop_daemon
echo "PASS: JIT frames named from the kept map; refused maps not kept"
