#!/bin/sh
# profile: one window over a closed segment and the open one, in each format,
# read by the real readers: perf report on the perf.data, the pprof tool
# (built from Debian's sources, -symbolize=none so every name must come from
# the file) on the pprof, xmllint on the SVG; the folded counts add up to the
# pprof samples.  The pprof keeps what a fleet engine needs: the binary's
# Mapping with its build-id, ELF-relative addresses (inside the function's
# symbol as nm gives it), DWARF lines.  --pid and --comm filter; bad input
# gets one line on stderr, a non-zero exit and no file.
# test-lane: beside (tests/run-tests.sh: light, judged in seconds)
. tests/lib.sh
need_events
need_perf
need_pprof
command -v xmllint >/dev/null 2>&1 || skip "xmllint is not installed (libxml2-utils)"
command -v jq >/dev/null 2>&1 || skip "jq is not installed"

build_prog spin
ID=$(readelf_buildid "$T/spin")
start_daemon "[record]
frequency = 499
drain_interval = 50ms"
S=$T/control.sock
ctl() { "$PERFMAPCTL" -s "$S" "$@"; }
off() { "$PERFMAPCTL" --state-dir "$T/state" "$@"; }

since=@$(($(date +%s) - 1))
"$T/spin" 1.5
seg=$(ctl snapshot) || fail "snapshot"
"$T/spin" 1.5 &
SPIN=$!
wait $SPIN
until=@$(date +%s.%N)
sleep 1		# the window is in the past, and the daemon has written it

W="--since $since --until $until"
ls "$T/state/segments/" | grep -q '\.partial$' || fail "no open segment to read"

# --- perf ------------------------------------------------------------------
off --json profile $W -o "$T/p.data" > "$T/p.json" || fail "profile -o p.data"
n=$(jq .samples "$T/p.json")
[ "$(jq .segments "$T/p.json")" -ge 2 ] || fail "the window read $(jq .segments "$T/p.json") segments"
[ "$(perf report -D -i "$T/p.data" 2>/dev/null | grep -c 'PERF_RECORD_SAMPLE(')" = "$n" ] ||
	fail "perf reads a different number of samples than the $n written"
perf --buildid-dir "$T/state/debug" report -i "$T/p.data" --stdio --comm spin --sort sym \
	2>/dev/null | grep -q pm_spin_inner || fail "perf report does not name pm_spin_inner"
perf report -i "$T/p.data" --stdio --header-only 2>/dev/null | grep -q "reference time" ||
	fail "the perf output has no CLOCK_DATA"
perf buildid-list -i "$T/p.data" 2>/dev/null | grep -q "^$ID " || fail "$ID is not in the build-id table"
note "perf: $n samples"

# --- pprof -----------------------------------------------------------------
off --json profile $W -o "$T/p.pb.gz" > "$T/pb.json" || fail "profile -o p.pb.gz"
gzip -t "$T/p.pb.gz" || fail "the pprof is not gzipped"
np=$(pprof_samples "$T/p.pb.gz")
[ "$np" = "$(jq .samples "$T/pb.json")" ] || fail "pprof counts $np samples, profile said $(jq .samples "$T/pb.json")"
[ "$np" = "$n" ] || fail "the pprof has $np samples, the perf.data $n"
"$PPROF" -symbolize=none -top -nodecount=200 "$T/p.pb.gz" > "$T/top" 2>&1 || fail "pprof -top: $(cat "$T/top")"
grep -q pm_spin_inner "$T/top" || fail "pprof -top does not name pm_spin_inner"
"$PPROF" -symbolize=none -lines -top -nodecount=400 "$T/p.pb.gz" 2>/dev/null |
	grep -q 'pm_spin_inner .*spin.c:[0-9]' || fail "no DWARF line for pm_spin_inner"
"$PPROF" -symbolize=none -raw "$T/p.pb.gz" > "$T/raw" 2>&1 || fail "pprof -raw"
grep -q 'samples/count cpu/nanoseconds' "$T/raw" || fail "sample types are not samples/count cpu/nanoseconds"
grep -q 'pid:\[[0-9]*\]' "$T/raw" && grep -q 'comm:\[spin\]' "$T/raw" || fail "no pid/comm labels"
grep " $T/spin $ID" "$T/raw" > "$T/map" || fail "no Mapping for $T/spin with build-id $ID"
mid=$(sed -n 's/^ *\([0-9]*\): .*/\1/p' "$T/map" | head -1)
# a location of pm_spin_inner: its address is inside the symbol as nm sees it
addr=$(awk -v m="M=$mid" '$3 == m && $4 == "pm_spin_inner" { print $2; exit }' "$T/raw")
[ -n "$addr" ] || fail "no location of pm_spin_inner in mapping $mid"
set -- $(nm -S "$T/spin" | awk '$4 == "pm_spin_inner" { print $1, $2 }')
a=$(printf '%d' "$addr"); lo=$(printf '%d' "0x$1"); sz=$(printf '%d' "0x$2")
[ "$a" -ge "$lo" ] && [ "$a" -lt $((lo + sz)) ] ||
	fail "location $addr is not ELF-relative (pm_spin_inner is 0x$1 + 0x$2)"
note "pprof: $np samples, pm_spin_inner at $addr in mapping $mid ($ID)"

# --- folded and svg ----------------------------------------------------------
off profile $W -o "$T/p.folded" > /dev/null || fail "profile -o p.folded"
nf=$(awk '{ n += $NF } END { print n + 0 }' "$T/p.folded")
[ "$nf" = "$np" ] || fail "folded counts add up to $nf, pprof to $np"
grep -q '^spin;.*pm_spin_outer;pm_spin_inner [0-9]*$' "$T/p.folded" || fail "no spin;...;pm_spin_outer;pm_spin_inner line"
off profile $W --format svg -o "$T/p.out" > /dev/null || fail "profile --format svg"
xmllint --noout "$T/p.out" || fail "xmllint refuses the SVG"
grep -q 'pm_spin_inner' "$T/p.out" || fail "the SVG does not name pm_spin_inner"

# --- through the daemon: its profile thread, the same profile -----------------
ctl --json profile $W -o "$T/d.pb.gz" > "$T/d.json" || fail "profile through the daemon"
[ "$(pprof_samples "$T/d.pb.gz")" = "$np" ] || fail "the daemon's pprof has $(pprof_samples "$T/d.pb.gz") samples, offline $np"
jq -e '.path | startswith("'"$T/state/profiles/"'")' "$T/d.json" > /dev/null ||
	fail "the daemon did not write under STATE/profiles: $(cat "$T/d.json")"
ctl profile $W --comm spin -o "$T/d.svg" > /dev/null || fail "svg through the daemon"
xmllint --noout "$T/d.svg" || fail "xmllint refuses the daemon's SVG"
ctl profile --since 2001-01-01 --until 2001-01-02 -o "$T/none.data" 2> "$T/err" &&
	fail "the daemon made a profile of a window without segments"
[ "$(wc -l < "$T/err")" = 1 ] && [ ! -e "$T/none.data" ] || fail "daemon error: $(cat "$T/err")"

# --- filters -------------------------------------------------------------------
off profile $W --pid $SPIN -o "$T/pid.folded" > /dev/null || fail "--pid $SPIN"
[ -s "$T/pid.folded" ] || fail "--pid $SPIN gave no samples"
# Exactly pid $SPIN's samples, as perf reads them from the same window:
# their commands (spin, and the shell that forked it for the samples before
# its exec), and their number.
perf script -i "$T/p.data" --pid $SPIN -F comm 2>/dev/null | sed 's/^ *//; s/ *$//' > "$T/pid.perf"
sort -u "$T/pid.perf" > "$T/pid.comms"
grep -qx spin "$T/pid.comms" || fail "perf sees no sample of spin for pid $SPIN"
cut -d';' -f1 "$T/pid.folded" | sort -u | comm -23 - "$T/pid.comms" | grep -q . &&
	fail "--pid $SPIN kept other processes: $(cut -d';' -f1 "$T/pid.folded" | sort -u | comm -23 - "$T/pid.comms" | paste -sd' ' -)"
[ "$(awk '{ n += $NF } END { print n + 0 }' "$T/pid.folded")" = "$(wc -l < "$T/pid.perf")" ] ||
	fail "--pid $SPIN kept $(awk '{ n += $NF } END { print n + 0 }' "$T/pid.folded") samples, perf reads $(wc -l < "$T/pid.perf") of that pid"
off profile $W --comm spin -o "$T/comm.folded" > /dev/null || fail "--comm spin"
grep -qv '^spin;' "$T/comm.folded" && fail "--comm spin kept other commands"
[ "$(awk '{ n += $NF } END { print n }' "$T/comm.folded")" -gt "$(awk '{ n += $NF } END { print n }' "$T/pid.folded")" ] ||
	fail "--comm spin has no more samples than one of its two processes"

# --- bad input: one line, non-zero, no file -----------------------------------
bad() {
	what=$1; shift
	rm -f "$T/bad.svg"
	off profile "$@" -o "$T/bad.svg" > /dev/null 2> "$T/err" && fail "$what: accepted"
	[ "$(wc -l < "$T/err")" = 1 ] || fail "$what: not one line: $(cat "$T/err")"
	[ -e "$T/bad.svg" ] && fail "$what: left a file behind"
	ls -a "$T" | grep -q '^\.bad\.svg\.' && fail "$what: left a temporary file behind"
	note "$what: $(cat "$T/err")"
}
bad "since after until" --since "$until" --until "$since"
bad "a date that does not parse" --since "yesterday-ish"
bad "a window with no segments" --since 2001-01-01 --until 2001-01-02
bad "a pid that never ran" $W --pid 2147483646
bad "a command that never ran" $W --comm pm-never-ran
off profile $W -o "$T/x.bin" > /dev/null 2>&1 && fail "an unknown extension was accepted"
ctl status > /dev/null || fail "the daemon stopped answering"
stop_daemon
echo "PASS: one window, four formats, each read by its reader"
