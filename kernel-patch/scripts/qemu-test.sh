#!/bin/sh
# qemu-test.sh VERSION - boot a tinyconfig kernel with patches/VERSION/
# under qemu (plain emulation) and check, in the guest:
#   - the MMAP3 record end to end (test/mmap3-test.c);
#   - MMAP2 (attr.build_id) against MMAP3 build-ids on a cold page cache
#     (a fresh ext2 disk, page cache dropped; both counts printed);
#   - the real perfmapd (build/perfmapd) recording while test/spin.c runs, stopped with
#     SIGTERM: its log must say "build-id mode mmap3", and the segment,
#     brought back on a second disk, must read with the host's perf and
#     show spin's functions;
# then boot Debian's stock kernel of the series with the same initramfs and
# check that it refuses attr.mmap3 with EINVAL.
# Run through "make -C kernel-patch qemu-test [KERNEL=VERSION]".
. "$(dirname "$0")/common.sh"

start=$(date +%s)
elapsed() { echo "$(( $(date +%s) - start ))s"; }
fail() { echo "FAIL: qemu-test $KV: $*  ($(elapsed))"; exit 1; }

W=$BUILD/qemu-$KV
mkdir -p "$W"

deps qemu-test || fail "cannot install dependencies (scripts/deps.sh qemu-test)"
find_source || fail "no $KV source"
# The daemon the guest runs: the tree's build (BUILD here is ours, not make's).
PERFMAPD=$TOP/build/perfmapd
[ -x "$PERFMAPD" ] || make -C "$TOP" -s BUILD=build build/perfmapd >/dev/null ||
	fail "cannot build $PERFMAPD"

# --- 1. the patched kernel: tinyconfig + what the test and perfmapd need --
tree=$W/linux
CONFIGS="64BIT PERF_EVENTS PRINTK TTY SERIAL_8250 SERIAL_8250_CONSOLE BLK_DEV_INITRD
	BINFMT_ELF BINFMT_SCRIPT PROC_FS PROC_SYSCTL SYSFS DEVTMPFS TMPFS SHMEM
	MULTIUSER FUTEX EPOLL EVENTFD SIGNALFD TIMERFD INOTIFY_USER FILE_LOCKING
	POSIX_TIMERS HIGH_RES_TIMERS KALLSYMS RSEQ NET UNIX BLOCK PCI VIRTIO_MENU
	VIRTIO_PCI BLK_DEV VIRTIO_BLK EXT2_FS"
stamp="$(patches_sum) tinyconfig $(echo $CONFIGS)"
if [ -f "$tree/.perfmapd-stamp" ] && [ "$(cat "$tree/.perfmapd-stamp")" = "$stamp" ]; then
	log "reusing $tree (same series and configuration), incremental build"
else
	unpack_patched "$tree" || fail "series does not apply cleanly"
	(
		cd "$tree"
		make -s tinyconfig >/dev/null
		for c in $CONFIGS; do ./scripts/config -e "$c"; done
		make -s olddefconfig >/dev/null
	) || fail "configuring the kernel"
	echo "$stamp" > "$tree/.perfmapd-stamp"
fi
for opt in $CONFIGS; do
	grep -q "^CONFIG_$opt=y" "$tree/.config" || fail "CONFIG_$opt not set in $tree/.config"
done
log "building bzImage (tinyconfig + series, $JOBS jobs)"
t0=$(date +%s)
(cd "$tree" && make -s -j"$JOBS" bzImage) > "$W/kbuild.log" 2>&1 ||
	{ tail -30 "$W/kbuild.log"; fail "kernel build"; }
log "bzImage built in $(( $(date +%s) - t0 ))s"
patched_kernel=$tree/arch/x86/boot/bzImage

# --- 2. the stock kernel: Debian's linux-image of the series --------------
case $KV in
6.1)	meta=linux-image-amd64 ;;
*)	meta=linux-image-$KV-amd64 ;;
esac
stock=$W/stock
stock_kernel=$(ls "$stock"/boot/vmlinuz-"$KV".* 2>/dev/null | head -1 || true)
if [ -z "$stock_kernel" ]; then
	stock_pkg() {
		apt-cache depends "$meta" 2>/dev/null |
			sed -n "s/.*Depends: \(linux-image-$KV\.[^ ]*-amd64\)\$/\1/p" | head -1
	}
	pkg=$(stock_pkg)
	[ -n "$pkg" ] || { apt-get update -q >/dev/null 2>&1; pkg=$(stock_pkg); }
	[ -n "$pkg" ] || fail "cannot find Debian's stock kernel package ($meta)"
	log "downloading stock kernel $pkg"
	rm -rf "$stock" && mkdir -p "$stock/deb"
	(cd "$stock/deb" && apt-get download -q "$pkg" >/dev/null 2>&1) ||
		{ apt-get update -q >/dev/null 2>&1; (cd "$stock/deb" && apt-get download -q "$pkg" >/dev/null); } ||
		fail "apt-get download $pkg"
	dpkg-deb -x "$stock"/deb/*.deb "$stock" || fail "extracting $pkg"
	rm -rf "$stock/lib/modules" "$stock/usr/lib/modules" "$stock/deb"	# not used
	stock_kernel=$(ls "$stock"/boot/vmlinuz-"$KV".* | head -1)
fi
[ -f "$stock_kernel" ] || fail "no stock vmlinuz"

# --- 3. guest programs, the initramfs and the disks ---------------------
bid_of() { LC_ALL=C readelf -n "$1" 2>/dev/null | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p' | head -1; }
log "building the guest programs"
gcc -static -O2 -Wall -Werror -std=gnu11 -I"$TOP/common" -o "$W/mmap3-test" \
	"$HERE/test/mmap3-test.c" "$TOP/common/record.c" "$TOP/common/perf_abi.c" ||
	fail "compiling test/mmap3-test.c"
gcc -O1 -g -fno-omit-frame-pointer -Wall -Werror -Wl,--build-id=sha1 -o "$W/spin" \
	"$HERE/test/spin.c" || fail "compiling test/spin.c"
printf 'int perfmapd_target(int x) { return 3 * x + 1; }\n' > "$W/target.c"
gcc -shared -fPIC -O2 -Wl,--build-id=sha1 -o "$W/target.so" "$W/target.c" || fail "building target.so"
bid=$(bid_of "$W/target.so")
[ -n "$bid" ] || fail "target.so has no build-id"
printf '%s\n' "$bid" > "$W/expected-build-id"
printf 'not an ELF file: mapped executable, its MMAP3 must carry build_id_size 0\n' > "$W/data.txt"
log "target.so build-id (readelf -n): $bid"

# The initramfs: busybox, /init, the test programs, perfmapd and the shared
# libraries of perfmapd and spin (ldd), at their paths.
busybox=$(command -v busybox) || fail "no busybox (busybox-static)"
ldd "$busybox" >/dev/null 2>&1 && fail "$busybox is not static: install busybox-static"
list=$W/initramfs.list
{
	echo "dir /dev 0755 0 0"
	echo "nod /dev/console 0600 0 0 c 5 1"
	echo "nod /dev/null 0666 0 0 c 1 3"
	echo "dir /bin 0755 0 0"
	echo "file /bin/busybox $busybox 0755 0 0"
	echo "file /init $HERE/test/guest-init.sh 0755 0 0"
	echo "file /mmap3-test $W/mmap3-test 0755 0 0"
	echo "file /spin $W/spin 0755 0 0"
	echo "file /perfmapd $PERFMAPD 0755 0 0"
	echo "file /target.so $W/target.so 0755 0 0"
	echo "file /data.txt $W/data.txt 0755 0 0"
	echo "file /expected-build-id $W/expected-build-id 0644 0 0"
	libs=$( (ldd "$PERFMAPD"; ldd "$W/spin") |
		sed -n 's/.*=> \(\/[^ ]*\).*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p' | sort -u)
	for lib in $libs; do		# parents before children
		d=$(dirname "$lib")
		while [ "$d" != / ]; do echo "$d"; d=$(dirname "$d"); done
	done | sort -u | sed 's/.*/dir & 0755 0 0/'
	for lib in $libs; do echo "file $lib $(readlink -f "$lib") 0755 0 0"; done
} > "$list"
gcc -O2 -o "$W/gen_init_cpio" "$tree/usr/gen_init_cpio.c" || fail "building gen_init_cpio"
"$W/gen_init_cpio" "$list" > "$W/initramfs.cpio" || fail "gen_init_cpio"
log "initramfs: $(grep -c '^file' "$list") files, $(( $(stat -c %s "$W/initramfs.cpio") / 1048576 )) MB"

# The cold disk: ELF files to map without reading (distinct build-ids), and
# a dynamic program with its own loader and libc; build-ids from readelf.
cold=$W/cold
rm -rf "$cold" && mkdir -p "$cold/mmap" "$cold/bin" "$cold/lib"
for i in 1 2 3 4 5 6; do
	printf 'int cold_%d(int x) { return x + %d; }\n' $i $i > "$W/cold$i.c"
	gcc -shared -fPIC -O2 -Wl,--build-id=sha1 -o "$cold/mmap/lib$i.so" "$W/cold$i.c" ||
		fail "building cold lib$i.so"
done
gcc -O2 -Wl,--build-id=sha1 -o "$cold/bin/prog" "$HERE/test/prog.c" || fail "compiling test/prog.c"
cp "$(readlink -f /lib64/ld-linux-x86-64.so.2)" "$cold/lib/ld-linux-x86-64.so.2"
cp "$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)" "$cold/lib/libc.so.6"
(cd "$cold" && for f in mmap/* bin/prog lib/*; do
	b=$(bid_of "$f"); [ -n "$b" ] || exit 1; echo "/mnt/$f $b"; done) > "$W/build-ids" ||
	fail "a cold-disk file has no build-id"
cp "$W/build-ids" "$cold/build-ids"
rm -f "$W/cold.img"
mke2fs -q -F -t ext2 -d "$cold" "$W/cold.img" 32M || fail "mke2fs of the cold disk"
rm -f "$W/out.img" && truncate -s 256M "$W/out.img"

# --- 4. boot -------------------------------------------------------------
# boot NAME KERNEL APPEND [QEMU ARGS]: plain emulation (KVM is not reliable
# in these VMs); the serial log goes to $W/NAME.log; returns 0 when the
# guest printed its DONE line.
boot() {
	name=$1 kernel=$2 append=$3
	shift 3
	rm -f "$W/$name.log"
	t0=$(date +%s)
	timeout -k 5 600 qemu-system-x86_64 -accel tcg -m 1G -smp 1 \
		-kernel "$kernel" -initrd "$W/initramfs.cpio" \
		-append "console=ttyS0 rdinit=/init panic=-1 loglevel=4 $append" \
		-display none -monitor none -serial "file:$W/$name.log" -no-reboot "$@" \
		</dev/null >"$W/$name.qemu.log" 2>&1 || true
	if grep -q '^MMAP3-GUEST: DONE' "$W/$name.log" 2>/dev/null; then
		log "$name: booted and ran in $(( $(date +%s) - t0 ))s"
		return 0
	fi
	log "$name: no result after $(( $(date +%s) - t0 ))s"
	tail -30 "$W/$name.log" 2>/dev/null
	cat "$W/$name.qemu.log"
	return 1
}
show() { grep -E '^(MMAP3-TEST|MMAP3-GUEST):' "$1" | grep -v ': [a-z0-9_]*: record [0-9]' | sed 's/^/  guest: /'; }

status=0
case $KV in
6.1)	cold_want=report	# 6.1 reads the build-id from the page cache only
	stock_leak=report ;;	# stock 6.1 leaks MISC_MMAP_BUILD_ID (patch 0001)
*)	cold_want=all
	stock_leak=none ;;	# 6.12 builds each record's header per event
esac
log "booting the patched kernel"
if boot patched "$patched_kernel" "MMAP3_EXPECT=patched MMAP3_COLD=$cold_want" \
	-drive "file=$W/cold.img,format=raw,if=virtio,readonly=on" \
	-drive "file=$W/out.img,format=raw,if=virtio"; then
	show "$W/patched.log"
	grep -q '^MMAP3-GUEST: DONE PASS' "$W/patched.log" || status=1
else
	status=1
fi

# perfmapd's state, back on the host: the host's stock perf reads it.
pm=$W/perfmapd-state
rm -rf "$pm" && mkdir -p "$pm"
if [ $status = 0 ] && tar -xf "$W/out.img" -C "$pm" 2>/dev/null; then
	grep '^PERFMAPD-LOG:' "$W/patched.log" | sed 's/^/  guest: /'
	grep -q '^PERFMAPD-LOG: .*build-id mode mmap3' "$W/patched.log" ||
		{ echo "  perfmapd did not pick build-id mode mmap3"; status=1; }
	spin_bid=$(bid_of "$W/spin")
	nseg=0 nspin=0 nbid=0
	for seg in "$pm"/segments/perf-*.data; do
		[ -f "$seg" ] || continue
		nseg=$((nseg + 1))
		perf script -i "$seg" > "$W/script.out" 2>"$W/script.err" ||
			{ echo "  perf script -i $(basename "$seg") failed:"; tail -5 "$W/script.err"; status=1; }
		perf --buildid-dir "$pm/debug" report -i "$seg" --stdio --no-children \
			--sort comm,dso,sym > "$W/report.out" 2>"$W/report.err" ||
			{ echo "  perf report -i $(basename "$seg") failed:"; tail -5 "$W/report.err"; status=1; }
		n=$(grep -c 'mmap3_spin_inner' "$W/report.out" || true)
		[ "$n" -gt 0 ] && { nspin=$((nspin + 1)); grep 'mmap3_spin_' "$W/report.out" | head -3 | sed 's/^/  host perf report: /'; }
		perf buildid-list -i "$seg" 2>/dev/null | grep -q "^$spin_bid /spin\$" && nbid=$((nbid + 1))
	done
	log "perfmapd: $nseg segment(s); spin's functions in $nspin, spin's build-id $spin_bid in $nbid"
	[ $nseg -gt 0 ] && [ $nspin -gt 0 ] && [ $nbid -gt 0 ] ||
		{ echo "  perfmapd's segments do not show spin (see $pm)"; status=1; }
elif [ $status = 0 ]; then
	echo "  no perfmapd state on the output disk"; status=1
fi

log "booting the stock kernel $(basename "$stock_kernel")"
if boot stock "$stock_kernel" "MMAP3_EXPECT=stock MMAP3_LEAK=$stock_leak"; then
	show "$W/stock.log"
	grep -q '^MMAP3-GUEST: DONE PASS' "$W/stock.log" || status=1
else
	status=1
fi

if [ $status = 0 ]; then
	counts=$(sed -n 's/^MMAP3-TEST: cold: .* run: //p' "$W/patched.log")
	echo "PASS: qemu-test $KV: patched $(sed -n 's/^MMAP3-GUEST: kernel \([^,]*\),.*/\1/p' "$W/patched.log") emits MMAP3 with the build-id $bid; cold page cache: $counts; perfmapd recorded in mmap3 mode and the host's perf reads its segments; stock $(basename "$stock_kernel") refuses attr.mmap3 with EINVAL  ($(elapsed))"
else
	fail "see $W/patched.log and $W/stock.log"
fi
