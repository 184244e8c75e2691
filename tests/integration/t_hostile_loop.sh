#!/bin/sh
# Adversarial: a user's FUSE server behind a loop device.  On a desktop
# udisks sets up a loop device for a user in an active session on a file
# the user passes as a descriptor (LoopSetup), wherever it lives - on the
# user's own FUSE mount too - and mounts the file system in it (ext4 at
# /media/USER/X).  A binary run from there is a file of a block device,
# yet every read of it the page cache misses is a read of the user's FUSE
# file, by the loop device's kernel threads.  The server answers the
# mount and the build-id read and never the copy.  The capture worker
# reads with no deadline: stuck there it would capture nothing more for
# anyone, and store would queue behind it (before: so it did).  The
# daemon must leave a file on such a device alone (reported: "through
# loop device loopN on FILE"), go on capturing other binaries, and answer
# store and ping.
# Part 0: where no FUSE connection exists at all, a binary on a loop
# device over root's file is copied (snaps on a server).
# Part 2: the same through a partition of the loop device (loopNp1, of
# the blkext major): udisks asks for the loop device's partitions to be
# scanned.  (A device-mapper device over it, as udisks unlocks LUKS on
# one, is judged by the same walk down slaves/; the kernels of this CI
# have no device-mapper.)
# Part 3: btrfs on the loop device, whose superblock's device has no
# major: the mount's source names the loop device; run on the host, and
# in a user and mount namespace of the user's (the mount a copy the
# daemon's table does not have: judged by the line of the process's own
# mountinfo, whose device is the superblock's).
#
# What udisks does is done here by hand: root builds an ext4 image
# holding the big program (mkfs.ext4 -d, no mount), user A serves it from
# a FUSE mount of theirs (tests/progs/stallfs.c, mark=: no read of the
# block of a mark in the program's ninth MiB is answered, whoever asks), passes
# the image's descriptor to root (tests/hostile/loopsetup.py), root binds
# a loop device to it and mounts it read-only, and A runs the program
# from there.  The mount allows others: since Linux 6.17 or so the loop
# driver asks the server for the file's size as the caller of
# LOOP_SET_FD (udisks: root), which a user's mount without allow_other
# refuses (a loop device of no size); before, it took the size the
# kernel held.
. tests/lib.sh
. tests/hostile/lib.sh
hostile_start
need_perf
for c in mkfs.ext4 losetup; do
	command -v $c >/dev/null 2>&1 || skip "$c is not installed (e2fsprogs, mount)"
done
[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3 (the descriptor passing)"
[ -c /dev/loop-control ] && losetup -f >/dev/null 2>&1 || skip "no free loop device here"
stallfs_setup
cc -O0 -g -Wl,--build-id -DVERSION=2 $(unique_buildid) -o "$T/plain" tests/progs/capver.c ||
	fail "cannot build capver"
PID_=$(readelf_buildid "$T/plain")
uid=$(id -u "$A")
cp tests/hostile/loopsetup.py "$T/loopsetup.py" && chmod 0755 "$T/loopsetup.py"

# Every exit: A's programs first, the connections aborted before anything
# is waited for (a thread stuck in one, the loop device's or the daemon's,
# would hold up the rest), then the mounts and the devices.
stop_user_progs() { pkill -9 -u "$A" -f 'media\.[0-9]*/prog' 2>/dev/null; }
loop_down() {
	stop_user_progs
	for _fs in "$H"/fs*; do
		[ -e "$_fs.pid" ] && fuse_abort "$_fs" "$(cat "$_fs.pid")"
	done
	for _m in "$T"/media*; do
		mountpoint -q "$_m" 2>/dev/null || continue
		umount "$_m" 2>/dev/null || umount -l "$_m"
	done
	# a device still held (by a daemon not yet gone) is cleared at its last close
	for _l in "$T"/loopdev*; do
		[ -s "$_l" ] && losetup -d "$(cat "$_l")" 2>/dev/null
		rm -f "$_l"
	done
}
trap 'TEST_RC=$?; loop_down; hostile_cleanup' EXIT

# make_image N FSTYPE [OFFSET]: $T/img.N, an image of FSTYPE (ext4 or
# btrfs) holding the big program (a build-id of its own: FID) as prog, at
# byte OFFSET of the image (a partition's start).  The program is padded
# with bytes that are not 0 (mkfs.ext4 -d leaves blocks of zeros out,
# holes are read from no device), and its ninth MiB begins with MARK:
# the server answers no read of that block (stallfs mark=), which a run
# of the program never reads (btrfs reads ahead 4 MiB at most) and a
# copy of it does.
make_image() {
	cc -O0 -g -Wl,--build-id $(unique_buildid) -o "$T/v.$1" tests/progs/capver.c ||
		fail "cannot build capver"
	FID=$(readelf_buildid "$T/v.$1")
	MARK=pm-loop-mark-$$-$1-$(od -An -tx8 -N8 /dev/urandom | tr -d ' ')
	mkdir "$T/imgdir.$1" &&
		{ cat "$T/v.$1"; head -c 8388608 /dev/zero | tr '\0' '\377'; printf %s "$MARK"
		  head -c 1048576 /dev/zero | tr '\0' '\377'; } > "$T/imgdir.$1/prog" &&
		chmod 0755 "$T/imgdir.$1/prog" || fail "the image's directory"
	case $2 in
	ext4)	mkfs.ext4 -q -F -b 4096 -O ^has_journal -d "$T/imgdir.$1" "$T/fs.$1" 16M \
			> "$T/mkfs.log" 2>&1 ||
			skip "mkfs.ext4 -d cannot build the image: $(cat "$T/mkfs.log")";;
	btrfs)	truncate -s 128M "$T/fs.$1" &&
		mkfs.btrfs -q -f --rootdir "$T/imgdir.$1" "$T/fs.$1" > "$T/mkfs.log" 2>&1 ||
			skip "mkfs.btrfs --rootdir cannot build the image: $(cat "$T/mkfs.log")";;
	esac
	[ "$(grep -c "$MARK" "$T/fs.$1")" = 1 ] || fail "the mark is not in the $2 image once"
	_off=${3:-0}
	{ head -c "$_off" /dev/zero; cat "$T/fs.$1"; } > "$T/img.$1" && rm -f "$T/fs.$1" ||
		fail "the image"
	# A 16 MiB ext4 has 128-byte inodes: whole-second timestamps, and a
	# file written and run within one second is unknown (perfmapd(7)).
	sleep 1.1
}

# serve_image N: A serves $T/img.N on $H/fs.N (its user_id A's), answering no read of MARK's block.
serve_image() {
	mkdir "$H/fs.$1" && chown "$A" "$H/fs.$1"
	setpriv --ruid="$A" -- "$T/stallfs" "$T/img.$1" "$H/fs.$1" /dev/null "mark=$MARK" \
		> "$T/fs.$1.log" 2>&1 &
	echo $! > "$H/fs.$1.pid"
	for _ in $(seq 1 50); do as_user "$A" test -r "$H/fs.$1/img" && break; sleep 0.1; done
	as_user "$A" test -r "$H/fs.$1/img" ||
		{ cat "$T/fs.$1.log"; fail "the FUSE file system did not come up"; }
	awk -v m="$H/fs.$1" '$5 == m' /proc/self/mountinfo | grep -q "user_id=$uid[,]" ||
		fail "the mount is not the user's: $(awk -v m="$H/fs.$1" '$5 == m' /proc/self/mountinfo)"
}

# loop_image N [partscan]: udisks' LoopSetup of $H/fs.N/img, the
# descriptor A's, the loop device root's: LOOPDEV.
loop_image() {
	/usr/bin/python3 "$T/loopsetup.py" serve "$T/loop.sock" "$T/loopdev.$1" ${2:-} \
		2> "$T/loopsetup.err" &
	_ls=$!
	for _ in $(seq 1 50); do [ -S "$T/loop.sock" ] && break; sleep 0.1; done
	as_user "$A" /usr/bin/python3 "$T/loopsetup.py" send "$T/loop.sock" "$H/fs.$1/img" ||
		{ kill $_ls; fail "the user's descriptor did not go over: $(cat "$T/loopsetup.err")"; }
	wait $_ls || fail "no loop device was set up: $(cat "$T/loopsetup.err")"
	rm -f "$T/loop.sock"
	LOOPDEV=$(cat "$T/loopdev.$1")
	grep -qx "$H/fs.$1/img" "/sys/block/${LOOPDEV#/dev/}/loop/backing_file" ||
		fail "$LOOPDEV is not on the user's file"
}

fresh_daemon() {
	rm -rf "$T/state"
	start_daemon "[record]
frequency = 499
drain_interval = 100ms"
	start_pinger
}

# run_judged DEV FSTYPE WHAT [userns]: DEV mounted read-only on
# $T/media.N (udisks' /media/A/X), A's program run from it (sleeping until
# stop_user_progs: its mapping is judged while it lives; with userns, in a
# user and mount namespace of A's, where the mount is a copy the daemon's
# table does not have), the capture judged.
run_judged() {
	mkdir "$T/media.$N"
	mount -t "$2" -o ro,nosuid,nodev "$1" "$T/media.$N" || fail "cannot mount $1 ($2)"
	note "$2 on $1 ($LOOPDEV on $H/fs.$N/img) mounted on $T/media.$N${4:+, run in a user namespace}"
	fresh_daemon
	if [ -n "${4:-}" ]; then
		as_user "$A" unshare -Urm sh -c "exec '$T/media.$N/prog' -s 120000" &
	else
		as_user "$A" "$T/media.$N/prog" -s 120000 &
	fi
	BG_PIDS="${BG_PIDS:-} $!"
	sleep 1
	capture_goes_on "$3"
	refused_for "through loop device ${LOOPDEV#/dev/} on $H/fs.$N/img" "names the loop device"
	loop_down
	stop_daemon
}

# --- 0. a loop device over root's file, no FUSE anywhere --------------------------
# Where no user may serve a FUSE file system, a binary on a loop device
# is copied (snaps on a server): the rule refuses only what it must.
N=0
if [ "$(stat -f -c %T /sys/fs/fuse/connections 2>/dev/null)" != fusectl ]; then
	note "part 0 not run: fusectl is not mounted on /sys/fs/fuse/connections (the daemon then trusts no loop device)"
elif [ -n "$(ls /sys/fs/fuse/connections)" ]; then
	note "part 0 not run: this host has FUSE connections ($(ls /sys/fs/fuse/connections | tr '\n' ' '))"
else
	make_image $N ext4
	LOOPDEV=$(losetup -f --show -r "$T/img.$N") || fail "losetup on root's image"
	echo "$LOOPDEV" > "$T/loopdev.$N"
	mkdir "$T/media.$N"
	mount -t ext4 -o ro "$LOOPDEV" "$T/media.$N" || fail "cannot mount $LOOPDEV"
	fresh_daemon
	"$T/media.$N/prog" 0.3 || fail "root's program on the loop device failed"
	_c=""
	in_cache "$FID" && _c=1
	grep -h "$FID" "$T/daemon.log" | grep -q "through loop device" &&
		fail "root's binary on a loop device over root's file was refused with no FUSE on the host: $(grep -h "$FID" "$T/daemon.log")"
	[ -n "$_c" ] || fail "root's binary on a loop device over root's file, no FUSE on the host, was not copied"
	loop_down
	stop_pinger
	stop_daemon
fi

# --- 1. ext4 on the loop device -------------------------------------------------
N=1
make_image $N ext4
serve_image $N
loop_image $N
run_judged "$LOOPDEV" ext4 "the user's program on a loop device over their FUSE file"

# --- 2. ext4 on a partition of the loop device -----------------------------------
# The partition added as the kernel's scan of a table would (BLKPG: this
# CI's kernels read no partition table), from 1 MiB, 16 MiB long.
command -v addpart >/dev/null 2>&1 || fail "addpart is not installed (util-linux, tests/deps.sh)"
N=2
make_image $N ext4 1048576
serve_image $N
loop_image $N partscan
addpart "$LOOPDEV" 1 2048 32768 || fail "cannot add a partition to $LOOPDEV"
for _ in $(seq 1 30); do [ -b "${LOOPDEV}p1" ] && break; sleep 0.1; done
[ -b "${LOOPDEV}p1" ] || fail "no partition ${LOOPDEV}p1"
run_judged "${LOOPDEV}p1" ext4 "the user's program on a partition of a loop device over their FUSE file"

# --- 3. btrfs on the loop device ----------------------------------------------
# A btrfs superblock has a device of no major (0:N, in mountinfo and in
# statx): what is beneath it is found by its mountinfo source.
command -v mkfs.btrfs >/dev/null 2>&1 || fail "mkfs.btrfs is not installed (btrfs-progs, tests/deps.sh)"
grep -qw btrfs /proc/filesystems || modprobe btrfs 2>/dev/null
grep -qw btrfs /proc/filesystems || skip "this kernel has no btrfs (parts 0-2 passed)"
N=3
make_image $N btrfs
serve_image $N
loop_image $N
run_judged "$LOOPDEV" btrfs "the user's program on btrfs on a loop device over their FUSE file"
# the same run from a namespace of the user's: the mount is a copy the
# daemon's table does not have, and a btrfs file's device is its
# subvolume's, not the superblock's the mount shows
N=4
make_image $N btrfs
serve_image $N
loop_image $N
run_judged "$LOOPDEV" btrfs "the user's program on btrfs on a loop device over their FUSE file, in a namespace of theirs" userns
echo "PASS: a user's FUSE server behind a loop device (ext4 on it, on a partition of it, btrfs on it) holds up no capture, store or ping; a loop device over root's file with no FUSE about is copied"
