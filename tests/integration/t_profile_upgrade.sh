#!/bin/sh
# profile across a binary upgrade: two versions of one program at one path
# (different function names and build-ids), the first replaced by rename
# while perfmapd records; one window over both.  The old samples are named
# from the old binary and the new ones from the new (the old file is gone
# from disk: only the build-id cache has it), each version its own Mapping
# with its own build-id; perf report on the perf output names both too.
# test-lane: beside (tests/run-tests.sh: light, judged in seconds)
. tests/lib.sh
need_events
need_perf
need_pprof

for v in 1 2; do
	cc -O0 -g -fno-omit-frame-pointer -Wl,--build-id -DVERSION=$v -DKONST=$$ \
		-o "$T/pm-up.v$v" tests/progs/capver.c || fail "cannot build capver v$v"
done
ID1=$(readelf_buildid "$T/pm-up.v1")
ID2=$(readelf_buildid "$T/pm-up.v2")
[ "$ID1" != "$ID2" ] || fail "the two versions have one build-id"
mkdir "$T/bin"
start_daemon "[record]
frequency = 499
drain_interval = 50ms"
off() { "$PERFMAPCTL" --state-dir "$T/state" "$@"; }

since=@$(date +%s.%N)
cp "$T/pm-up.v1" "$T/bin/pm-up"
"$T/bin/pm-up" 1.5
mv "$T/pm-up.v2" "$T/bin/pm-up"		# the upgrade: a new file by rename
"$T/bin/pm-up" 1.5
until=@$(date +%s.%N)
rm -f "$T/pm-up.v1"
sleep 1
W="--since $since --until $until"

off profile $W --comm pm-up -o "$T/up.pb.gz" > /dev/null || fail "profile -o up.pb.gz"
"$PPROF" -symbolize=none -raw "$T/up.pb.gz" > "$T/raw" 2>&1 || fail "pprof -raw: $(cat "$T/raw")"
m1=$(sed -n "s|^ *\([0-9]*\): .* $T/bin/pm-up $ID1.*|\1|p" "$T/raw")
m2=$(sed -n "s|^ *\([0-9]*\): .* $T/bin/pm-up $ID2.*|\1|p" "$T/raw")
[ -n "$m1" ] || fail "no Mapping for $T/bin/pm-up with the old build-id $ID1"
[ -n "$m2" ] || fail "no Mapping for $T/bin/pm-up with the new build-id $ID2"
[ "$m1" != "$m2" ] || fail "one Mapping for both versions"
# every location of a version's hot function lies in that version's mapping
awk -v m1="M=$m1" -v m2="M=$m2" '
	$4 == "pm_capv1_hot" { v1++; if ($3 != m1) bad = bad " v1@" $3 }
	$4 == "pm_capv2_hot" { v2++; if ($3 != m2) bad = bad " v2@" $3 }
	END { if (!v1 || !v2 || bad != "") { print "v1:" v1 + 0, "v2:" v2 + 0, bad; exit 1 } }' \
	"$T/raw" || fail "functions in the wrong mapping: $(awk '/pm_capv/' "$T/raw" | head -5)"
"$PPROF" -symbolize=none -top "$T/up.pb.gz" 2>/dev/null > "$T/top"
grep -q pm_capv1_hot "$T/top" && grep -q pm_capv2_hot "$T/top" ||
	fail "pprof -top does not show both versions: $(cat "$T/top")"
note "old samples in mapping $m1 ($ID1), new in $m2 ($ID2)"

off profile $W --comm pm-up -o "$T/up.folded" > /dev/null || fail "profile -o up.folded"
grep -q 'pm_capv1_hot' "$T/up.folded" && grep -q 'pm_capv2_hot' "$T/up.folded" ||
	fail "folded stacks lack a version: $(cat "$T/up.folded")"
off profile $W -o "$T/up.data" > /dev/null || fail "profile -o up.data"
perf --buildid-dir "$T/state/debug" report -i "$T/up.data" --stdio --comm pm-up --sort sym \
	2>/dev/null > "$T/report"
grep -q pm_capv1_hot "$T/report" && grep -q pm_capv2_hot "$T/report" ||
	fail "perf report on the profile does not name both versions"
stop_daemon
echo "PASS: each version's samples named from its own build-id"
