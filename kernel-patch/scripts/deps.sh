#!/bin/sh
# deps.sh [check|qemu-test]... - install the Debian packages that
# "make -C kernel-patch check" and "qemu-test" need, if missing (those of
# both without an argument), with tests/deps.sh.  Used by check.sh,
# qemu-test.sh and .ci/run (through "make -C kernel-patch deps").
set -eu

CHECK_PKGS="make gcc perl bc flex bison libssl-dev libelf-dev xz-utils patch
linux-source-6.1 linux-source-6.12"
QEMU_PKGS="libc6-dev binutils qemu-system-x86 busybox-static e2fsprogs linux-perf"

want=
[ $# -gt 0 ] || set -- check qemu-test
for t in "$@"; do
	case $t in
	check) want="$want $CHECK_PKGS" ;;
	qemu-test) want="$want $CHECK_PKGS $QEMU_PKGS" ;;
	*) echo "usage: $0 [check|qemu-test]..." >&2; exit 2 ;;
	esac
done
# shellcheck disable=SC2086
exec sh "$(dirname "$0")/../../tests/deps.sh" $(printf '%s\n' $want | sort -u)
