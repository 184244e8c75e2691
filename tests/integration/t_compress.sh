#!/bin/sh
# [segments] compress = zstd: segments written as PERF_RECORD_COMPRESSED
# records (perf record -z's format), read by the real perf and by
# everything of ours that reads segments:
#
#   - the header says "compressed : Zstd, level = 3" and the data section
#     holds nothing but COMPRESSED records (each at most 64 KiB);
#   - perf report, script, buildid-list --with-hits name pm_spin_inner and
#     pm-spin with its build-id; perf's sample count is the index's;
#   - perfmapctl segments / history, then index.db deleted: the rebuild
#     from the compressed segments gives the same rows;
#   - perfmapctl --state-dir profile over a compressed window (perf.data
#     and folded stacks) and export (the binaries the samples hit);
#   - a compressed segment cut two thirds into its data, as a crash
#     leaves it: repaired to the last whole compressed record, perf reads
#     it, HEADER_COMPRESSED back; the same after a real kill -9;
#   - compress set by a reload applies from the next segment on;
#   - then every command of the conformance list (t_perftools.sh) on
#     compressed segments.
. tests/lib.sh
need_events
need_perf
command -v jq >/dev/null || skip "jq is not installed"

build_prog spin
cp "$T/spin" "$T/pm-spin"
ID=$(readelf_buildid "$T/pm-spin")
CONF="[record]
frequency = 499
drain_interval = 100ms
[segments]
compress = zstd
compress_level = 3"
S=$T/control.sock
ctl() { "$PERFMAPCTL" -s "$S" "$@"; }
off() { "$PERFMAPCTL" --state-dir "$T/state" "$@"; }

start_daemon "$CONF"
since=@$(($(date +%s) - 1))
"$T/pm-spin" 2
s1=$(ctl snapshot) || fail "snapshot"
"$T/pm-spin" 2
until=@$(date +%s.%N)
sleep 0.5
stop_daemon
set -- $(segments)
[ $# -ge 2 ] || fail "expected two segments, got $#"

# --- the format ------------------------------------------------------------
# The data section, record by record (python: header sizes are u16, COMPRESSED ones not 8-aligned).
types() {
	python3 - "$1" <<'EOF'
import struct, sys
f = open(sys.argv[1], 'rb'); h = f.read(104)
off, size = struct.unpack_from('<QQ', h, 40)
f.seek(off); data = f.read(size); pos = 0; seen = {}; big = 0
while pos + 8 <= len(data):
    t, misc, sz = struct.unpack_from('<IHH', data, pos)
    if sz < 8: break
    seen[t] = seen.get(t, 0) + 1; big = max(big, sz); pos += sz
print(' '.join('%d:%d' % kv for kv in sorted(seen.items())), 'max', big, 'end', pos == len(data))
EOF
}
for seg in "$@"; do
	perf report --header-only -i "$seg" 2>/dev/null | grep -q '^# compressed : Zstd, level = 3, ratio = [0-9]' ||
		fail "$seg: no HEADER_COMPRESSED (Zstd, level 3)"
	t=$(types "$seg")
	echo "$t" | grep -q '^81:[0-9]* max [0-9]* end True$' ||
		fail "$seg: not only COMPRESSED records in the data section: $t"
	note "$(basename "$seg"): $t"
done

# --- perf -------------------------------------------------------------------
P="perf --buildid-dir $T/state/debug"
for seg in "$@"; do
	$P report --stdio --no-children --comm pm-spin --sort sym -i "$seg" 2>"$T/err" > "$T/out" ||
		{ cat "$T/err"; fail "perf report $seg"; }
	grep -q pm_spin_inner "$T/out" || fail "perf report $seg: no pm_spin_inner"
	$P script -F comm,ip,sym -i "$seg" 2>/dev/null | grep -q 'pm_spin_inner' ||
		fail "perf script $seg: no pm_spin_inner"
	$P buildid-list --with-hits -i "$seg" 2>/dev/null | grep -q "^$ID $T/pm-spin\$" ||
		fail "buildid-list --with-hits $seg: no $ID $T/pm-spin"
	n=$(seg_samples "$seg")
	m=$(off --json segments --all | jq --arg b "$(basename "$seg")" \
		'[.segments[] | select(.name == $b) | .samples][0]')
	[ "$n" = "$m" ] || fail "$seg: perf reads $n samples, the index says $m"
	note "$(basename "$seg"): perf report/script/buildid-list ok, $n samples as the index says"
done

# --- the index: the same rows after a rebuild from compressed segments -----------
rows() {
	off --json segments --all | jq -c '[.segments[] | [.name, .samples, .lost, .size]]'
	off --json history "$T/pm-spin" | jq -c '[.objects[] | [.build_id, .first_seen_ns, .last_seen_ns]]'
	off --json segments "$(basename "$s1")" | jq -c '[.objects[] | [.path, .build_id]] | sort'
}
rows > "$T/rows.live"
[ "$(grep -c "$ID" "$T/rows.live")" = 2 ] ||
	{ cat "$T/rows.live"; fail "pm-spin's $ID not in its history and its segment's build-ids"; }
rm -f "$T/state/index.db" "$T/state/index.db-wal" "$T/state/index.db-shm"
start_daemon "$CONF"
sleep 0.5
stop_daemon
# the segment the daemon just wrote is not in the comparison
rows | sed "s/,\[\"$(basename "$(segments | tail -n 1)")\"[^]]*\]//" > "$T/rows.rebuilt"
sed "s/,\[\"$(basename "$(segments | tail -n 1)")\"[^]]*\]//" "$T/rows.live" > "$T/rows.live2"
cmp -s "$T/rows.live2" "$T/rows.rebuilt" ||
	{ diff "$T/rows.live2" "$T/rows.rebuilt"; fail "the rebuilt index differs"; }
note "index rebuilt from compressed segments: the same rows ($(wc -c < "$T/rows.live") bytes)"

# --- profile and export ------------------------------------------------------
W="--since $since --until $until"
off --json profile $W -o "$T/p.data" > "$T/p.json" || fail "profile -o p.data"
n=$(jq .samples "$T/p.json")
[ "$n" -gt 0 ] || fail "profile: no samples"
[ "$(perf report -D -i "$T/p.data" 2>/dev/null | grep -c 'PERF_RECORD_SAMPLE(')" = "$n" ] ||
	fail "perf reads a different number of samples than the profile's $n"
off profile $W --comm pm-spin -o "$T/p.folded" > /dev/null || fail "profile -o p.folded"
grep -q '^pm-spin;.*pm_spin_inner [0-9]*$' "$T/p.folded" || fail "folded: no pm-spin;...;pm_spin_inner"
note "profile of the compressed window: $n samples"
start_daemon "$CONF"
ctl export "$s1" -o "$T/x.tar" > /dev/null || fail "export"
stop_daemon
bundle_files "$T/x.tar" | grep -q "/$ID/elf\$" ||
	fail "export: pm-spin's binary ($ID) not in perf.symbols.tar.bz2"
note "export: the segment's hits found through its compressed records"

# --- a crash: cut inside the compressed stream ---------------------------------
seg=$s1
good_n=$(seg_samples "$seg")
dsize=$(python3 -c "import struct,sys; f=open(sys.argv[1],'rb'); print(struct.unpack_from('<QQ', f.read(104), 40))" "$seg")
doff=$(echo "$dsize" | tr -d '(),' | cut -d' ' -f1); dlen=$(echo "$dsize" | tr -d '(),' | cut -d' ' -f2)
cut=$((doff + dlen * 2 / 3 + 5))
name=$(basename "$seg" .data)
torn=$T/state/segments/perf-999990-20300101T000000Z.data.partial
head -c "$cut" "$seg" > "$torn"
# as a crash leaves it: data.size 0 (offset 48), no feature bits (72..103)
head -c 8 /dev/zero | dd of="$torn" bs=1 seek=48 conv=notrunc 2>/dev/null
head -c 32 /dev/zero | dd of="$torn" bs=1 seek=72 conv=notrunc 2>/dev/null
start_daemon "$CONF"
stop_daemon
fixed=${torn%.partial}
[ -f "$fixed" ] || { cat "$T/daemon.log"; fail "the torn compressed segment was not repaired"; }
grep -q "repaired $fixed" "$T/daemon.log" || fail "no 'repaired' line"
note "$(grep "repaired $fixed" "$T/daemon.log" | sed 's/^perfmapd: //')"
$P report --stdio -i "$fixed" > "$T/out" 2> "$T/err" || { cat "$T/err"; fail "perf report on the repaired segment"; }
grep -qiE 'error|failed|decompress' "$T/err" && { cat "$T/err"; fail "perf complains on the repaired segment"; }
grep -q pm_spin_inner "$T/out" || fail "the repaired segment has no pm_spin_inner"
rn=$(seg_samples "$fixed")
[ "$rn" -gt 0 ] && [ "$rn" -lt "$good_n" ] || fail "repaired: $rn samples of $good_n"
perf report --header-only -i "$fixed" 2>/dev/null | grep -q '^# compressed : Zstd' ||
	fail "the repaired segment has no HEADER_COMPRESSED"
t=$(types "$fixed")
echo "$t" | grep -q '^81:[0-9]* max [0-9]* end True$' || fail "repaired: $t"
note "repaired at a cut $((cut - doff)) bytes into the data: $rn of $good_n samples, perf reads it"

# --- a real crash: kill -9 while writing compressed records ---------------------
"$T/pm-spin" 3 & BG_PIDS="$!"
start_daemon "$CONF"
sleep 1.5
kill -9 "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=""
torn=$(ls "$T/state/segments/"*.partial 2>/dev/null | head -1)
[ -n "$torn" ] || fail "no torn segment after kill -9"
start_daemon "$CONF"
stop_daemon
wait
fixed=${torn%.partial}
[ -f "$fixed" ] || fail "the segment torn by kill -9 was not repaired"
perf report --header-only -i "$fixed" 2>/dev/null | grep -q '^# compressed : Zstd' ||
	fail "kill -9: the repaired segment has no HEADER_COMPRESSED"
$P report --stdio --comm pm-spin -i "$fixed" > "$T/out" 2> "$T/err" || { cat "$T/err"; fail "perf report after kill -9"; }
grep -q pm_spin_inner "$T/out" || fail "kill -9: no pm_spin_inner in the repaired segment"
note "kill -9: $(grep "repaired $fixed" "$T/daemon.log" | sed 's/^perfmapd: //')"

# --- reload: compress takes effect with the next segment -------------------------
rm -f "$T/state/segments/"perf-*.data
start_daemon "[segments]
compress = none"
printf '%s\n' "$CONF" > "$T/perfmapd.conf"
ctl reload | grep -q reloaded || fail "reload"
a=$(ctl snapshot) || fail "snapshot"
sleep 0.5
b=$(ctl snapshot) || fail "snapshot"
stop_daemon
perf report --header-only -i "$a" 2>/dev/null | grep -q '^# compressed' &&
	fail "the segment open at the reload is compressed"
perf report --header-only -i "$b" 2>/dev/null | grep -q '^# compressed : Zstd, level = 3' ||
	fail "the segment after the reload is not compressed"
note "reload: the open segment stays as it began, the next one is compressed"

# --- the conformance list -------------------------------------------------------
PERFTOOLS_COMPRESS=zstd sh tests/integration/t_perftools.sh > "$T/perftools.log" 2>&1; rc=$?
sed 's/^/  | /' "$T/perftools.log"
[ $rc -eq 0 ] || fail "t_perftools.sh on compressed segments: exit $rc"
echo "PASS: compressed segments read by perf (the conformance list) and by perfmapd"
