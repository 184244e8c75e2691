#!/bin/sh
# Adversarial: filling the cache (issue 16, "Exhaust").  One user runs 40
# binaries of their own, each with a build-id of its own (anyone can make
# as many as they like), another runs big ones (sparse, 64 MB each).  Each
# user's share holds (user_files, user_bytes per user_interval): the
# first's copies stop at 10, the second's at what fits in 100 MB, both
# counted as refused; a third user's binary and root's are still copied;
# the cache never goes above max_size, and a sparse copy stays sparse on
# disk.  Root's ping is answered within 100 ms, nothing is lost.
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
na=$(ls "$D$HA" 2>/dev/null | wc -l)
nb=$(ls "$D$HB" 2>/dev/null | wc -l)
"$PERFMAPCTL" -s "$T/control.sock" --json status > "$T/st.json"
note "copied: $na of user a's 40, $nb of user b's 4 big ones; refused (quota) $(jq .cache.refused_quota "$T/st.json")"
figure cache_bytes "$(jq .cache.bytes "$T/st.json")"
[ "$na" -eq 10 ] || fail "user a: $na binaries copied, not 10 (user_files)"
[ "$nb" -eq 1 ] || fail "user b: $nb big binaries copied, not 1 (user_bytes 100M)"
jq -e '.cache.refused_quota >= 33' "$T/st.json" >/dev/null || fail "refusals not counted"
[ -f "$D$HC/mine/c00$(printf '3%.0s' $(seq 1 37))/elf" ] || fail "user c's binary was not copied"
[ -f "$D$T/root-bin/d00$(printf '4%.0s' $(seq 1 37))/elf" ] || fail "root's binary was not copied"
jq -e '.cache.bytes <= 1073741824' "$T/st.json" >/dev/null || fail "cache above max_size"
big=$(ls "$D$HB"/*/*/elf 2>/dev/null | head -1)
[ -n "$big" ] && [ "$(du -k "$big" | cut -f1)" -lt 1024 ] || fail "the sparse binary was copied dense"
grep -q "uid $(id -u "$A") used its share" "$T/daemon.log" || fail "the refusal is not logged"
stop_daemon
echo "PASS: each user's share holds; others' binaries are still copied"
