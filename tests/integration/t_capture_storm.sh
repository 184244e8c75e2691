#!/bin/sh
# 500 short-lived processes of 500 distinct, freshly built binaries, each
# deleted the moment it exits: eager capture through /proc/PID/map_files
# must catch at least 99% of them, with no ring record lost, with the
# daemon's default configuration (drain_interval = 1s: the mappings come
# through the side-band rings, which wake it for every record).
# Each process lives STORM_MS (default 100 ms).
. tests/lib.sh
need_events
command -v jq >/dev/null 2>&1 || skip "jq is not installed"
N=${STORM_N:-500}
MS=${STORM_MS:-100}
PAR=${STORM_PAR:-10}

mkdir "$T/bin" "$T/run"
t0=$(date +%s)
# One build, then N copies that differ in their build-id only: a marker
# id written by the linker, replaced in each copy (compiling each took
# most of the test's time on a machine with a slow fork).
MARK=5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed
cc -O0 -Wl,--build-id=0x$MARK -o "$T/proto" tests/progs/capver.c ||
	fail "cannot build the storm binary"
RUNID=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
perl -e '
	my ($proto, $dir, $n, $mark, $run) = @ARGV;
	open(my $f, "<:raw", $proto) or die "$proto: $!";
	local $/; my $img = <$f>; close($f);
	my $m = pack("H*", $mark);
	my $at = index($img, $m);
	die "no marker\n" if $at < 0 || index($img, $m, $at + 1) >= 0;
	for my $i (1 .. $n) {
		my $c = $img;
		substr($c, $at, 20) = pack("H*", $run) . pack("N", $i);
		open(my $o, ">:raw", "$dir/pm-storm-$i") or die "$dir/pm-storm-$i: $!";
		print $o $c; close($o) or die; chmod(0755, "$dir/pm-storm-$i");
	}' "$T/proto" "$T/bin" "$N" "$MARK" "$RUNID" || fail "cannot make the storm binaries"
buildids "$T"/bin/pm-storm-* | cut -d' ' -f2 | sort -u > "$T/ids"
[ "$(wc -l < "$T/ids")" = "$N" ] || fail "the $N binaries do not have $N distinct build-ids"
note "built $N binaries in $(( $(date +%s) - t0 ))s"

start_daemon "[cache]
max_size = 0"
S=$T/control.sock

# Run each from its own path, delete it as soon as it exits.
t0=$(date +%s)
seq 1 "$N" | xargs -P "$PAR" -I{} sh -c \
	'mv "$1/bin/pm-storm-$2" "$1/run/pm-storm-$2" && "$1/run/pm-storm-$2" -s "$3"; rm -f "$1/run/pm-storm-$2"' \
	sh "$T" {} "$MS"
note "ran $N processes (${MS} ms each, $PAR at a time) in $(( $(date +%s) - t0 ))s"
[ -z "$(ls "$T/run")" ] || fail "some binaries were not deleted"
# the copies in the cache, as $T/copies (the shell's own string work: a
# process per binary was seconds of the test on a host whose fork is slow)
count() {
	got=0
	: > "$T/copies"
	while read -r id; do
		l=$T/state/debug/.build-id/${id%"${id#??}"}/${id#??}
		[ -f "$l/elf" ] && got=$((got + 1)) && echo "$l/elf" >> "$T/copies"
	done < "$T/ids"
}
# The copies may lag the processes (the fds are pinned early): wait for them.
prev=-1
for _ in $(seq 1 30); do
	count
	[ "$got" = "$N" ] || [ "$got" = "$prev" ] && break
	prev=$got
	sleep 1
done
# each copy's build-id is the one its place in the cache names
good=0
[ "$got" = 0 ] || good=$(buildids $(cat "$T/copies") |
	awk '{ n = split($1, p, "/"); if (p[n - 2] p[n - 1] == $2) g++ } END { print g + 0 }')
bad=$((got - good))
[ "$bad" = 0 ] || fail "$bad cached copies do not carry their build-id"
"$PERFMAPCTL" -s "$S" --json status > "$T/st.json" || fail "status"
lost=$(jq '.counters.lost' "$T/st.json")
stop_daemon
grep 'capture:' "$T/daemon.log" | tail -1
pct=$(awk -v g="$got" -v n="$N" 'BEGIN { printf "%.1f", 100 * g / n }')
echo "captured $got of $N deleted short-lived binaries ($pct%), $lost records lost"
[ "$lost" = 0 ] || fail "$lost ring records lost"
[ $((got * 100)) -ge $((N * 99)) ] || fail "only $pct% captured (need 99%)"
echo "PASS: $pct% captured, no record lost"
