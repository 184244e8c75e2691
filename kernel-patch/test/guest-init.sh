#!/bin/busybox sh
# guest-init.sh - /init of the qemu-test initramfs, run by busybox sh.
#
# Kernel command line (the kernel hands unknown KEY=VALUE to init):
#   MMAP3_EXPECT=patched|stock   which kernel this is (mmap3-test checks)
#   MMAP3_COLD=all|report        cold page cache: all MMAP3 records must
#                                carry a build-id, or only report counts
#   MMAP3_LEAK=none|report       stock kernel: no MISC_MMAP_BUILD_ID leak
#                                allowed, or only report it (mmap3-test)
# A patched kernel also gets two disks: /dev/vda, an ext2 image with the
# cold-cache files (read-only), and /dev/vdb, where the perfmapd run's
# state directory is written as a tar archive for the host.
#
# Prints MMAP3-TEST: lines (mmap3-test), PERFMAPD-LOG: lines (the daemon's
# log) and last "MMAP3-GUEST: DONE PASS|FAIL", then reboots (qemu
# -no-reboot exits).

export PATH=/bin
/bin/busybox mkdir -p /proc /sys /dev /tmp /mnt /state
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp

fail=0
say() { echo "MMAP3-GUEST: $*"; }
bad() { say "FAIL $*"; fail=1; }
say "kernel $(uname -r), expecting a ${MMAP3_EXPECT:-patched} kernel"

/mmap3-test || fail=1

# The value of mmap3: MMAP2 (attr.build_id) against MMAP3 on a cold page
# cache, on a freshly mounted disk.
cold_test() {
	mount -t ext2 -o ro /dev/vda /mnt || { bad "cannot mount /dev/vda"; return; }
	sync
	echo 3 > /proc/sys/vm/drop_caches || bad "cannot drop the page cache"
	/mmap3-test cold /mnt || fail=1
	umount /mnt
}

# perfmapd recording on this kernel while /spin runs, stopped with SIGTERM;
# its state directory goes to /dev/vdb for the host's perf.
perfmapd_test() {
	printf '[record]\nevent = cpu-clock\nfrequency = 99\n' > /tmp/perfmapd.conf
	/perfmapd -f -c /tmp/perfmapd.conf --state-dir /state \
		--socket /state/control.sock > /tmp/perfmapd.log 2>&1 &
	pid=$!
	n=0
	until grep -q "recording into" /tmp/perfmapd.log; do
		n=$((n + 1))
		if [ $n -gt 240 ] || ! kill -0 $pid 2>/dev/null; then
			sed 's/^/PERFMAPD-LOG: /' /tmp/perfmapd.log
			bad "perfmapd did not start"
			kill -KILL $pid 2>/dev/null
			return
		fi
		sleep 0.5
	done
	/spin 3 || bad "spin failed"
	kill -TERM $pid
	wait $pid
	rc=$?
	sed 's/^/PERFMAPD-LOG: /' /tmp/perfmapd.log
	[ $rc = 0 ] || bad "perfmapd exited with $rc"
	say "perfmapd exited with $rc; segments: $(ls /state/segments | tr '\n' ' ')"
	tar -cf /dev/vdb -C /state segments debug || bad "cannot write the state to /dev/vdb"
	sync
}

if [ "${MMAP3_EXPECT:-patched}" = patched ]; then
	cold_test
	perfmapd_test
fi

if [ $fail = 0 ]; then say "DONE PASS"; else say "DONE FAIL"; fi
sync
reboot -f
