#!/bin/sh
# Adversarial: the pins (daemon/record/resolver.c, perfmapd(7)).  The
# loop keeps up to PINS (status pins_max: 128) root-owned files open
# (O_PATH) to prove their mappings without a read; a user tries to make it
# keep more, prove the wrong binary, keep a file of the user's, or keep a
# deleted file's blocks.
#   1. Churn: user A maps 2 x PINS root-owned ELF files (root's copies of
#      64 libraries of /usr/lib, on the root's file system, each copied as
#      often as it takes: a copy is a file of its own) PINS / 2 at a time,
#      the window moving every half second, ten processes a second, for
#      the rest of the first part: every pin is taken, and PINS / 2 pins at
#      least are replaced (status pins_dropped).  Root runs the cp-storm of
#      tests/provenance.sh in a directory of its own: an exec storm of v1
#      until the daemon holds v1 (before the churn starts, then on under
#      it), `cp v2` over the same inode, a storm of v2, a v2 that runs
#      0.3 s.  Judged: perf --buildid-dir STATE/debug
#      script shows no sample of a v2 process as pm_capv1_hot nor one of
#      v1 as pm_capv2_hot, and the long v2 as pm_capv2_hot; at every
#      status poll (5 a second) at most PINS pins, the daemon's O_PATH
#      files at most PINS + 3/4 PINS above their count at start (the
#      slack: the requests' files on their way to become pins, no more
#      than the pins have room for, and the dropped pins a worker has yet
#      to close: 6 at most here with 32 pins, under ASan too) and all its
#      files at most PINS + 3/2 PINS above (the answers' files the eager
#      capture keeps until the loop's turn too); twice the slack under the
#      sanitizers.
#   2. Root copies a binary into its directory and runs it until the
#      daemon pins it (an O_PATH file a second after the last run).  A pin
#      stands for its file under the name it was proven by: A, in a mount
#      namespace of A's own (unshare -Urm), bind-mounts the pinned binary
#      over /usr/bin/passwd and runs it from the host's namespace through
#      /proc/PID/root of a process there; the kernel names the mapping
#      /usr/bin/passwd (its path there), with the pinned file's device and
#      inode.  The host's history of /usr/bin/passwd must hold no build-id
#      but its own, and --all-namespaces must show A's sighting (before:
#      the pin proved the mapping as the host's, past the foreign-mount
#      check).  Root then
#      deletes the binary: within 3 s (6 under the sanitizers) the daemon holds no
#      "(deleted)" file of it, which would keep its blocks.  A copies a
#      binary into A's own directory on the same file system and runs it
#      40 times in 2 s: a second after, the daemon holds no file of it
#      (only root's files are pinned).  The churn is over by then: what lets
#      these two go is the check, not the churn's need of the room.
# Root's ping is answered within 100 ms throughout; no record is lost;
# status shows mappings proven by pins.  buildid_mode = userspace and
# kernel-blind v1 and v2: the daemon reads every build-id itself, which
# is when it pins.
. tests/lib.sh
. tests/hostile/lib.sh
hostile_start
need_perf

# The files to pin must be on the root's or /usr's file system, ext4 or
# XFS (resolver.c: pin_wanted, buildid_reader.c: local_fs).
PD=""
for base in "$T" /var/tmp; do
	case $(stat -f -c %T "$base") in ext2/ext3|xfs) ;; *) continue;; esac
	dev=$(stat -c %d "$base")
	[ "$dev" = "$(stat -c %d /)" ] || [ "$dev" = "$(stat -c %d /usr)" ] || continue
	if [ "$base" = "$T" ]; then
		PD=$T/pins
		mkdir "$PD"
	else
		PD=$(mktemp -d /var/tmp/perfmapd-pins.XXXXXX) || fail "mktemp in /var/tmp"
		at_exit "rm -rf '$PD'"
	fi
	break
done
[ -n "$PD" ] || skip "neither $T nor /var/tmp is on the root's or /usr's file system as ext4 or XFS: nothing can be pinned"
PW=/usr/bin/passwd
[ -x "$PW" ] || skip "no $PW to bind-mount a pinned binary over"
HOSTID=$(readelf_buildid "$PW")
[ -n "$HOSTID" ] || skip "$PW has no build-id"
as_user "$A" unshare -Urm sh -c "mount --bind /bin/true '$PW'" 2>/dev/null ||
	skip "this user cannot unshare -Urm and bind-mount"
chmod 0755 "$PD"
mkdir -m 0755 "$PD/lib" "$PD/bin"
mkdir -m 0755 "$PD/a" && chown "$A" "$PD/a"

build_hostile mapexec
build_versions
start_daemon "[record]
buildid_mode = userspace
frequency = 999
[cache]
capture = eager"
S=$T/control.sock
ctl() { "$PERFMAPCTL" -s "$S" "$@"; }
PINS=$(ctl --json status | jq '.buildid_reads.pins_max')
[ "$PINS" -ge 8 ] 2>/dev/null || fail "status gives no pins_max: '$PINS'"
WINDOW=$((PINS / 2))
# 64 libraries of /usr/lib with a build-id, copied by root into 2 x PINS
# files the test owns the churn of, in four windows.
n=0
for f in $(find /usr/lib -type f -name 'lib*.so*' -size -256k | sort); do
	[ $n -lt 64 ] || break
	[ -n "$(readelf_buildid "$f")" ] || continue
	echo "$f" >> "$PD/libs"
	n=$((n + 1))
done
[ $n = 64 ] || skip "only $n libraries with a build-id under /usr/lib to copy"
n=0
while [ $n -lt $((2 * PINS)) ]; do
	f=$(sed -n "$((n % 64 + 1))p" "$PD/libs")
	cp "$f" "$PD/lib/$n.so" || fail "cp $f"
	echo "$PD/lib/$n.so" >> "$PD/w$((n % 4))"
	n=$((n + 1))
done
chmod 0644 "$PD"/lib/* "$PD"/w*
sleep 1
fds() { ls "/proc/$DAEMON_PID/fd" | wc -l; }
# how many of the daemon's files /proc/PID/fd/N... are O_PATH (the bit of
# 010000000 in fdinfo's octal flags).  One grep and one find, not a
# process per file: the daemon holds 100 files and more, and a look that
# takes longer than a pin's 100 ms unused is a look at another state.
opath_count() {
	_l=
	for _f; do _l="$_l /proc/$DAEMON_PID/fdinfo/${_f##*/}"; done
	[ -n "$_l" ] || { echo 0; return; }
	grep -h '^flags:' $_l 2>/dev/null |
		awk '{ d = substr($2, length($2) - 7, 1); if (d % 2) n++ } END { print n + 0 }'
}
opath_fds() { opath_count /proc/$DAEMON_PID/fd/*; }
# the daemon's files that are PATH ("PATH (deleted)" included)
held() {
	find "/proc/$DAEMON_PID/fd" -mindepth 1 -maxdepth 1 -printf '%l\t%p\n' 2>/dev/null |
		awk -F '\t' -v f="$1" '$1 == f || $1 == f " (deleted)" { print $2 }'
}
# how many of them are O_PATH: pins (or a request's file about to be one);
# nothing when none
pinned() {
	_n=$(opath_count $(held "$1"))
	[ "$_n" = 0 ] || echo "$_n"
}
fd0=$(fds) opath0=$(opath_fds)
note "the daemon holds $fd0 files, $opath0 O_PATH, before the attack"

# The poll: pins, mappings proven by pins, pins dropped, files, O_PATH files.
poll() {
	while [ ! -e "$T/poll.stop" ]; do
		_p=$(ctl --json status | jq -r '.buildid_reads | "\(.pins) \(.pinned) \(.pins_dropped)"')
		echo "${_p:-- - -} $(fds) $(opath_fds)"
		sleep 0.2
	done
}
start_poll() {
	rm -f "$T/poll.stop"
	poll >> "$T/poll" &
	POLL=$!
	BG_PIDS="${BG_PIDS:-} $POLL"
}
stop_poll() { touch "$T/poll.stop"; wait "$POLL"; }

# 1. The cp-storm of tests/provenance.sh, in root's directory: v1 runs
# until the daemon holds it (300 runs at least).  Held 0.3 s after a run:
# a pin, not the file a request brought to be one (the loop lets that go
# when, by the request's turn, no pin was free).  Then the churn takes
# every other pin while v1 keeps running, and v2 is copied over the same
# inode while the daemon holds v1's.  (v1 is pinned first: under the
# churn the system's own binaries, which its shell runs, and its files
# keep every pin in use, and a new file waits for a spare one; 2,000 runs
# were not always enough.)
expect() { echo "$1 $2 $3 $4" >> "$T/expect"; }
P=$PD/bin/pm-cst
cp "$T/v1" "$P"; ino=$(stat -c %i "$P"); sleep 0.1
i=0
while :; do
	for _ in $(seq 1 25); do
		"$P" 0 & p=$!; wait $p; expect $p 1 storm-v1 0
	done
	i=$((i + 25))
	[ $i -ge 300 ] || continue
	sleep 0.3
	# Held now may be a request's file; held again 0.3 s after one more run is a pin.
	if [ -n "$(pinned "$P")" ]; then
		"$P" 0.05 & p=$!; wait $p; expect $p 1 storm-v1 0
		sleep 0.3
		[ -n "$(pinned "$P")" ] && break
		note "v1 held after $i runs, and let go 0.3 s after one more: a request's file, not a pin; on"
	fi
	[ $i -lt 2000 ] || fail "2,000 runs of v1 and the daemon never held it: the cp-storm proves nothing"
done
note "the storm of v1: $i runs; v1 held by the daemon"
# The churn, as A, until $PD/stop: WINDOW files at a time, 0.5 s each
cat > "$T/churn.sh" <<EOS
while [ ! -e "$PD/stop" ]; do
	for w in 0 1 2 3; do
		for i in 1 2 3 4 5; do
			"$T/mapexec" 0 \$(cat "$PD/w\$w")
			sleep 0.1
		done
	done
done
EOS
chmod 0644 "$T/churn.sh"
start_pinger
start_poll
as_user "$A" sh "$T/churn.sh" > "$T/churn.out" 2>&1 &
CHURN=$!
BG_PIDS="${BG_PIDS:-} $CHURN"
# v1 goes on in the background (a pin unused for 100 ms may be taken)
# until all pins are taken (the churn maps twice as many files) and a
# second more
( while [ ! -e "$T/v1.stop" ]; do "$P" 0 & p=$!; wait $p; expect $p 1 storm-v1 0; done ) &
V1=$!
BG_PIDS="${BG_PIDS:-} $V1"
for _ in $(seq 1 50); do
	[ "$(ctl --json status | jq '.buildid_reads.pins')" -ge "$PINS" ] && break
	sleep 0.1
done
sleep 1
touch "$T/v1.stop"
wait "$V1"
# A sanitized daemon (5-15 times slower) can take longer than a pin's
# 100 ms unused between two of v1's runs: then the cp below is not over a
# held pin, and this run tests the rest (make check judges it unsanitized).
if [ -n "$(pinned "$P")" ]; then
	note "v1 still held under the churn: v2 copied over it"
else
	sanitized || fail "v1, run all the time, was let go under the churn"
	note "v1 was let go under the churn (a sanitized daemon): v2 copied over no held pin"
fi
cp "$T/v2" "$P"
[ "$(stat -c %i "$P")" = "$ino" ] || fail "cp did not keep the inode"
i=0; while [ $i -lt 100 ]; do
	"$P" 0.005 & p=$!; wait $p; expect $p 2 storm-v2 0
	i=$((i + 1))
done
"$P" 0.3 & p=$!; wait $p; expect $p 2 v2-long 1
sleep 2
# The churn goes on until it has replaced WINDOW pins, its window, and 15
# polls have watched it (up to 20 s more): the system's own binaries,
# which the churn's shell runs, hold pins of their own (6-7 here) and
# leave it fewer to turn over.
# Counted as the judge below counts: between the first and the last poll.
polled_drops() { awk '$1 != "-" { if (n++ == 0) d0 = $3; d1 = $3 } END { print d1 - d0 }' "$T/poll"; }
for _ in $(seq 1 100); do
	[ "$(polled_drops)" -ge "$WINDOW" ] && [ "$(grep -vc '^-' "$T/poll")" -ge 15 ] && break
	sleep 0.2
done
touch "$PD/stop"
wait "$CHURN"
stop_poll
ctl --json status > "$T/st1.json" || fail "status"
note "after the churn: $(jq -c '.buildid_reads' "$T/st1.json")"

# The polls: never more than PINS pins, the files held within their
# bounds; every pin taken, and pins replaced: the churn's window at least
# (else the churn tested nothing).
slack=$((PINS * 3 / 2)) oslack=$((PINS * 3 / 4))
sanitized && slack=$((slack * 2)) oslack=$((oslack * 2))
awk -v fd0="$fd0" -v op0="$opath0" -v s="$slack" -v os="$oslack" -v pins="$PINS" '
	function over(what) { if (said++ < 5) print what; o = 1 }
	$1 == "-" { next }
	n++ == 0 { d0 = $3 }
	{ d1 = $3; o = 0 }
	$1 > pins { over("PINS: " $1 " pins held") }
	$4 > fd0 + pins + s { over("FILES: " $4 " files open, " fd0 " at start") }
	$5 > op0 + pins + os { over("FILES: " $5 " O_PATH files open, " op0 " at start") }
	{ bad += o }
	$1 > maxp { maxp = $1 } $4 > maxf { maxf = $4 } $5 > maxo { maxo = $5 }
	END { print "polls " n " pins_max " maxp " files_max " maxf " opath_max " maxo \
	    " dropped " d1 - d0 " over " bad + 0 }
' "$T/poll" > "$T/poll.judged"
cat "$T/poll.judged"
last=$(tail -n 1 "$T/poll.judged")
figure polls "$last"
set -- $last
[ "$2" -ge 10 ] || fail "only $2 status polls during the churn"
[ "${12}" = 0 ] || fail "${12} polls over the bounds ($PINS pins; files: a slack of $slack, O_PATH $oslack)"
[ "$4" = "$PINS" ] || fail "the churn never took all $PINS pins (at most $4)"
[ "${10}" -ge "$WINDOW" ] || fail "the churn replaced ${10} pins, fewer than its window of $WINDOW files"

# 2. Root's binary, held, then deleted: let go within 3 s (6 s under the
# sanitizers).  Held a second after its last run: a pin, not a read's file.
D=$PD/bin/pm-del
cp "$T/spin" "$D"
for _ in $(seq 1 20); do
	for _ in 1 2 3 4 5; do "$D" 0; done
	sleep 0.2
	[ -n "$(pinned "$D")" ] && break
done
sleep 1
[ -n "$(pinned "$D")" ] || fail "root's binary $D was never held by the daemon: the check proves nothing"
# A's bind mount of the pinned binary over $PW, in A's namespace, run
# from the host's through /proc/PID/root of a process there
DID=$(readelf_buildid "$D")
setpriv --reuid="$A" --regid="$(id -g "$A")" --init-groups -- \
	unshare -Urm sh -c "mount --bind '$D' '$PW' && exec sleep 30" &
NSP=$!
BG_PIDS="${BG_PIDS:-} $NSP"
for _ in $(seq 1 50); do
	[ "$(stat -L -c %i "/proc/$NSP/root$PW" 2>/dev/null)" = "$(stat -c %i "$D")" ] && break
	sleep 0.1
done
[ "$(stat -L -c %i "/proc/$NSP/root$PW" 2>/dev/null)" = "$(stat -c %i "$D")" ] ||
	fail "A's namespace does not show $D as $PW"
for _ in 1 2 3; do
	as_user "$A" "/proc/$NSP/root$PW" 0.2 || fail "A's run of root's pinned $D as $PW"
done
kill "$NSP"; wait "$NSP" 2>/dev/null
[ -n "$(pinned "$D")" ] || fail "root's binary $D was let go during A's runs: the check proves nothing"
rm -f "$D"
t0=$(date +%s%N)
bound=3000; sanitized && bound=6000
while [ -n "$(held "$D")" ] && [ $(( ($(date +%s%N) - t0) / 1000000 )) -lt $bound ]; do
	sleep 0.1
done
gone=$(( ($(date +%s%N) - t0) / 1000000 ))
note "the deleted binary was let go after $gone ms"
figure deleted_let_go_ms "$gone"
[ -z "$(held "$D")" ] ||
	fail "$bound ms after its deletion the daemon still holds $(for f in $(held "$D"); do echo "$f -> $(readlink "$f")"; done)"

# A's binary, in A's directory on the same file system: never held once
# the reads of its runs are done (looked at from 1 s to 2 s after them; a
# pin lives 10 s unused).
M=$PD/a/mine
as_user "$A" cp "$T/spin" "$M" || fail "A cannot copy spin"
as_user "$A" sh -c "for i in \$(seq 1 8); do for j in 1 2 3 4 5; do '$M' 0; done; sleep 0.2; done" ||
	fail "A's runs"
sleep 1
for _ in $(seq 1 10); do
	[ -z "$(held "$M")" ] || fail "the daemon holds A's binary $M (owner $(stat -c %U "$M"))"
	sleep 0.1
done

hostile_judge
ctl --json status > "$T/st.json" || fail "status"
stop_daemon

proven=$(jq '.buildid_reads.pinned' "$T/st.json")
[ "$proven" -gt 0 ] || fail "no mapping was proven by a pin: nothing was tested"

# A's runs of the pinned binary as $PW: in A's namespace, not the host's
Q() { "$PERFMAPCTL" --state-dir "$T/state" --json history "$PW" "$@"; }
if Q > "$T/pw.json" 2> "$T/pw.err"; then
	jq -e --arg h "$HOSTID" '[.objects[].build_id] | all(. == $h)' "$T/pw.json" > /dev/null ||
		fail "the host's history of $PW holds root's pinned binary that A mapped over it in A's namespace: $(jq -c '[.objects[] | [.build_id, .mnt_ns]]' "$T/pw.json")"
else	# the host never ran it here: not in the index as the host's
	grep -q NotFound "$T/pw.err" || fail "history $PW: $(cat "$T/pw.err")"
fi
Q --all-namespaces > "$T/pwa.json" || fail "history $PW --all-namespaces"
note "$PW in all namespaces: $(jq -c '[.objects[] | [.build_id[0:8], .mnt_ns]]' "$T/pwa.json")"
jq -e --arg d "$DID" '[.objects[] | select(.build_id == $d)] | length >= 1' "$T/pwa.json" > /dev/null ||
	fail "--all-namespaces does not show A's runs of $D as $PW: the check proves nothing"

# The judge: perf script over every segment, one "PID SYMBOL" line per
# sample (the sampled frame only).
: > "$T/script"
for seg in $(segments); do
	pid_symbols "$seg" "$T/script"
done
bad=0
for v in 1 2; do
	o=$((3 - v))
	awk -v v=$v '$2 == v { print $1 }' "$T/expect" > "$T/pids$v"
	# the samples of v's processes
	awk 'NR == FNR { p[$1] = 1; next } $1 in p' "$T/pids$v" "$T/script" > "$T/samples$v"
	right=$(grep -c " pm_capv${v}_hot$" "$T/samples$v")
	wrong=$(grep -c " pm_capv${o}_hot$" "$T/samples$v")
	note "the $(wc -l < "$T/pids$v") processes of v$v: $(wc -l < "$T/samples$v") samples, $right as v$v, $wrong as v$o"
	if [ "$wrong" != 0 ]; then
		echo "WRONG: $wrong samples of v$v's processes shown as pm_capv${o}_hot:"
		grep " pm_capv${o}_hot$" "$T/samples$v" | sort | uniq -c | head -5
		bad=$((bad + 1))
	fi
done
# the v2 that ran 0.3 s was resolved
p=$(awk '$3 == "v2-long" { print $1 }' "$T/expect")
[ "$(grep -c "^$p pm_capv2_hot$" "$T/samples2")" -gt 0 ] ||
	{ echo "UNRESOLVED: v2 ran 0.3 s (pid $p), perf does not show pm_capv2_hot"; bad=$((bad + 1)); }
[ "$bad" = 0 ] || fail "$bad wrong or missing answers under the churn"
echo "PASS: under pin churn no wrong binary, at most $PINS pins, a pin not taken for another name in A's namespace, a deleted file let go in $gone ms, no file of A's held; $proven mappings proven by pins"
