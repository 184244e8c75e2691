#!/bin/sh
# Adversarial: filling the cache (issue 16, "Exhaust").  One user runs 40
# binaries of their own, each with a build-id of its own (anyone can make
# as many as they like), another runs big ones (sparse, 64 MB each).  Each
# user's share holds (user_files, user_bytes per user_interval): the
# first's copies stop at 10, the second's at what fits in 100 MB, both
# counted as refused; a third user's binary and root's are still copied;
# the cache never goes above max_size, and a sparse copy stays sparse on
# disk.  Root's ping is answered within 100 ms, nothing is lost.
# Users' copies are untrusted (DIR/.ns/1/<path>): a user who writes the
# build-id of a system binary into a file of theirs and runs it before the
# system binary runs does not make it that binary's copy: root's run of
# the real one replaces it.  Before, the first copy won, and perf showed
# the system binary's samples with the user's functions.  The same when
# the loop opens neither file (kernel build-id mode).  A root
# container's binary is copied root's only.
# A copy is readable by the control group only when anyone could read the
# original: a 0755 binary in a user's 0700 directory is copied 0600 (its
# directory was not looked at, and the copy was 0644).
# test-lane: alone (tests/run-tests.sh: buildid_mode = mmap2, whose build-id event reaches every perf user)
. tests/lib.sh
. tests/hostile/lib.sh
hostile_start

new_user B b
new_user C c
HA=$H
HB=$(user_home "$B")
HC=$(user_home "$C")
build_hostile mkelf
for i in $(seq 10 49); do
	as_user "$A" "$T/mkelf" forge "$T/spin" "$HA/b$i" "$(printf 'a%02d' $i)$(printf '1%.0s' $(seq 1 37))" ||
		fail "mkelf $i"
done
for i in 1 2 3 4; do
	as_user "$B" "$T/mkelf" forge "$T/spin" "$HB/big$i" "$(printf 'b%02d' $i)$(printf '2%.0s' $(seq 1 37))" &&
		as_user "$B" truncate -s 64M "$HB/big$i" || fail "big $i"
done
as_user "$C" "$T/mkelf" forge "$T/spin" "$HC/mine" "c00$(printf '3%.0s' $(seq 1 37))" || fail "mkelf c"
"$T/mkelf" forge "$T/spin" "$T/root-bin" "d00$(printf '4%.0s' $(seq 1 37))" || fail "mkelf root"

start_daemon "[record]
frequency = 499
drain_interval = 50ms
[cache]
max_size = 1G
user_files = 10
user_bytes = 100M
user_interval = 1h"
sleep 1
start_pinger
for i in $(seq 10 49); do as_user "$A" "$HA/b$i" 0.02 >/dev/null; done
for i in 1 2 3 4; do as_user "$B" "$HB/big$i" 0.02 >/dev/null; done
sleep 1
as_user "$C" "$HC/mine" 0.05 >/dev/null
"$T/root-bin" 0.05 >/dev/null
sleep 2
hostile_judge

D=$T/state/debug
U=$D/.ns/1		# users' copies (BIDCACHE_NS_USER)
na=$(ls "$U$HA" 2>/dev/null | wc -l)
nb=$(ls "$U$HB" 2>/dev/null | wc -l)
"$PERFMAPCTL" -s "$T/control.sock" --json status > "$T/st.json"
note "copied: $na of user a's 40, $nb of user b's 4 big ones; refused (quota) $(jq .cache.refused_quota "$T/st.json")"
figure cache_bytes "$(jq .cache.bytes "$T/st.json")"
[ "$na" -eq 10 ] || fail "user a: $na binaries copied, not 10 (user_files)"
[ "$nb" -eq 1 ] || fail "user b: $nb big binaries copied, not 1 (user_bytes 100M)"
jq -e '.cache.refused_quota >= 33' "$T/st.json" >/dev/null || fail "refusals not counted"
[ -f "$U$HC/mine/c00$(printf '3%.0s' $(seq 1 37))/elf" ] || fail "user c's binary was not copied"
[ -f "$D$T/root-bin/d00$(printf '4%.0s' $(seq 1 37))/elf" ] || fail "root's binary was not copied"
jq -e '.cache.bytes <= 1073741824' "$T/st.json" >/dev/null || fail "cache above max_size"
big=$(ls "$U$HB"/*/*/elf 2>/dev/null | head -1)
[ -n "$big" ] && [ "$(du -k "$big" | cut -f1)" -lt 1024 ] || fail "the sparse binary was copied dense"
grep -q "uid $(id -u "$A") used its share" "$T/daemon.log" || fail "the refusal is not logged"

# Who may read a copy: a world-readable binary anyone can reach is 0644,
# one in a directory only its user may enter 0600.
mine=$U$HC/mine/c00$(printf '3%.0s' $(seq 1 37))/elf
[ "$(stat -c %a "$mine")" = 644 ] || fail "user c's binary in a 0755 home copied $(stat -c %a "$mine")"
as_user "$C" mkdir -m 0700 "$HC/private" || fail "mkdir private"
PRIV=e00$(printf '5%.0s' $(seq 1 37))
as_user "$C" "$T/mkelf" forge "$T/spin" "$HC/private/prog" "$PRIV" || fail "mkelf private"
as_user "$C" chmod 0755 "$HC/private/prog"
as_user "$C" "$HC/private/prog" 0.3 > /dev/null
priv=$U$HC/private/prog/$PRIV/elf
for _ in $(seq 1 50); do [ -f "$priv" ] && break; sleep 0.1; done
[ -f "$priv" ] || fail "user c's private binary was not copied"
[ "$(stat -c %a "$priv")" = 600 ] ||
	fail "a 0755 binary in a 0700 directory copied $(stat -c %a "$priv"): the control group reads it"

# A system binary's build-id in a user's file, run first.
YES=$(readelf_buildid /usr/bin/yes)
[ -n "$YES" ] || fail "/usr/bin/yes has no build-id"
link="$D/.build-id/$(echo "$YES" | cut -c1-2)/$(echo "$YES" | cut -c3-)"
[ -e "$link" ] && fail "/usr/bin/yes is in the cache already: the test proves nothing"
as_user "$C" "$T/mkelf" forge "$T/spin" "$HC/yes" "$YES" || fail "mkelf yes"
as_user "$C" "$HC/yes" 0.3 > /dev/null
for _ in $(seq 1 50); do [ -e "$link/elf" ] && break; sleep 0.1; done
[ -e "$link/elf" ] || fail "user c's forged yes was not copied"
cmp -s "$link/elf" "$HC/yes" || fail "the entry of $YES is not user c's file: the test proves nothing"
yes > /dev/null & y=$!
sleep 0.5
kill "$y"
for _ in $(seq 1 50); do cmp -s "$link/elf" /usr/bin/yes && break; sleep 0.1; done
cmp -s "$link/elf" /usr/bin/yes ||
	fail "the cache's $YES is still user c's file after root ran /usr/bin/yes ($(readlink "$link"))"
[ -e "$U$HC/yes" ] && fail "user c's forged copy stayed beside the real one"
note "$YES: user c's copy replaced by /usr/bin/yes's ($(readlink "$link"))"
stop_daemon

# The same forgery when nobody looks at the files: in kernel build-id
# mode the kernel gives every build-id and the loop opens no file (as for
# a pin's proof, and at the start-up scan).  The user's run comes first;
# root's is still copied, and the entry is the real one (before: the
# user's run queued the build-id, root's was taken for it, and the cache
# kept the user's copy for good).
rm -rf "$T/state"
TAC=$(readelf_buildid /usr/bin/tac)
[ -n "$TAC" ] || fail "/usr/bin/tac has no build-id"
as_user "$C" "$T/mkelf" forge /usr/bin/rev "$HC/tac" "$TAC" || fail "mkelf tac"	# rev, claiming to be tac
start_daemon "[record]
frequency = 99
buildid_mode = mmap2
mmap2_on_leaky_kernel = yes"
grep -q 'build-id mode mmap2' "$T/daemon.log" || skip "this kernel gives no build-ids in MMAP2 records ($(grep 'build-id mode' "$T/daemon.log" | head -1))"
link="$D/.build-id/$(echo "$TAC" | cut -c1-2)/$(echo "$TAC" | cut -c3-)"
sleep 1 | as_user "$C" "$HC/tac" > /dev/null || fail "the user's tac failed"	# alive 1 s
for _ in $(seq 1 50); do [ -e "$link/elf" ] && break; sleep 0.1; done
cmp -s "$link/elf" "$HC/tac" || fail "the user's forged tac was not copied: the test proves nothing ($(readlink "$link" || echo none))"
sleep 1 | /usr/bin/tac > /dev/null || fail "root's tac failed"
for _ in $(seq 1 50); do cmp -s "$link/elf" /usr/bin/tac && break; sleep 0.1; done
cmp -s "$link/elf" /usr/bin/tac ||
	fail "the cache's $TAC is still the user's forgery after root ran /usr/bin/tac ($(readlink "$link" || echo none))"

# A root container's binary (a mount namespace of root's in the initial
# user namespace: trusted, copied as the host's): its path is the
# container's, and the daemon's walk of that path on the host says nothing
# of who may reach the file there (a root-only directory, as docker's).
# The copy is root's only (before: 0644, from the host's directories).
mkdir -m 0700 "$T/ctr-priv" && mkdir -m 0755 "$T/ctr-pub" || fail "mkdir ctr"
cc -O0 -o "$T/ctr-priv/app" tests/progs/spin.c $(unique_buildid) && chmod 0755 "$T/ctr-priv/app" ||
	fail "cannot build the container's app"
CID=$(readelf_buildid "$T/ctr-priv/app")
sleep 1		# older than its mapping
unshare -m --propagation private sh -c "mount --bind '$T/ctr-priv' '$T/ctr-pub' &&
	exec '$T/ctr-pub/app' 0.5" > /dev/null || fail "the container's app failed"
ctr=$D$T/ctr-pub/app/$CID/elf
for _ in $(seq 1 50); do [ -f "$ctr" ] && break; sleep 0.1; done
[ -f "$ctr" ] || { ls -R "$D" | grep -B2 -A2 ctr; fail "the root container's binary was not copied"; }
[ "$(stat -c %a "$ctr")" = 600 ] ||
	fail "a root container's binary from a root-only directory copied $(stat -c %a "$ctr"): the control group reads it"
stop_daemon
echo "PASS: each user's share holds; others' binaries are still copied"
