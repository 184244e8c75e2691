#!/bin/sh
# Capture at first sight, with perf as the judge:
# - a program v1 runs and is sampled; its file is replaced by v2 (other
#   code, same path) which runs; then the file is deleted.  After snapshot
#   and store, perf report with the cache as its build-id directory shows
#   v1's function for v1's samples and v2's for v2's; without the cache
#   it shows neither;
# - the cache has perf's layout: <path>/<id>/elf, .build-id/xx/rest links,
#   [kernel.kallsyms]/<id>/kallsyms, [vdso]/<id>/vdso; every copy's
#   build-id is what readelf says;
# - no record lost.
# perf 6.1 does not read PERF_BUILDID_DIR (it only exports it to
# perf-archive), so the cache is given with perf --buildid-dir.
# test-lane: beside (tests/run-tests.sh: light, judged in seconds)
. tests/lib.sh
need_events
need_perf
command -v jq >/dev/null 2>&1 || skip "jq is not installed"

cc -O0 -g -fno-omit-frame-pointer $(unique_buildid) -DVERSION=1 -o "$T/v1" tests/progs/capver.c &&
cc -O0 -g -fno-omit-frame-pointer $(unique_buildid) -DVERSION=2 -o "$T/v2" tests/progs/capver.c ||
	fail "cannot build tests/progs/capver.c"
ID1=$(readelf_buildid "$T/v1"); ID2=$(readelf_buildid "$T/v2")
[ -n "$ID1" ] && [ -n "$ID2" ] && [ "$ID1" != "$ID2" ] || fail "v1 and v2 need distinct build-ids"

start_daemon "[record]
frequency = 499
drain_interval = 50ms"
S=$T/control.sock
ctl() { "$PERFMAPCTL" -s "$S" "$@"; }
C=$T/state/debug

mkdir "$T/bin"
P=$T/bin/pm-capver
cp "$T/v1" "$P"; "$P" 1.5
cp "$T/v2" "$P.new"; mv "$P.new" "$P"; "$P" 1.5
rm -f "$P"
seg=$(ctl snapshot) || fail "snapshot"
ctl store "$seg" > "$T/store.out"; rc=$?
# Other processes on the host may have come and gone (their FAIL lines are
# not ours to judge); ours must be OK.
[ "$rc" = 0 ] || [ "$rc" = 1 ] || { cat "$T/store.out"; fail "store exited with $rc"; }
grep "^FAIL" "$T/store.out" | grep -q "$P" && fail "store: a FAIL line for pm-capver"
grep "^FAIL" "$T/store.out" | grep -q "kernel.kallsyms\|vdso" && fail "store: kernel or vdso failed"
grep -q "^OK $ID1 $P\$" "$T/store.out" || { cat "$T/store.out"; fail "store: no OK line for v1"; }
grep -q "^OK $ID2 $P\$" "$T/store.out" || { cat "$T/store.out"; fail "store: no OK line for v2"; }
tail -1 "$T/store.out" | grep -q 'build-ids in 1 segments' || fail "store summary: $(tail -1 "$T/store.out")"
note "$(tail -1 "$T/store.out")"

# The layout perf and debuginfod expect.
for id in $ID1 $ID2; do
	f=$C$P/$id/elf
	[ -f "$f" ] || fail "$f missing"
	[ "$(readelf_buildid "$f")" = "$id" ] || fail "$f: build-id is not $id"
	l=$C/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-)
	[ "$(readlink "$l")" = "../../${P#/}/$id" ] || fail "$l -> $(readlink "$l")"
	[ -f "$l/elf" ] || fail "$l/elf does not resolve"
done
ls "$C/[kernel.kallsyms]/"*/kallsyms >/dev/null 2>&1 || fail "no kallsyms in the cache"
kid=$(basename "$(dirname "$(ls "$C/[kernel.kallsyms]/"*/kallsyms | head -1)")")
perf buildid-list -i "$seg" 2>/dev/null | grep -q "^$kid \[kernel.kallsyms\]" ||
	fail "kallsyms stored under $kid, not the segment's kernel build-id"
grep -q ' T ' "$C/[kernel.kallsyms]/$kid/kallsyms" || fail "kallsyms copy has no text symbols"
vd=$(ls "$C/[vdso]/"*/vdso 2>/dev/null | head -1)
[ -n "$vd" ] || fail "no vdso in the cache"
[ "$(readelf_buildid "$vd")" = "$(basename "$(dirname "$vd")")" ] || fail "vdso build-id"
# Every copy verified: a sample of 20 entries against readelf.
n=0
for l in $(find "$C/.build-id" -type l | head -20); do
	id=$(basename "$(dirname "$l")")$(basename "$l")
	f=$(ls "$l"/elf 2>/dev/null) || continue
	[ "$(readelf_buildid "$f")" = "$id" ] || fail "$f is not $id"
	n=$((n + 1))
done
note "$n cache entries match readelf -n"

# The judge: v1's samples name v1's function, v2's name v2's.
mkdir "$T/empty"
rep() { perf --buildid-dir "$1" report -i "$seg" --stdio --no-children --comm pm-capver \
	--sort pid,sym 2>/dev/null | grep '%'; }
rep "$C" > "$T/with"
rep "$T/empty" > "$T/without"
cat "$T/with" | head -6
p1=$(grep pm_capv1_hot "$T/with" | awk '{print $2}' | cut -d: -f1)
p2=$(grep pm_capv2_hot "$T/with" | awk '{print $2}' | cut -d: -f1)
[ -n "$p1" ] && [ -n "$p2" ] || fail "with the cache, perf report does not show both pm_capv1_hot and pm_capv2_hot"
[ "$p1" != "$p2" ] || fail "v1 and v2 attributed to the same process"
grep -q "^ *[0-9.]*% *$p1:pm-capver .*pm_capv2_hot" "$T/with" && fail "v1's process shows v2's function"
grep -q "^ *[0-9.]*% *$p2:pm-capver .*pm_capv1_hot" "$T/with" && fail "v2's process shows v1's function"
grep -q 'pm_capv[12]_hot' "$T/without" && fail "perf report without the cache found the symbols anyway"
note "without the cache: $(head -1 "$T/without")"

# Machine-readable store replies.
# (exit 1: some build-id failed, as above: the segment holds the whole
# host's, and a test beside this one runs binaries a copy refuses, such as
# t_hostile_loop's on a loop device over a user's file; not pm-capver's)
ctl --json store "$seg" > "$T/store.json"; rc=$?
[ "$rc" = 0 ] || [ "$rc" = 1 ] || fail "store --json exited with $rc"
jq -s -e --arg p "$P" 'map(select(.status == "FAIL" and (.path | tostring | startswith($p)))) | length == 0' \
	"$T/store.json" >/dev/null || fail "store --json: a FAIL reply for pm-capver"
jq -s -e 'map(select(.status == "OK")) | length > 2' "$T/store.json" >/dev/null ||
	fail "store --json: no OK replies"
jq -s -e 'last | .ok >= 2 and .segments == 1' "$T/store.json" >/dev/null ||
	fail "store --json: bad summary"

ctl --json status > "$T/st.json"
lost=$(jq .counters.lost "$T/st.json")
stop_daemon
[ "$lost" = 0 ] || fail "$lost records lost"
grep 'capture:' "$T/daemon.log" | tail -1
echo "PASS: v1 and v2 symbolized from the cache, not without it"
