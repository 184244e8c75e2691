#!/bin/sh
# Adversarial: the cache's directories.  A cache entry is the mapped
# file's whole path made into directories (perf's layout), so a user's
# small binaries under paths of 400 components each made 400 directories
# (an inode and a block each on ext4) that nothing counted: 12 binaries
# of 16 KB took 4,800 directories while the cache, and the user's share,
# counted 200 KB.  Each directory is charged to the entry now
# (bidcache_dirs_cost): the user's share (user_bytes = 8M) stops the
# copies after a few, counted as refused, and the cache's size says what
# its directories take.  Root's ping is answered within 100 ms.
. tests/lib.sh
. tests/hostile/lib.sh
hostile_start
build_hostile mkelf
build_hostile mapexec

DEPTH=400
FILES=""
for i in $(seq 10 21); do
	d=$H/d$i
	for _ in $(seq 1 $DEPTH); do d=$d/a; done
	FILES="$FILES $d/bin"
	as_user "$A" sh -c "mkdir -p '$d' && '$T/mkelf' forge '$T/spin' '$d/bin' \
		$(printf '%02x' "$i")1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e" || fail "the user's deep binary $i"
done

start_daemon "[record]
frequency = 99
drain_interval = 100ms
[cache]
capture = eager
user_bytes = 8M
user_files = 1000"
sleep 1
start_pinger
# shellcheck disable=SC2086
as_user "$A" "$T/mapexec" 2 $FILES || fail "the attack did not run"
sleep 2
hostile_judge
C=$T/state/debug
dirs=$(find "$C" -type d | wc -l)
refused=$(counter cache.refused_quota)
bytes=$(counter cache.bytes)
note "cache: $dirs directories, $bytes bytes counted, $refused copies refused for the user's share"
figure cache "dirs $dirs counted_bytes $bytes refused $refused"
[ "$refused" -ge 1 ] ||
	fail "no copy was refused: the user's share did not count the entries' directories"
[ "$dirs" -lt $((DEPTH * 6)) ] ||
	fail "the user's deep paths made $dirs directories under the cache"
# what the cache counts covers its directories (4 KB each)
[ "$bytes" -ge $(( (dirs - 20) * 4096 )) ] ||
	fail "the cache counts $bytes bytes for $dirs directories"
stop_daemon
echo "PASS: a user's deep paths are charged for their directories ($dirs made, $refused refused)"
