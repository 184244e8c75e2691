#!/bin/sh
# export: segments and the binaries their samples hit, in one file laid out
# as perf archive --all lays out its bundle (the segments, and
# perf.symbols.tar.bz2 in perf archive's ~/.debug layout).
# - The instructions it prints, run word for word by another user with a
#   clean HOME and no access to the state directory, put the segment in the
#   current directory and only build-id cache entries into ~/.debug; perf
#   report there symbolizes the segment (its binary was deleted before the
#   export: only the bundle can supply it).
# - The binaries are those perf buildid-list --with-hits names; the bundle
#   is at most a little larger than perf archive's for the same segment
#   plus the segment itself; --all-binaries packs every binary referenced.
# - Cache files keep one mode policy in the bundle (kallsyms: its owner's
#   only), and the bundle itself is its owner's only.
# - Compression follows the -o extension; a segment outside the state
#   directory is refused; old exports are pruned.
. tests/lib.sh
need_events
need_perf
command -v jq >/dev/null 2>&1 || skip "jq is not installed"
command -v runuser >/dev/null 2>&1 || skip "runuser is not installed (util-linux)"
id nobody >/dev/null 2>&1 || skip "no user nobody to unpack as"

cc -O0 -g -fno-omit-frame-pointer -Wl,--build-id -DVERSION=2 -DKONST=$$ -o "$T/pm-export" \
	tests/progs/capver.c || fail "cannot build capver"
ID=$(readelf_buildid "$T/pm-export")
# 49 Hz: the segment records the whole host, and every export below packs
# (bzip2) each binary its samples hit; at 499 Hz the other lane's tests
# (cc, perf) gave it 15 binaries and 18 MB to pack nine times (92 s in CI).
start_daemon "[record]
frequency = 49
drain_interval = 50ms"
S=$T/control.sock
ctl() { "$PERFMAPCTL" -s "$S" "$@"; }
"$T/pm-export" 1
rm -f "$T/pm-export"
seg=$(ctl snapshot) || fail "snapshot"
segname=$(basename "$seg")
# Five exports from before (STATE/exports keeps the newest four by name).
mkdir -p "$T/state/exports"
for i in 1 2 3 4 5; do : > "$T/state/exports/perfmapd-export-20000101T00000$i.000000000Z.tar"; done
# and the symbols scratch file of an export a crash cut short
head -c 1048576 /dev/zero > "$T/state/exports/.symbols-20000101T000000.000000000Z.tar.bz2"

ctl export "$seg" -o "$T/out.tar.gz" > "$T/export.out" || { cat "$T/export.out"; fail "export"; }
cat "$T/export.out"
gzip -t "$T/out.tar.gz" || fail "-o .tar.gz did not give a gzip file"
[ "$(stat -c %a "$T/out.tar.gz")" = 600 ] || fail "the bundle is not its owner's only"
tar -tzf "$T/out.tar.gz" | sort > "$T/members"
[ "$(cat "$T/members")" = "$(printf '%s\n' "$segname" perf.symbols.tar.bz2 | sort)" ] ||
	{ cat "$T/members"; fail "the bundle holds more than the segment and perf.symbols.tar.bz2"; }
grep -q '^Now please run:$' "$T/export.out" || fail "no instructions printed"
cmd=$(sed -n 's/^\$ //p' "$T/export.out")
[ "$cmd" = "mkdir -p ~/.debug && tar xvf out.tar.gz && tar xvf perf.symbols.tar.bz2 -C ~/.debug" ] ||
	fail "instructions are not perf archive's: $cmd"

# Another user, a clean HOME, no way into the state directory.
H=$(mktemp -d /tmp/perfmapd-home.XXXXXX)
BG_CLEAN=$H
trap 'TEST_RC=$?; rm -rf "$BG_CLEAN"; cleanup' EXIT
cp "$T/out.tar.gz" "$H/"
chown -R nobody "$H"
as_nobody() { runuser -u nobody -- env -i HOME="$H" PATH="$PATH" sh -c "cd '$H' && $1"; }
as_nobody "ls '$T/state'" >/dev/null 2>&1 && fail "nobody can read the state directory: the test proves nothing"
as_nobody "$cmd" > "$H.log" 2>&1 || { cat "$H.log"; fail "the printed instructions fail: $cmd"; }
rm -f "$H.log"
[ -f "$H/$segname" ] || fail "the segment is not in the current directory after unpacking"
find "$H/.debug" -name '*.data' | grep -q . && fail "a segment landed in ~/.debug"
find "$H/.debug" -mindepth 1 -maxdepth 1 | grep -v '/\.build-id$' > "$T/top"
n=0
for l in $(find "$H/.debug/.build-id" -type l); do
	id=$(basename "$(dirname "$l")")$(basename "$l")
	f=$(ls "$l"/elf "$l"/kallsyms "$l"/vdso 2>/dev/null | head -1)
	[ -n "$f" ] || fail "$l does not resolve inside ~/.debug"
	case $f in */kallsyms) [ "$(stat -c %a "$f")" = 600 ] || fail "kallsyms is not its owner's only";;
	*) [ "$(readelf_buildid "$f")" = "$id" ] || fail "$f is not $id";; esac
	n=$((n + 1))
done
note "$n build-id entries in ~/.debug, all resolve and verify; nothing else there"
as_nobody "perf report -i '$segname' --stdio --comm pm-export --sort sym 2>/dev/null" |
	grep -q pm_capv2_hot || fail "perf report (clean HOME, another user) does not symbolize the segment"
rm -rf "$H/.debug"
as_nobody "perf report -i '$segname' --stdio --comm pm-export --sort sym 2>/dev/null" |
	grep -q pm_capv2_hot && fail "symbolized without the bundle?"

# The binaries are perf's --with-hits; the size is perf archive's and the segment's.
mkdir "$T/cmp"
cp "$seg" "$T/cmp/s.data"
(cd "$T/cmp" && perf --buildid-dir "$T/state/debug" archive s.data >/dev/null 2>&1) ||
	fail "perf archive failed"
tar -xOzf "$T/out.tar.gz" perf.symbols.tar.bz2 | tar -tjf - | grep '^\.build-id/' |
	tr -d '/' | sed 's/^\.build-id//' | sort > "$T/ours"
tar -tjf "$T/cmp/s.data.tar.bz2" | grep '^\.build-id/' | tr -d '/' | sed 's/^\.build-id//' |
	sort > "$T/perfs"
cmp -s "$T/ours" "$T/perfs" || { diff "$T/ours" "$T/perfs"; fail "the bundle's binaries are not perf archive's"; }
grep -q "^$ID\$" "$T/ours" || fail "pm-export ($ID) is not in the bundle"
ours=$(stat -c %s "$T/out.tar.gz")
perfs=$(stat -c %s "$T/cmp/s.data.tar.bz2")
segz=$(bzip2 -c "$seg" | wc -c)
note "export $ours bytes; perf archive $perfs bytes + the segment bzip2'd $segz bytes ($(wc -l < "$T/ours") binaries)"
[ "$ours" -le $(( (perfs + segz) * 21 / 20 + 65536 )) ] ||
	fail "the export ($ours) is more than a little larger than perf archive's $perfs + $segz"

ctl export "$seg" --all-binaries -o "$T/every.tar" > /dev/null || fail "export --all-binaries"
every=$(bundle_files "$T/every.tar" | grep -c '^\.build-id/')
[ "$every" -gt "$(wc -l < "$T/ours")" ] || fail "--all-binaries packed $every binaries, no more than the hits"
note "--all-binaries: $every binaries"

# --since is the user's time: read in perfmapctl's time zone, not the
# daemon's (here 12 hours apart: the daemon read it as 12 hours ahead, a
# time no segment reaches)
now=$(date +%s)
since=$(TZ=PMT-12 date -d "@$((now - 300))" '+%Y-%m-%d %H:%M:%S')
TZ=PMT-12 ctl --json export --since "$since" -o "$T/tz.tar" > "$T/tz.json" ||
	fail "export --since '$since' in a time zone 12 hours from the daemon's: $(cat "$T/tz.json")"
jq -e '.segments >= 1' "$T/tz.json" > /dev/null || fail "export --since in the user's time zone: $(cat "$T/tz.json")"
# -o over a symlink (one a user planted in a shared directory) or an old
# file: the export takes the name, never the file it pointed to or its mode
echo precious > "$T/victim" && chmod 0644 "$T/victim"
ln -s "$T/victim" "$T/planted.tar"
ctl export "$seg" -o "$T/planted.tar" > /dev/null || fail "export -o over a symlink"
[ "$(cat "$T/victim")" = precious ] || fail "export -o wrote through a symlink"
[ ! -L "$T/planted.tar" ] && [ "$(stat -c %a "$T/planted.tar")" = 600 ] ||
	fail "export -o over a symlink: $(ls -l "$T/planted.tar")"
cp "$T/victim" "$T/old.tar"
ctl export "$seg" -o "$T/old.tar" > /dev/null || fail "export -o over an old file"
[ "$(stat -c %a "$T/old.tar")" = 600 ] || fail "export -o kept an old file's mode $(stat -c %a "$T/old.tar")"
tar -tf "$T/old.tar" | grep -q '^perf.symbols.tar.bz2$' || fail "export -o over an old file: not an export"
ls -A "$T" | grep -q '^\.old\.tar\.' && fail "export -o left its temporary file"
# --since, --json, plain tar, refusals.
ctl --json export --since -1h -o "$T/all.tar" > "$T/export.json" || fail "export --since --json"
jq -e '.segments >= 1 and .buildids >= 1 and (.instructions | test("perf.symbols.tar.bz2"))' \
	"$T/export.json" >/dev/null || fail "export --json: $(cat "$T/export.json")"
tar -tf "$T/all.tar" | grep -q '^perf.symbols.tar.bz2$' || fail "plain .tar export has no perf.symbols.tar.bz2"
ctl export "$T/outside.data" -o "$T/o.tar" 2>/dev/null && fail "export of a file outside segments/"
ctl export "$seg" 2>/dev/null && fail "export without -o was accepted"
ctl export --since yesterdayish -o "$T/o.tar" 2> "$T/err" && fail "a bad --since was accepted"
grep -q 'yesterdayish' "$T/err" || fail "a bad --since is not named: $(cat "$T/err")"
ctl export "$seg" -o /nonexistent/dir/x.tar 2> "$T/err" && fail "export to an unwritable path succeeded"
grep -q 'nonexistent' "$T/err" || fail "export error does not name the path: $(cat "$T/err")"
ls -A "$T/state/exports" | grep -q '^\.symbols' &&
	fail "a symbols scratch file was left in exports/ (a crash's is removed by the next export)"
# A binary the cache no longer holds (its entry removed): the bundle is
# written with the rest and the exit status is 1, as store's (before: 0,
# and "export && ship" shipped a bundle short of it without a word).
link=$T/state/debug/.build-id/$(echo "$ID" | cut -c1-2)/$(echo "$ID" | cut -c3-)
entry=$(readlink -f "$link") && [ -d "$entry" ] || fail "no cache entry for pm-export ($link)"
rm -rf "$entry" "$link"
ctl export "$seg" -o "$T/short.tar" > "$T/short.out" 2> "$T/short.err"
rc=$?
[ "$rc" = 1 ] || { cat "$T/short.out" "$T/short.err"; fail "an export short of a binary exited $rc"; }
[ -s "$T/short.tar" ] || fail "an export short of a binary wrote no bundle"
grep -q "could not be packed" "$T/short.err" || fail "an export short of a binary: $(cat "$T/short.err")"
# The newest four kept by name: the exports made here (the last one stays
# there when the copy to -o fails) first, then the newest of the old ones.
ls "$T/state/exports" > "$T/kept"
made=$(grep -vc '^perfmapd-export-2000' "$T/kept")
old=$(grep -c '^perfmapd-export-2000' "$T/kept")
[ "$(wc -l < "$T/kept")" = 4 ] && [ "$made" -ge 1 ] &&
	grep -qx "$(jq -r .path "$T/export.json" | xargs basename)" "$T/kept" ||
	{ cat "$T/kept"; fail "STATE/exports does not hold the newest four exports"; }
for i in $(seq 5 -1 1); do	# the old ones kept are the newest of them
	k=$(grep -c "^perfmapd-export-20000101T00000$i" "$T/kept")
	[ "$k" = "$([ $((5 - i)) -lt "$old" ] && echo 1 || echo 0)" ] ||
		{ cat "$T/kept"; fail "old export $i: kept $k times, with $old old ones kept"; }
done
stop_daemon
echo "PASS: the export unpacks as perf archive says, reports on a clean HOME, perf archive's size"
