#!/bin/sh
# Adversarial: export and the cache's private files.  A member of the
# control group may export (a privileged command), and the bundle is the
# requester's, whatever the modes of its members say.  The cache keeps
# some files root's only (mode 0600): the copy of a binary nobody else
# could read (root's, 0700 in a 0700 directory) and the kernel's symbol
# table.  Before, a member's export packed both, and root's export stayed
# readable by the group in state_dir/exports, as did the symbols scratch
# file while it was written.  Now:
# - a member's bundle leaves them out and says how many ("only root may
#   export"), and still holds the rest (the segment, the vDSO, ...);
# - a path the member names is not walked as root (store and export say
#   the same of a file that exists where they cannot look as of none);
# - root's bundle holds them, and its file in state_dir/exports is root's
#   only (the member cannot read it there).
. tests/lib.sh
. tests/hostile/lib.sh
hostile_start
need_perf
secret_binary
new_group CG exp "$A"

# (copied long before they run: a file written just before its mapping
# is refused as changed)
cp /usr/bin/tac "$T/tac1" && cp /usr/bin/tac "$T/tac2" || fail "cp tac"
start_daemon "[daemon]
control_group = $CG
[record]
frequency = 499
drain_interval = 100ms"
"$T/secret/bin" > /dev/null
# one build-id under two names, run without a sample in it: an export
# leaves it out, and freed both names (before: only the first, a leak
# per export that the sanitizer's build reports at the stop)
"$T/tac1" /dev/null && "$T/tac2" /dev/null || fail "tac"
# a public binary on the CPU: the member's bundle has one to hold (before,
# it held what the daemon's own samples hit, libc, which a loaded CI missed)
"$T/spin" 0.3 > /dev/null || fail "spin"
sleep 0.5
seg=$("$PERFMAPCTL" -s "$T/control.sock" snapshot) || fail "snapshot"
perf buildid-list --with-hits -i "$seg" 2> /dev/null | grep -q "^$K $T/secret/bin" ||
	fail "the segment has no sample of the secret binary ($K): the attack cannot be judged"
mode=$(stat -c %a "$(readlink -f "$T/state/debug/.build-id/$(echo "$K" | cut -c1-2)/$(echo "$K" | cut -c3-)")/elf" 2>/dev/null)
note "the cache's copy of the secret binary: mode ${mode:-none yet}"

# The exports pack the segment's hits (the secret binary ran on the CPU):
# with --all-binaries each took 6 s of bzip2 over every binary on the host.
# symbols SYMS BUNDLE: the members of the bundle's perf.symbols.tar.bz2 into SYMS
symbols() { bundle_files "$2" > "$1" || fail "cannot list $2"; }

as_user "$A" "$PERFMAPCTL" -s "$T/control.sock" --json export "$seg" \
	-o "$H/a.tar" > "$T/a.json" 2> "$T/a.err" || fail "the member's export: $(cat "$T/a.err")"
[ "$(stat -c %U "$H/a.tar")" = "$A" ] || fail "the member's bundle is not theirs"
symbols "$T/a.syms" "$H/a.tar"
grep -q "/$K/elf\$" "$T/a.syms" &&
	fail "the member's bundle holds root's private binary $K"
grep -q "kallsyms\$" "$T/a.syms" && fail "the member's bundle holds the kernel's symbol table"
grep -q "/spin/[0-9a-f]*/elf\$" "$T/a.syms" || { cat "$T/a.syms"; fail "the member's bundle does not hold the public binary spin"; }
withheld=$(jq .withheld "$T/a.json")
[ "$withheld" -ge 2 ] || fail "the member's reply withheld $withheld, not the binary and kallsyms: $(cat "$T/a.json")"
as_user "$A" "$PERFMAPCTL" -s "$T/control.sock" export "$seg" \
	-o "$H/b.tar" > "$T/b.out" 2>&1 || fail "the member's export: $(cat "$T/b.out")"
grep -q "only root may export" "$T/b.out" || fail "the member was not told: $(cat "$T/b.out")"
ap=$(jq -r .path "$T/a.json")
[ "$(stat -c %a "$ap")" = 640 ] || fail "the member's export in state_dir/exports is mode $(stat -c %a "$ap")"

# A member's path is not walked as root: before, the daemon's realpath
# told an existing file ("not a segment") from a missing one ("No such
# file or directory") in a directory the member cannot search.
: > "$T/secret/perf-20260101-000000-1.data"
for n in 1 2; do
	for cmd in store export; do
		as_user "$A" "$PERFMAPCTL" -s "$T/control.sock" $cmd \
			"$T/secret/perf-20260101-000000-$n.data" > "$T/probe$n.$cmd" 2>&1 &&
			fail "the member's $cmd of a path outside the segments worked"
		sed -i "s/000000-$n\.data/000000-N.data/g" "$T/probe$n.$cmd"
	done
done
for cmd in store export; do
	cmp -s "$T/probe1.$cmd" "$T/probe2.$cmd" || fail "$cmd tells an existing file in a directory the member cannot search from a missing one: '$(cat "$T/probe1.$cmd")' against '$(cat "$T/probe2.$cmd")'"
done
note "a path outside the segments: $(cat "$T/probe1.store")"

"$PERFMAPCTL" -s "$T/control.sock" --json export "$seg" -o "$T/r.tar" \
	> "$T/r.json" || fail "root's export"
symbols "$T/r.syms" "$T/r.tar"
grep -q "/$K/elf\$" "$T/r.syms" || fail "root's bundle lacks the secret binary $K"
grep -q "kallsyms\$" "$T/r.syms" || fail "root's bundle lacks the kernel's symbol table"
[ "$(jq .withheld "$T/r.json")" = 0 ] || fail "root's export withheld files: $(cat "$T/r.json")"
rp=$(jq -r .path "$T/r.json")
[ "$(stat -c %a "$rp")" = 600 ] || fail "root's export in state_dir/exports is mode $(stat -c %a "$rp")"
as_user "$A" cat "$rp" > /dev/null 2>&1 && fail "the member can read root's export in state_dir/exports"
ls -A "$T/state/exports" | grep -q '^\.symbols' && fail "a symbols scratch file was left in exports/"
stop_daemon
echo "PASS: a member's export leaves out the cache's root-only files (withheld $withheld) and says so; root's holds them and stays root's; a member's path is not walked"
