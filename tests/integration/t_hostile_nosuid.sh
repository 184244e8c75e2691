#!/bin/sh
# Adversarial: a root-owned file on a file system a user mounted.  Desktop
# hosts let users mount their own images and removable disks (udisks,
# always nosuid), whose files may well be root's, mode 0755.  The cache
# trusted a copy by its file's owner alone, so such a file, carrying the
# build-id of a system binary (anyone can read one and write it into a
# note) and mapped before the system binary ran, became that binary's
# copy for good: the real one, run later, was "present".  Now a file on a
# nosuid mount is a user's (DIR/.ns/1/...), whoever owns it, and the real
# binary's copy replaces it.  (Root mounts the tmpfs here, as udisks would
# for the user.)
. tests/lib.sh
. tests/hostile/lib.sh
hostile_start
build_hostile mkelf
build_hostile mapexec

M=$T/media
mkdir -m 0755 "$M"
mount -t tmpfs -o nosuid,nodev,mode=0755,size=16m pmnosuid "$M" 2>/dev/null ||
	skip "cannot mount a tmpfs (needs CAP_SYS_ADMIN)"
at_exit "umount -l '$M'"
printf 'int main(void) { return %d; }\n' $(($$ % 100)) |
	cc -O0 -x c - -o "$T/real" "$(unique_buildid)" || fail "cannot build the real binary"
chmod 0755 "$T/real"
K=$(readelf_buildid "$T/real")
"$T/mkelf" forge "$T/spin" "$M/fake" "$K" && chmod 0755 "$M/fake" || fail "mkelf forge"
[ "$(stat -c %U "$M/fake")" = root ] || fail "the fake is not root's: the test proves nothing"

start_daemon "[record]
frequency = 499
drain_interval = 50ms"
sleep 0.5
as_user "$A" "$T/mapexec" 1 "$M/fake" || fail "the user's mapping"
sleep 1
"$T/real"
sleep 2
stop_daemon

link=$T/state/debug/.build-id/$(echo "$K" | cut -c1-2)/$(echo "$K" | cut -c3-)
[ -e "$link" ] || fail "no cache entry for $K: the attack cannot be judged"
entry=$(readlink -f "$link")
note "the cache's $K: ${entry#$T/state/debug}"
case $entry in
*/.ns/*) fail "the cache's copy of $K is still a user's: the real binary did not replace it";;
esac
cmp -s "$entry/elf" "$T/real" || fail "the cache's copy of $K is not the real binary ($entry)"
echo "PASS: a root-owned fake on a nosuid mount, mapped first, did not become $K's copy"
