#!/bin/sh
# Install the Debian packages perfmapd needs to build and test, if missing;
# with arguments, those packages instead (kernel-patch/scripts/deps.sh).
# clang is make fuzz's alone (it installs it): CI does not fetch it.
# Idempotent: with everything present it only runs dpkg-query.
set -eu

PKGS="gcc make pkg-config libc6-dev
libevent-dev libelf-dev libsqlite3-dev libsystemd-dev libinih-dev libjansson-dev
libarchive-dev libdebuginfod-dev liblzma-dev libzstd-dev debuginfod
check linux-perf binutils elfutils mandoc systemd util-linux procps jq sqlite3
golang-go golang-github-varlink-go-dev fuse3 libfuse3-dev e2fsprogs btrfs-progs
passwd curl xz-utils zstd strace
libdw-dev libprotobuf-c-dev protobuf-c-compiler zlib1g-dev libxml2-utils
golang-github-google-pprof-dev"
[ $# -eq 0 ] || PKGS="$*"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages:$missing (run as root to install them)" >&2
	exit 1
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
