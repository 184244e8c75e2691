#!/bin/sh
# The kernel series booted: each supported kernel (kernel-patch/, 6.1 and
# 6.12) built with the series, booted in qemu (software emulation, about
# 5 minutes each), perfmapd recording in mmap3 mode on it, the MMAP3 and
# the non-resident comparison printed.  CI builds both series (make -C
# kernel-patch check) but boots none: the boots are here, to keep CI short.
cd "$(dirname "$0")/../.." || exit 1
command -v qemu-system-x86_64 >/dev/null 2>&1 || make -C kernel-patch deps || exit 1
nice -n 10 make -C kernel-patch qemu-test
