#!/bin/sh
# Adversarial: an exec storm through long paths (issue 16, "Exhaust").  A
# user hard-links one binary under 2,000 paths of ~3,000 characters and
# runs each once, while the daemon records; it cost +17.5 MB of RSS and
# +16.6 MB of index in 1.4 s, never given back.  Now: the table of
# binaries goes back to what is live once the segments rotate, the
# daemon's heap in use (SQLite's page cache aside) comes back within 2 MB
# of where it was (it kept 7 MB), its peak
# RSS grows by less than 48 MB, index.db stays within db_max_size (the
# history no remaining segment references is pruned), root's ping is
# answered within 100 ms throughout, and no record is lost.
. tests/lib.sh
. tests/hostile/lib.sh
hostile_start

build_prog spin
cp "$T/spin" "$H/bin" && chown "$A" "$H/bin"
# 2,000 links, each under a path of ~3,000 characters
cat > "$T/links.sh" <<'EOS'
set -e
d=$1/$(printf 'd%.0s' $(seq 1 200))
long=$d
for i in $(seq 1 13); do long=$long/$(printf 'x%.0s' $(seq 1 200)); done
mkdir -p "$long"
# (in one process: 2,000 runs of ln took 10 s of the test on a host whose
# fork and exec are slow)
perl -e 'for (1 .. 2000) { link($ARGV[0], "$ARGV[1]/p$_") or die "link: $!\n" }' "$1/bin" "$long"
echo "$long"
EOS
LONG=$(as_user "$A" sh "$T/links.sh" "$H") || fail "cannot make the links"
note "path length $(printf %s "$LONG/p1" | wc -c)"

start_daemon "[record]
frequency = 199
drain_interval = 50ms
[segments]
rotate_age = 2s
keep_count = 3
[index]
db_max_size = 8M
[cache]
max_size = 512M"
sleep 2.5
st() { "$PERFMAPCTL" -s "$T/control.sock" --json status; }
st > "$T/st0.json"
bins0=$(jq .index.binaries "$T/st0.json")
# the heap without SQLite's page cache (bounded by [index] cache_size)
heap() { jq '.memory.heap_in_use - .memory.sqlite' "$1"; }
heap0=$(heap "$T/st0.json")
hwm0=$(daemon_hwm_kb)
start_pinger
t0=$(date +%s%N)
as_user "$A" sh -c "for i in \$(seq 1 2000); do '$LONG/p'\$i 0; done" >/dev/null
t1=$(date +%s%N)
st > "$T/st1.json"
note "2,000 execs in $(( (t1 - t0) / 1000000 )) ms; binaries $bins0 -> $(jq .index.binaries "$T/st1.json")"
# Rotations: every segment that referenced the links is closed and
# deleted (keep_count), the links are no longer live; their history is
# pruned and the file given back.
sleep 8
idx() { echo $(( $(stat -c %s "$T/state/index.db") + $(stat -c %s "$T/state/index.db-wal" 2>/dev/null || echo 0) )); }
for _ in $(seq 1 20); do
	[ "$(idx)" -le $((13 * 1048576)) ] && break
	sleep 0.5
done
hostile_judge
# what is given back is given back by the loop's next rotations and
# prunes: on a loaded machine they come later (up to 20 s more; a clean-
# clone CI run once measured 2.3 MB after 10, where 1.3 MB is usual)
for _ in $(seq 1 40); do
	st > "$T/st2.json"
	heap2=$(heap "$T/st2.json")
	[ $((heap2 - heap0)) -lt 2097152 ] && break
	sleep 0.5
done
bins2=$(jq .index.binaries "$T/st2.json")
hwm=$(daemon_hwm_kb)
# The WAL grows while a write (a prune, a rotation's rows) waits for its
# checkpoint, then is cut back: measured once it is (a clean-clone CI run
# measured 22 MB here, a commit caught between the two loops above; under
# ASan beside the other lane, 17.8 MB after 10 s: the prune and the
# checkpoint are the sanitized daemon's, 30 s there).
waits=20
sanitized && waits=60
for _ in $(seq 1 "$waits"); do
	db=$(idx)
	[ "$db" -le $((13 * 1048576)) ] && break
	sleep 0.5
done
note "binaries $bins0 -> $bins2; heap in use $heap0 -> $heap2; peak RSS $hwm0 -> $hwm kB"
note "index.db $db bytes; $(jq .index.pruned "$T/st2.json") rows of history pruned"
figure rss_growth_kb $((hwm - hwm0))
figure heap_growth_bytes $((heap2 - heap0))
figure index_db_bytes "$db"
[ "$bins2" -lt $((bins0 + 500)) ] || fail "the table of binaries kept $bins2 (was $bins0)"
# under the sanitizers the heap and RSS figures are theirs, not the daemon's
if ! sanitized; then
	[ $((heap2 - heap0)) -lt 2097152 ] || fail "heap in use grew by $((heap2 - heap0)) bytes"
	[ $((hwm - hwm0)) -lt 49152 ] || fail "peak RSS grew by $((hwm - hwm0)) kB"
fi
# pruned, and the pages freed given back (the file may have grown past the
# limit while retained segments referenced every link: keep_size bounds
# that); the WAL is cut back to 4 MiB at each checkpoint
[ "$db" -le $((13 * 1048576)) ] || fail "index.db and its WAL hold $db bytes, above db_max_size + 4M"
stop_daemon
echo "PASS: an exec storm through long paths is given back"
