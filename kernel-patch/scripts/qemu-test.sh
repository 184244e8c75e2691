#!/bin/sh
# qemu-test.sh - boot a tinyconfig 6.1 kernel with the series and check the
# MMAP3 record end to end; boot Debian's stock 6.1 kernel with the same
# initramfs and check that it refuses attr.mmap3.  Run through
# "make -C kernel-patch qemu-test".
. "$(dirname "$0")/common.sh"

start=$(date +%s)
elapsed() { echo "$(( $(date +%s) - start ))s"; }
fail() { echo "FAIL: qemu-test: $*  ($(elapsed))"; exit 1; }

ACCEL=${ACCEL:-auto}
W=$BUILD/qemu
mkdir -p "$W"

need_pkgs qemu-system-x86 make gcc libc6-dev bc flex bison libssl-dev libelf-dev \
	cpio xz-utils patch binutils || fail "cannot install dependencies"
find_source || fail "no 6.1 source"

# --- 1. the patched kernel: tinyconfig + what the test needs -------------
tree=$W/linux
CONFIGS="64BIT PERF_EVENTS PRINTK TTY SERIAL_8250 SERIAL_8250_CONSOLE BLK_DEV_INITRD
	BINFMT_ELF PROC_FS SYSFS DEVTMPFS"
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
for opt in 64BIT PERF_EVENTS SERIAL_8250_CONSOLE BLK_DEV_INITRD BINFMT_ELF; do
	grep -q "^CONFIG_$opt=y" "$tree/.config" || fail "CONFIG_$opt not set in $tree/.config"
done
log "building bzImage (tinyconfig + series, $JOBS jobs)"
t0=$(date +%s)
(cd "$tree" && make -s -j"$JOBS" bzImage) > "$W/kbuild.log" 2>&1 ||
	{ tail -30 "$W/kbuild.log"; fail "kernel build"; }
log "bzImage built in $(( $(date +%s) - t0 ))s"
patched_kernel=$tree/arch/x86/boot/bzImage

# --- 2. the stock kernel: Debian's linux-image-6.1 --------------------------
stock=$W/stock
stock_kernel=$(ls "$stock"/boot/vmlinuz-6.1* 2>/dev/null | head -1 || true)
if [ -z "$stock_kernel" ]; then
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/.*Depends: \(linux-image-6\.1[^ ]*-amd64\)$/\1/p' | head -1)
	[ -n "$pkg" ] || pkg=$(apt-cache search --names-only '^linux-image-6\.1\.[0-9]+-[0-9]+-amd64$' |
		awk '{print $1}' | sort -V | tail -1)
	[ -n "$pkg" ] || fail "cannot find Debian's stock linux-image-6.1 package"
	log "downloading stock kernel $pkg"
	rm -rf "$stock" && mkdir -p "$stock/deb"
	(cd "$stock/deb" && apt-get download -q "$pkg" >/dev/null 2>&1) ||
		{ apt-get update -q >/dev/null 2>&1; (cd "$stock/deb" && apt-get download -q "$pkg" >/dev/null); } ||
		fail "apt-get download $pkg"
	dpkg-deb -x "$stock"/deb/*.deb "$stock" || fail "extracting $pkg"
	stock_kernel=$(ls "$stock"/boot/vmlinuz-6.1* | head -1)
fi
[ -f "$stock_kernel" ] || fail "no stock vmlinuz"

# --- 3. the initramfs: /init = static test, an ELF to map, its build-id ----
log "building the static test program with common/record.c"
gcc -static -O2 -Wall -Werror -std=gnu11 -I"$TOP/common" -o "$W/mmap3-test" \
	"$HERE/test/mmap3-test.c" "$TOP/common/record.c" "$TOP/common/perf_abi.c" ||
	fail "compiling test/mmap3-test.c"
printf 'int perfmapd_target(int x) { return 3 * x + 1; }\n' > "$W/target.c"
gcc -shared -fPIC -O2 -Wl,--build-id=sha1 -o "$W/target.so" "$W/target.c" || fail "building target.so"
bid=$(readelf -n "$W/target.so" | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p')
[ -n "$bid" ] || fail "target.so has no build-id"
printf '%s\n' "$bid" > "$W/expected-build-id"
printf 'not an ELF file: mapped executable, its MMAP3 must carry build_id_size 0\n' > "$W/data.txt"
log "target.so build-id (readelf -n): $bid"
cat > "$W/initramfs.list" <<EOF
dir /dev 0755 0 0
nod /dev/console 0600 0 0 c 5 1
nod /dev/null 0666 0 0 c 1 3
file /init $W/mmap3-test 0755 0 0
file /target.so $W/target.so 0755 0 0
file /data.txt $W/data.txt 0755 0 0
file /expected-build-id $W/expected-build-id 0644 0 0
EOF
gcc -O2 -o "$W/gen_init_cpio" "$tree/usr/gen_init_cpio.c" || fail "building gen_init_cpio"
"$W/gen_init_cpio" "$W/initramfs.list" > "$W/initramfs.cpio" || fail "gen_init_cpio"

# --- 4. boot -------------------------------------------------------------
# boot NAME KERNEL EXPECT: boots, leaves the serial log in $W/NAME.log and
# returns 0 when the guest printed its RESULT line.
accel_used=
boot() {
	name=$1 kernel=$2 expect=$3
	log_file=$W/$name.log
	tries=
	case "$ACCEL" in
	kvm) tries=kvm ;;
	tcg) tries=tcg ;;
	*) if [ -w /dev/kvm ] && [ "$accel_used" != tcg ]; then tries="kvm tcg"; else tries=tcg; fi ;;
	esac
	for a in $tries; do
		if [ $a = kvm ]; then limit=20; else limit=300; fi
		rm -f "$log_file" "$W/$name.$a.log"
		t0=$(date +%s)
		timeout -k 5 $limit qemu-system-x86_64 -accel $a -m 512M -smp 1 \
			-kernel "$kernel" -initrd "$W/initramfs.cpio" \
			-append "console=ttyS0 rdinit=/init panic=-1 loglevel=4 MMAP3_EXPECT=$expect" \
			-display none -monitor none -serial "file:$W/$name.$a.log" -no-reboot \
			</dev/null >"$W/$name.$a.qemu.log" 2>&1 || true
		cp "$W/$name.$a.log" "$log_file" 2>/dev/null || true
		if grep -q '^MMAP3-TEST: RESULT' "$log_file" 2>/dev/null; then
			accel_used=$a
			log "$name: booted with $a in $(( $(date +%s) - t0 ))s"
			return 0
		fi
		log "$name: no result with $a after $(( $(date +%s) - t0 ))s$( [ $a = kvm ] && echo ', falling back to plain emulation')"
	done
	return 1
}

status=0
log "booting the patched kernel"
if boot patched "$patched_kernel" patched; then
	grep '^MMAP3-TEST:' "$W/patched.log" | sed 's/^/  guest: /'
	grep -q '^MMAP3-TEST: RESULT PASS' "$W/patched.log" || status=1
else
	tail -20 "$W/patched.log" 2>/dev/null; echo "  patched kernel: no result"; status=1
fi
log "booting the stock kernel $(basename "$stock_kernel")"
if boot stock "$stock_kernel" stock; then
	grep '^MMAP3-TEST:' "$W/stock.log" | sed 's/^/  guest: /'
	grep -q '^MMAP3-TEST: RESULT PASS' "$W/stock.log" || status=1
else
	tail -20 "$W/stock.log" 2>/dev/null; echo "  stock kernel: no result"; status=1
fi

if [ $status = 0 ]; then
	echo "PASS: qemu-test: patched 6.1 emits MMAP3 with the build-id $bid; stock $(basename "$stock_kernel") refuses attr.mmap3 with EINVAL  ($(elapsed))"
else
	fail "see $W/patched.log and $W/stock.log"
fi
