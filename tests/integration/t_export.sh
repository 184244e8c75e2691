#!/bin/sh
# export: a perf archive-style tarball that another machine unpacks and
# reports from.  The binary is deleted before the export, so only the
# cache can supply it; perf, pointed at the unpacked directory, symbolizes
# the segment, and every .build-id link in the archive resolves to a file
# with that build-id.  Compression follows the -o extension; a segment
# outside the state directory is refused.
. tests/lib.sh
need_events
need_perf
command -v jq >/dev/null 2>&1 || skip "jq is not installed"

cc -O0 -g -fno-omit-frame-pointer -Wl,--build-id -DVERSION=2 -DKONST=$$ -o "$T/pm-export" \
	tests/progs/capver.c || fail "cannot build capver"
ID=$(readelf_buildid "$T/pm-export")
start_daemon "[record]
frequency = 499
drain_interval = 50ms"
S=$T/control.sock
ctl() { "$PERFMAPCTL" -s "$S" "$@"; }
"$T/pm-export" 1
rm -f "$T/pm-export"
seg=$(ctl snapshot) || fail "snapshot"

ctl export "$seg" -o "$T/out.tar.gz" > "$T/export.out" || { cat "$T/export.out"; fail "export"; }
cat "$T/export.out"
gzip -t "$T/out.tar.gz" || fail "-o .tar.gz did not give a gzip file"
mkdir "$T/x"
tar -xzf "$T/out.tar.gz" -C "$T/x" || fail "tar cannot unpack the export"
[ -f "$T/x/$(basename "$seg")" ] || fail "the segment is not at the top of the archive"
l=$T/x/.build-id/$(echo "$ID" | cut -c1-2)/$(echo "$ID" | cut -c3-)
[ -L "$l" ] || fail "no .build-id link for $ID"
[ "$(readelf_buildid "$l/elf")" = "$ID" ] || fail "$l/elf is not $ID"
n=0
for l in $(find "$T/x/.build-id" -type l); do
	id=$(basename "$(dirname "$l")")$(basename "$l")
	f=$(ls "$l"/elf "$l"/kallsyms "$l"/vdso 2>/dev/null | head -1)
	[ -n "$f" ] || fail "$l does not resolve inside the archive"
	case $f in */kallsyms) ;; *) [ "$(readelf_buildid "$f")" = "$id" ] || fail "$f is not $id";; esac
	n=$((n + 1))
done
note "$n build-id entries in the archive, all resolve and verify"
perf --buildid-dir "$T/x" report -i "$T/x/$(basename "$seg")" --stdio --comm pm-export \
	--sort sym 2>/dev/null | grep -q pm_capv2_hot ||
	fail "perf does not symbolize the unpacked segment from the archive"
mkdir "$T/empty"
perf --buildid-dir "$T/empty" report -i "$T/x/$(basename "$seg")" --stdio --comm pm-export \
	--sort sym 2>/dev/null | grep -q pm_capv2_hot && fail "symbolized without the archive?"

# --since, --json, plain tar, refusals.
ctl --json export --since -1h -o "$T/all.tar" > "$T/export.json" || fail "export --since --json"
jq -e '.segments >= 1 and .buildids >= 1' "$T/export.json" >/dev/null || fail "export --json: $(cat "$T/export.json")"
tar -tf "$T/all.tar" | grep -q '^\.build-id/' || fail "plain .tar export has no .build-id entries"
ctl export "$T/outside.data" -o "$T/o.tar" 2>/dev/null && fail "export of a file outside segments/"
ctl export "$seg" 2>/dev/null && fail "export without -o was accepted"
ctl export "$seg" -o /nonexistent/dir/x.tar 2> "$T/err" && fail "export to an unwritable path succeeded"
grep -q 'nonexistent' "$T/err" || fail "export error does not name the path: $(cat "$T/err")"
[ "$(ls "$T/state/exports" | wc -l)" -le 4 ] || fail "old exports are not pruned"
stop_daemon
echo "PASS: the exported archive reports on its own"
