#!/bin/sh
# Build-id provenance (see tests/provenance.sh) in the default build-id
# mode (buildid_mode = auto) and in buildid_mode = userspace, the mode of
# a kernel that leaks the build-id flag or has no attr.build_id - unless
# auto is userspace on this kernel: then one run covers both (it was two
# tests of 13 s that ran the same thing).
. tests/lib.sh
if [ -z "${PROVENANCE_MODE:-}" ]; then
	: > "$T/empty.conf"
	auto=$("$PERFMAPD" --probe -c "$T/empty.conf" 2>/dev/null |
		sed -n 's/^buildid_mode: \([a-z0-9]*\):.*/\1/p')
	if [ "$auto" = userspace ]; then
		note "buildid_mode = auto is userspace on this kernel: one run covers both"
	else
		note "buildid_mode = auto is ${auto:-unknown} on this kernel: userspace first"
		PROVENANCE_MODE=userspace sh "$0"; rc=$?
		[ "$rc" = 77 ] && skip "buildid_mode = userspace: the run above skipped"
		[ "$rc" = 0 ] || fail "buildid_mode = userspace (above)"
	fi
	MODE=auto
else
	MODE=$PROVENANCE_MODE
fi
. tests/provenance.sh
